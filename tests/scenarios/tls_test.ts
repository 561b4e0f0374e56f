/**
 * TLS straight from the service (TLS_CERT_FILE, TLS_KEY_FILE), on each store: the command line
 * serves HTTPS on a certificate the test makes with `openssl`, offers HTTP/2 and HTTP/1.1
 * through ALPN, answers requests over both, and refuses to start on unreadable files. Every
 * wait has a deadline.
 */
import assert from "node:assert/strict";
import { STORES, storeSettings } from "../support/harness.ts";
import { runMain, startMain } from "../support/main_process.ts";
import { skipUnless } from "../support/skip.ts";
import { withDeadline } from "../support/wait.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
};

/** Whether `openssl` runs here. */
function hasOpenssl(): boolean {
  try {
    return new Deno.Command("openssl", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}
const OPENSSL = hasOpenssl();

/** Runs `openssl args` (at most 20 s), stdin from `input`; resolves to its output. */
async function openssl(args: string[], input = ""): Promise<{ ok: boolean; out: string }> {
  const child = new Deno.Command("openssl", {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const { success, stdout, stderr } = await child.output();
  const text = new TextDecoder();
  return { ok: success, out: text.decode(stdout) + text.decode(stderr) };
}

/** Runs `openssl args`, which must succeed. */
async function mustOpenssl(args: string[]): Promise<void> {
  const run = await openssl(args);
  assert.ok(run.ok, run.out);
}

/**
 * A test CA and a certificate it signed for 127.0.0.1 and localhost, in `dir` (TLS clients
 * refuse a self-signed CA certificate used as the server's own).
 */
async function makeCertificate(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  const [ca, cert, key] = [`${dir}/ca.pem`, `${dir}/cert.pem`, `${dir}/key.pem`];
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await mustOpenssl([
    "req",
    "-x509",
    ...ec,
    "-days",
    "1",
    "-subj",
    "/CN=restsvc test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign",
    "-keyout",
    `${dir}/ca-key.pem`,
    "-out",
    ca,
  ]);
  await mustOpenssl([
    "req",
    ...ec,
    "-subj",
    "/CN=localhost",
    "-keyout",
    key,
    "-out",
    `${dir}/cert.csr`,
  ]);
  await Deno.writeTextFile(
    `${dir}/cert.ext`,
    "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n" +
      "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
  );
  await mustOpenssl([
    "x509",
    "-req",
    "-in",
    `${dir}/cert.csr`,
    "-CA",
    ca,
    "-CAkey",
    `${dir}/ca-key.pem`,
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    `${dir}/cert.ext`,
    "-out",
    cert,
  ]);
  return { ca, cert, key };
}

/** The protocol the server picks through ALPN when the client offers `protocols`. */
async function alpn(port: number, protocols: string): Promise<string> {
  const { out } = await openssl(
    ["s_client", "-connect", `127.0.0.1:${port}`, "-alpn", protocols, "-servername", "localhost"],
    "Q\n",
  );
  return /ALPN protocol: (\S+)/.exec(out)?.[1] ?? "none";
}

for (const kind of STORES) {
  Deno.test({
    ...skipUnless(
      `[${kind}] TLS_CERT_FILE and TLS_KEY_FILE: HTTPS with HTTP/2 and HTTP/1.1 through ALPN`,
      OPENSSL ? null : "openssl is not installed",
    ),
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const dir = await Deno.makeTempDir({ prefix: "restsvc-tls-" });
      const store = await storeSettings(kind);
      const { ca, cert, key } = await makeCertificate(dir);
      await Deno.writeTextFile(
        `${dir}/settings.json`,
        JSON.stringify({ ...SETTINGS, TLS_CERT_FILE: cert, TLS_KEY_FILE: key }),
      );
      const main = await startMain(`${dir}/settings.json`, { env: store });
      const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(ca)] });
      try {
        assert.match(main.stderr(), new RegExp(`on https://127\\.0\\.0\\.1:${main.port}/`));
        const base = `https://127.0.0.1:${main.port}/`;
        const created = await fetch(`${base}people`, {
          client,
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "ada" }),
        });
        assert.equal(created.status, 201, await created.text());
        const list = await fetch(`${base}people`, { client });
        assert.equal(list.status, 200);
        assert.deepEqual((await list.json())._items.map((p: { name: string }) => p.name), ["ada"]);
        assert.equal(await alpn(main.port, "h2,http/1.1"), "h2");
        assert.equal(await alpn(main.port, "http/1.1"), "http/1.1");
        // Plain HTTP on the TLS port gets no answer the client could mistake for one.
        const plain = await fetch(`http://127.0.0.1:${main.port}/people`).then(
          (res) => res.status,
          () => "refused",
        );
        assert.notEqual(plain, 200);
        main.child.kill("SIGTERM");
        const status = await withDeadline(main.child.status, 10_000, "the process exits");
        assert.equal(status.code, 0, main.stderr());
      } finally {
        client.close();
        await main.kill();
        await Deno.remove(dir, { recursive: true });
        if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
      }
    },
  });
}

Deno.test("TLS files that cannot be read: the command line refuses to start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-tls-" });
  try {
    await Deno.writeTextFile(
      `${dir}/settings.json`,
      JSON.stringify({
        ...SETTINGS,
        TLS_CERT_FILE: `${dir}/missing-cert.pem`,
        TLS_KEY_FILE: `${dir}/missing-key.pem`,
      }),
    );
    const run = await runMain([], {
      SETTINGS: `${dir}/settings.json`,
      STORE: "embedded",
      DATA_DIR: `${dir}/data`,
      PORT: "0",
    });
    const stderr = run.stderr;
    assert.equal(run.code, 1, stderr);
    assert.match(stderr, /refusing to start: cannot read the TLS files: .*missing-cert\.pem/);
    assert.doesNotMatch(stderr, /\n\s+at /, "a stack trace");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
