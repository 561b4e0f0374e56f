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
