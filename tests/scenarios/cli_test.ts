/** The command line: help, unknown flags, unreadable settings, --check, a port in use. */
import assert from "node:assert/strict";
import { freePort } from "../support/net.ts";
import { runMain } from "../support/main_process.ts";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
const run = runMain;

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

Deno.test("cli: --check refuses a PORT that is not a TCP port", async () => {
  for (const port of ["99999", "-1"]) {
    const res = await run(["--check"], { PORT: port, STORE: "embedded" });
    assert.equal(res.code, 1, res.stdout);
    assert.match(res.stderr, new RegExp(`PORT: ${port} is not a TCP port \\(0 to 65535`));
  }
  const ok = await run(["--check"], { PORT: "0", STORE: "embedded" });
  assert.equal(ok.code, 0, ok.stderr);
});

Deno.test("cli: a YAML settings file is refused as YAML, naming what works", async () => {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-cli-" });
  try {
    for (const name of ["settings.yaml", "settings.yml"]) {
      await Deno.writeTextFile(`${dir}/${name}`, "DOMAIN:\n  people: {}\n");
      const res = await run(["--check", "--settings", `${dir}/${name}`]);
      assert.equal(res.code, 1);
      oneLine(res.stderr);
      assert.match(res.stderr, /YAML is not supported; write the settings as JSON \(\.json\)/);
      assert.doesNotMatch(res.stderr, /must export/);
    }
    await Deno.writeTextFile(`${dir}/settings.toml`, "");
    const toml = await run(["--check", "--settings", `${dir}/settings.toml`]);
    assert.equal(toml.code, 1);
    assert.match(toml.stderr, /unknown file type "\.toml"; use JSON/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: a data directory that cannot be one is named as such", async () => {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-cli-" });
  try {
    const file = `${dir}/a-file`;
    await Deno.writeTextFile(file, "");
    const env = { STORE: "embedded", PORT: String(freePort()) };
    const isFile = await run([], { ...env, DATA_DIR: file });
    assert.equal(isFile.code, 1);
    oneLine(isFile.stderr);
    assert.match(isFile.stderr, /data directory .*a-file exists and is not a directory/);
    const under = await run([], { ...env, DATA_DIR: `${file}/data` });
    assert.equal(under.code, 1);
    oneLine(under.stderr);
    assert.match(under.stderr, /a part of that path is a file, not a directory/);
    for (const res of [isFile, under]) {
      assert.doesNotMatch(res.stderr, /os error|unable to open|allow-all/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: a data directory the process may not write is named as such", async () => {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-cli-" });
  try {
    // Deno's own permissions: write access elsewhere only (file modes cannot refuse root).
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-env",
        "--allow-net",
        "--allow-sys",
        `--allow-write=${dir}/elsewhere`,
        MAIN,
      ],
      env: {
        DENO_NO_UPDATE_CHECK: "1",
        NO_COLOR: "1",
        STORE: "embedded",
        DATA_DIR: `${dir}/data`,
        PORT: String(freePort()),
      },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    const stderr = new TextDecoder().decode(out.stderr).trim();
    assert.equal(out.code, 1, stderr);
    oneLine(stderr);
    assert.match(stderr, /data directory .*data: this process may not read and write it/);
    assert.doesNotMatch(stderr, /allow-all|os error/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: hash-password hashes its argument, standard input, and refuses two", async () => {
  const { compareSync } = await import("bcryptjs");
  const task = async (args: string[], stdin?: string) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["task", "-q", "hash-password", ...args],
      cwd: new URL("../../", import.meta.url).pathname,
      env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      stdin: stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).spawn();
    if (stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(stdin));
      await writer.close();
    }
    const out = await child.output();
    const decode = (b: Uint8Array) => new TextDecoder().decode(b).trim();
    return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
  };
  const fromArg = await task(["s3cret word"]);
  assert.equal(fromArg.code, 0, fromArg.stderr);
  assert.ok(compareSync("s3cret word", fromArg.stdout), fromArg.stdout);
  assert.ok(!compareSync("other", fromArg.stdout));
  const fromStdin = await task([], "piped-secret\n");
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  assert.ok(compareSync("piped-secret", fromStdin.stdout), fromStdin.stdout);
  const two = await task(["a", "b"]);
  assert.equal(two.code, 2);
  assert.match(two.stderr, /give one password/);
  const none = await task([], "");
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no password given/);
});
