/** Structured log records: levels, request context, error rendering. */
import assert from "node:assert/strict";
import { createLogger, describeError, logContext, withLogContext } from "../../src/log.ts";

Deno.test("records below the minimum level are dropped", () => {
  const records: Record<string, unknown>[] = [];
  const log = createLogger((r) => records.push(r), "warn");
  log.log("info", "quiet");
  log.log("warn", "loud", { n: 1 });
  assert.equal(records.length, 1);
  assert.equal(records[0].level, "warn");
  assert.equal(records[0].message, "loud");
  assert.equal(records[0].n, 1);
  assert.match(String(records[0].time), /^\d{4}-\d\d-\d\dT/);
});

Deno.test("records written inside withLogContext carry the request fields, across awaits", async () => {
  const records: Record<string, unknown>[] = [];
  const log = createLogger((r) => records.push(r));
  const fields = { clientip: "1.2.3.4", url: "http://h/a?b=c", method: "POST" };
  await withLogContext(fields, async () => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    assert.deepEqual(logContext(), fields);
    log.log("info", "inside");
  });
  log.log("info", "outside");
  assert.equal(logContext(), undefined);
  assert.deepEqual(
    records.map((r) => [r.message, r.clientip, r.url, r.method]),
    [["inside", "1.2.3.4", "http://h/a?b=c", "POST"], ["outside", undefined, undefined, undefined]],
  );
});

Deno.test("describeError gives the stack, or the value as text", () => {
  assert.match(describeError(new RangeError("r")), /^RangeError: r\n\s+at /);
  assert.equal(describeError("plain"), "plain");
});

/** Runs a script importing src/log.ts in a child process and returns its stderr lines. */
async function stderrLinesOf(script: string): Promise<string[]> {
  const logModule = new URL("../../src/log.ts", import.meta.url).href;
  const code = `import { createLogger, flushLog } from ${JSON.stringify(logModule)};\n${script}`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdout: "null",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(out.stderr).split("\n").filter((line) => line !== "");
}

Deno.test("stderr lines batched in a turn come out before a direct line written after flushLog", async () => {
  const lines = await stderrLinesOf(
    `const log = createLogger(); log.log("info", "batched"); flushLog(); console.error("direct");`,
  );
  assert.equal(lines.length, 2);
  assert.equal(JSON.parse(lines[0]).message, "batched");
  assert.equal(lines[1], "direct");
});

Deno.test("batched stderr lines still pending at Deno.exit are written", async () => {
  const lines = await stderrLinesOf(
    `const log = createLogger(); log.log("info", "one"); log.log("warn", "two"); Deno.exit(3);`,
  );
  assert.deepEqual(lines.map((line) => JSON.parse(line).message), ["one", "two"]);
});

/** Runs `code` (a module importing the logger) in its own process; its stderr's records. */
async function stderrOf(code: string): Promise<Array<Record<string, unknown>>> {
  const logModule = new URL("../../src/log.ts", import.meta.url).href;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `import { createLogger } from "${logModule}";\n${code}`],
    stdout: "null",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const text = new TextDecoder().decode(out.stderr);
  return text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

Deno.test("stderr gets every record in order: batched lines, errors at once, lines left at exit", async () => {
  const records = await stderrOf(`
    const log = createLogger();
    log.log("info", "a");
    log.log("info", "b");
    await new Promise((r) => setTimeout(r, 50));
    log.log("info", "c");
    log.log("error", "d");
    log.log("info", "e");
    for (let n = 0; n < 2000; n++) log.log("info", "bulk", { n, pad: "x".repeat(40) });
    log.log("info", "f");
    Deno.exit(0);
  `);
  const messages = records.map((r) => r.message).filter((m) => m !== "bulk");
  assert.deepEqual(messages, ["a", "b", "c", "d", "e", "f"]);
  assert.equal(records.filter((r) => r.message === "bulk").length, 2000);
  assert.deepEqual(
    records.filter((r) => r.message === "bulk").map((r) => r.n),
    Array.from({ length: 2000 }, (_, n) => n),
  );
});

Deno.test("a line waiting to be written keeps no process alive, and is written as it ends", async () => {
  // A process kept alive would be stopped by stderrOf's deadline, and the test fail.
  const records = await stderrOf(`createLogger().log("info", "last");`);
  assert.deepEqual(records.map((r) => r.message), ["last"]);
});
