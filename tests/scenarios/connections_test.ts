/**
 * Connections to the service on `Deno.serve`, at the byte level, on each store: pipelined and
 * chunked requests served in turn; a chunked body ending `0\r\n` followed by a request is not
 * served as two requests; a client cannot choose its own address with a header; the minimum
 * request-body data rate (MIN_REQUEST_BODY_RATE) answers a trickled body 408 (Connection:
 * close), while a slow but steady upload is not cut; the former server settings are
 * refused, naming what replaced them. Every wait has a deadline.
 */
import assert from "node:assert/strict";
import { createService, SettingsError } from "../../src/mod.ts";
import { createLogger } from "../../src/log.ts";
import { startServer } from "../../src/http/server.ts";
import { SANITIZED, scenario, type StoreKind, STORES, storeSettings } from "../support/harness.ts";
import { closeQuietly, readAnswer, readUntilClosed } from "../support/net.ts";
import { runMain } from "../support/main_process.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
  // A short grace period keeps the rate scenarios fast (the default is 5 s).
  MIN_REQUEST_BODY_RATE: 240,
  MIN_REQUEST_BODY_RATE_GRACE_MS: 1000,
};

const encode = (s: string) => new TextEncoder().encode(s);

/** A raw connection to the service at `url`. */
function connect(url: string): Promise<Deno.Conn> {
  return Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(url).port) });
}

/**
 * Writes `bytes` one slice of `step` bytes every `everyMs`, until all are written, the peer
 * closes, or `ms` pass; resolves to how many bytes were written.
 */
export async function trickle(
  conn: Deno.Conn,
  bytes: Uint8Array,
  options: { step: number; everyMs: number; ms: number },
): Promise<number> {
  const deadline = Date.now() + options.ms;
  let at = 0;
  while (at < bytes.length && Date.now() < deadline) {
    try {
      await conn.write(bytes.subarray(at, at + options.step));
    } catch {
      break; // closed by the peer
    }
    at = Math.min(bytes.length, at + options.step);
    if (at < bytes.length) await new Promise((r) => setTimeout(r, options.everyMs));
  }
  return at;
}

scenario("pipelined and chunked requests are served in turn", SETTINGS, async (_api, running) => {
  const conn = await connect(running.url);
  await conn.write(encode(
    "POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
      'Transfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\n9\r\ne":"ann"}\r\n0\r\n\r\n' +
      "GET /people HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  ));
  const { text, closed } = await readUntilClosed(conn, 3000);
  closeQuietly(conn);
  assert.ok(closed);
  assert.match(text, /^HTTP\/1\.1 201/);
  assert.match(text, /HTTP\/1\.1 200[\s\S]*"name":"ann"/);
});

scenario(
  "a chunked body ending 0 CRLF then a request: the request is not served (no trailer smuggling)",
  SETTINGS,
  async (api, running) => {
    const conn = await connect(running.url);
    // "0\r\n" without the final CRLF: the next lines are trailer fields, not a request.
    await conn.write(encode(
      "POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
        'Transfer-Encoding: chunked\r\n\r\nd\r\n{"name":"ann"}\r\n0\r\n' +
        'POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"name":"eve"}\n',
    ));
    const { text } = await readUntilClosed(conn, 2000);
    closeQuietly(conn);
    assert.ok((text.match(/HTTP\/1\.1 20\d/g) ?? []).length <= 1, text);
    const list = await api.get("people");
    const names = list.body._items.map((p: { name: string }) => p.name);
    assert.ok(!names.includes("eve"), `the smuggled request was served: ${names}`);
  },
);

for (const kind of STORES) {
  Deno.test({
    name: `[${kind}] the client address in logs is the socket peer, whatever the headers say`,
    sanitizeOps: SANITIZED[kind],
    sanitizeResources: SANITIZED[kind],
    async fn() {
      const store = await storeSettings(kind);
      const records: Record<string, unknown>[] = [];
      const service = await createService({ ...SETTINGS, ...store }, {
        env: false,
        logger: createLogger((r) => records.push(r)),
      });
      const server = await startServer(service.fetch, { hostname: "127.0.0.1", port: 0 });
      try {
        const res = await fetch(`http://127.0.0.1:${server.addr.port}/people`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-eve-internal-client-addr": "6.6.6.6 1",
            "x-forwarded-for": "7.7.7.7",
          },
          body: JSON.stringify({ name: "bob" }),
        });
        await res.body?.cancel();
        assert.equal(res.status, 201);
        const ips = records.filter((r) => "clientip" in r).map((r) => r.clientip);
        assert.ok(ips.length > 0);
        assert.ok(ips.every((ip) => ip === "127.0.0.1"), JSON.stringify(ips));
      } finally {
        await server.shutdown();
        await service.close();
        if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
      }
    },
  });
}

/** A request head for a JSON POST of `length` bytes to /people. */
const jsonHead = (length: number) =>
  `POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

scenario(
  "a body trickled a byte at a time is answered 408, Connection: close",
  SETTINGS,
  async (api, running) => {
    const body = encode(JSON.stringify({ name: "x".repeat(200) }));
    const conn = await connect(running.url);
    const t0 = performance.now();
    await conn.write(encode(jsonHead(body.length)));
    const sending = trickle(conn, body, { step: 1, everyMs: 400, ms: 6000 });
    const answer = await readAnswer(conn, 6000);
    const ms = performance.now() - t0;
    closeQuietly(conn);
    await sending;
    assert.ok(answer.complete, answer.text);
    assert.match(answer.text, /^HTTP\/1\.1 408/, answer.text);
    assert.match(answer.text, /MIN_REQUEST_BODY_RATE/);
    // The service reads no more of it and asks for the connection to be closed: Deno.serve
    // gives it no way to close it, the reverse proxy in front does (tests/deploy/nginx_test.ts).
    assert.match(answer.text, /\r\nconnection: close\r\n/i);
    // Cut soon after the 1 s grace period, long before the body could have arrived.
    assert.ok(ms < 3000, `cut after ${ms.toFixed(0)} ms`);
    // Nothing was stored, and the service answers others at once.
    const list = await api.get("people");
    assert.equal(list.status, 200);
    assert.equal(list.body._meta.total, 0);
  },
);

scenario(
  "a multipart body trickled a byte at a time is answered 408 and nothing is stored",
  SETTINGS,
  async (api, running) => {
    const boundary = "b0undary";
    const body = encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${"y".repeat(100)}\r\n` +
        `--${boundary}--\r\n`,
    );
    const conn = await connect(running.url);
    await conn.write(encode(
      "POST /people HTTP/1.1\r\nHost: x\r\n" +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`,
    ));
    const sending = trickle(conn, body, { step: 1, everyMs: 400, ms: 6000 });
    const answer = await readAnswer(conn, 6000);
    closeQuietly(conn);
    await sending;
    assert.match(answer.text, /^HTTP\/1\.1 408/, answer.text);
    assert.match(answer.text, /\r\nconnection: close\r\n/i);
    assert.equal((await api.get("people")).body._meta.total, 0);
  },
);

scenario(
  "a slow but steady upload (above the minimum rate) is not cut",
  SETTINGS,
  async (api, running) => {
    // ~600 bytes per second for ~3 s: well past the grace period, above 240 bytes per second.
    const body = encode(JSON.stringify({ name: "z".repeat(1800) }));
    const conn = await connect(running.url);
    await conn.write(encode(jsonHead(body.length)));
    const [written, answer] = await Promise.all([
      trickle(conn, body, { step: 60, everyMs: 100, ms: 10_000 }),
      readUntilClosed(conn, 10_000),
    ]);
    closeQuietly(conn);
    assert.equal(written, body.length);
    assert.match(answer.text, /^HTTP\/1\.1 201/, answer.text);
    const list = await api.get("people");
    assert.equal(list.body._items[0].name.length, 1800);
  },
);

scenario(
  "MIN_REQUEST_BODY_RATE 0 turns the rule off",
  { ...SETTINGS, MIN_REQUEST_BODY_RATE: 0 },
  async (_api, running) => {
    const body = encode(JSON.stringify({ name: "w" }));
    const conn = await connect(running.url);
    await conn.write(encode(jsonHead(body.length)));
    // Slower than the rule would allow (8 bytes over ~2.8 s, past the 1 s grace period).
    const [, answer] = await Promise.all([
      trickle(conn, body, { step: 2, everyMs: 700, ms: 10_000 }),
      readUntilClosed(conn, 6000),
    ]);
    closeQuietly(conn);
    assert.match(answer.text, /^HTTP\/1\.1 201/, answer.text);
  },
);

/** The settings problems of `extra`, or [] when the service starts. */
async function problemsOf(kind: StoreKind, extra: Record<string, unknown>): Promise<string[]> {
  const store = await storeSettings(kind);
  try {
    const service = await createService({ ...SETTINGS, ...store, ...extra }, { env: false });
    await service.close();
    return [];
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  } finally {
    if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
  }
}

for (const kind of STORES) {
  Deno.test({
    name: `[${kind}] the former server settings are refused, naming what replaced them`,
    sanitizeOps: SANITIZED[kind],
    sanitizeResources: SANITIZED[kind],
    async fn() {
      const replaced: Record<string, RegExp> = {
        SERVER_FRONT: /SERVER_FRONT: no longer exists: .*Deno\.serve.*deploy\/nginx\.conf/,
        SERVER_HEADERS_TIMEOUT_MS: /SERVER_HEADERS_TIMEOUT_MS: .*client_header_timeout/,
        SERVER_IDLE_TIMEOUT_MS:
          /SERVER_IDLE_TIMEOUT_MS: .*keepalive_timeout.*MIN_REQUEST_BODY_RATE/,
        SERVER_MAX_CONNECTIONS: /SERVER_MAX_CONNECTIONS: .*limit_conn/,
      };
      for (const [key, message] of Object.entries(replaced)) {
        for (const value of [true, false, 1000, "x"]) {
          const problems = await problemsOf(kind, { [key]: value });
          assert.equal(problems.length, 1, `${key}=${value}: ${problems}`);
          assert.match(problems[0], message);
        }
      }
      for (
        const [extra, message] of [
          [{ MIN_REQUEST_BODY_RATE: -1 }, /MIN_REQUEST_BODY_RATE: must be 0 or more/],
          [{ TLS_CERT_FILE: "cert.pem" }, /TLS_CERT_FILE, TLS_KEY_FILE: give both/],
          [{ TLS_KEY_FILE: "key.pem" }, /TLS_CERT_FILE, TLS_KEY_FILE: give both/],
        ] as const
      ) {
        const problems = await problemsOf(kind, extra);
        assert.equal(problems.length, 1, String(problems));
        assert.match(problems[0], message);
      }
    },
  });

  Deno.test({
    name: `[${kind}] the command line refuses to start with SERVER_FRONT`,
    sanitizeOps: SANITIZED[kind],
    sanitizeResources: SANITIZED[kind],
    async fn() {
      const dir = await Deno.makeTempDir({ prefix: "restsvc-front-" });
      const store = await storeSettings(kind);
      try {
        await Deno.writeTextFile(
          `${dir}/settings.json`,
          JSON.stringify({ ...SETTINGS, SERVER_FRONT: false, SERVER_MAX_CONNECTIONS: 10 }),
        );
        const env = Object.fromEntries(Object.entries(store).map(([k, v]) => [k, String(v)]));
        const run = await runMain(["--settings", `${dir}/settings.json`], { ...env, PORT: "0" });
        const stderr = run.stderr;
        assert.equal(run.code, 1, stderr);
        assert.match(stderr, /refusing to start: .* has 2 problem\(s\)/);
        assert.match(stderr, /SERVER_FRONT: no longer exists/);
        assert.match(stderr, /SERVER_MAX_CONNECTIONS: no longer exists/);
      } finally {
        await Deno.remove(dir, { recursive: true });
        if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
      }
    },
  });
}
