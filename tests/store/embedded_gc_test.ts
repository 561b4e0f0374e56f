/**
 * Garbage collection while documents pour into the embedded store: the service leaves full
 * collections to V8 (which runs them incrementally, with the heap growth set by the flags of
 * src/util/v8_flags.ts) and never forces one, which would stop the process for the whole
 * marking (half a second at a million documents). MongoDB keeps its documents out of the
 * service's heap: nothing of this applies to that store.
 */
import assert from "node:assert/strict";
import { v8FlagsArgument } from "../../src/util/v8_flags.ts";

const PROBE = new URL("../support/bulk_load_probe.ts", import.meta.url);

Deno.test("embedded store: 21,000 documents loaded through the API force no full collection", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${v8FlagsArgument()},--trace-gc`, PROBE.pathname],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.match(stdout, /^loaded 21000$/m);
  const collections = stdout.split("\n").filter((line) => /: (Scavenge|.*Mark-Compact)/.test(line));
  // The trace is on: the load's garbage shows up as young-generation collections.
  assert.ok(collections.some((line) => line.includes("Scavenge")), stdout.slice(0, 2000));
  // V8 names the reason of a collection a program asks for "testing".
  const forced = collections.filter((line) =>
    line.includes("Mark-Compact") && /testing/.test(line)
  );
  assert.deepEqual(forced, []);
});
