/** The command line: help, unknown flags, unreadable settings, --check, a port in use. */
import assert from "node:assert/strict";
import { freePort } from "../support/net.ts";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

/** Runs `src/main.ts` with `args`, killed after 30 s at the latest. */
async function run(args: string[], env: Record<string, string> = {}) {
  const command = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  });
  const out = await command.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr).trim() };
}

/** One line, no stack trace. */
function oneLine(text: string) {
  assert.equal(text.split("\n").length, 1, text);
  assert.doesNotMatch(text, /\n\s+at |Error:/, text);
}

Deno.test("cli: --help lists every flag", async () => {
  const res = await run(["--help"]);
  assert.equal(res.code, 0);
  for (const flag of ["--settings", "--check", "--help"]) assert.ok(res.stdout.includes(flag));
});

Deno.test("cli: an unknown flag is one line and exit 2", async () => {
  const res = await run(["--bogus"]);
  assert.equal(res.code, 2);
  oneLine(res.stderr);
  assert.match(res.stderr, /bogus/);
});

Deno.test("cli: an unreadable settings file is one line and exit 1", async () => {
  const res = await run(["--settings", "/nonexistent/settings.json"]);
  assert.equal(res.code, 1);
  oneLine(res.stderr);
  assert.match(res.stderr, /cannot read \/nonexistent\/settings.json/);
});

Deno.test("cli: --check checks without opening the store", async () => {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-cli-" });
  try {
    const dataDir = `${dir}/data`;
    const ok = await run(["--check"], { DATA_DIR: dataDir, STORE: "embedded" });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /settings are valid/);
    await assert.rejects(() => Deno.stat(dataDir), Deno.errors.NotFound);
    const bad = `${dir}/bad.json`;
    await Deno.writeTextFile(bad, JSON.stringify({ PAGINATON: true }));
    const refused = await run(["--check", "--settings", bad], { DATA_DIR: dataDir });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /PAGINATON: unknown setting \(did you mean PAGINATION\?\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const CONVERTER = new URL("../../src/settings/from_python.ts", import.meta.url).pathname;

Deno.test("cli: an Eve settings.py is read as settings, or refused with line and column", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const good = `${dir}/settings.py`;
    await Deno.writeTextFile(
      good,
      "import os\n# Eve settings\nPORT = 5000\n" +
        'DOMAIN = {"people": {"schema": {"name": {"type": "string"}}}}\n' +
        'MONGO_DBNAME = os.environ.get("EVE_TEST_DB", "apitest")\n',
    );
    const ok = await run(["--check", "--settings", good], { DATA_DIR: dir, STORE: "embedded" });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /settings are valid/);
    const bad = `${dir}/bad.py`;
    await Deno.writeTextFile(bad, "DOMAIN = {}\nimport copy\n");
    const refused = await run(["--check", "--settings", bad], { DATA_DIR: dir });
    assert.equal(refused.code, 1);
    oneLine(refused.stderr);
    assert.match(refused.stderr, /bad\.py, line 2, column 8: only `import os` is accepted/);
    // The converter prints the JSON settings, the environment read.
    const converted = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-env", CONVERTER, good],
      env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", EVE_TEST_DB: "fromenv" },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    assert.equal(converted.code, 0, new TextDecoder().decode(converted.stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(converted.stdout)), {
      PORT: 5000,
      DOMAIN: { people: { schema: { name: { type: "string" } } } },
      MONGO_DBNAME: "fromenv",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: a port in use is one line and exit 1", async () => {
  const port = freePort();
  const taken = Deno.listen({ hostname: "127.0.0.1", port });
  const dir = await Deno.makeTempDir({ prefix: "restsvc-cli-" });
  try {
    const res = await run([], { PORT: String(port), DATA_DIR: dir, STORE: "embedded" });
    assert.equal(res.code, 1);
    const last = res.stderr.split("\n").at(-1)!;
    assert.match(
      last,
      new RegExp(`cannot listen on 127.0.0.1:${port}: the address is already in use`),
    );
    assert.doesNotMatch(res.stderr, /\n\s+at /);
  } finally {
    taken.close();
    await Deno.remove(dir, { recursive: true });
  }
});
