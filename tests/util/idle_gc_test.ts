/**
 * Through a quiet period the service keeps its heap as the load left it: V8's memory reducer is
 * off (`--no-memory-reducer`, src/util/v8_flags.ts). Left on, it runs full collections that
 * shrink the heap (the young generation to its least, code dropped) half a minute or so after a
 * process falls quiet, and the first seconds of the next load cost two to three times the CPU.
 * The flags are the process's, whichever the store: the probe uses the embedded one.
 */
import assert from "node:assert/strict";
import { V8_FLAGS } from "../../src/util/v8_flags.ts";
import { until } from "../support/wait.ts";

const PROBE = new URL("../support/idle_probe.ts", import.meta.url);
/** The longest the control probe may take to shrink its heap, once idle. */
const CONTROL_DEADLINE_MS = 100_000;
/** A heap "shrunk": below this share of its size when the probe fell idle. */
const SHRUNK = 0.7;

/** A probe run with `flags`: the lines it prints, each with the time it was read. */
function startProbe(flags: readonly string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `--v8-flags=${flags.join(",")}`, PROBE.pathname],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
    signal: AbortSignal.timeout(180_000),
  }).spawn();
  const lines: Array<{ at: number; text: string }> = [];
  const read = (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      for (const text of parts) lines.push({ at: performance.now(), text });
    }
  })();
  return {
    lines,
    /** The first line `test` accepts, waited for at most `ms`. */
    async first(test: (text: string) => boolean, what: string, ms: number) {
      await until(() => lines.some((l) => test(l.text)), what, { ms, everyMs: 50 });
      return lines.find((l) => test(l.text))!;
    },
    async finish() {
      await child.stdin.close();
      const status = await child.status;
      await read;
      return status;
    },
  };
}

/** The size in a probe's `idle N` or `heap N` line. */
const size = (text: string) => Number(text.split(" ")[1]);

Deno.test("v8 flags: an idle service keeps its heap", async () => {
  const withFlags = startProbe(V8_FLAGS);
  const control = startProbe(V8_FLAGS.filter((flag) => flag !== "--no-memory-reducer"));
  try {
    const isIdle = (text: string) => text.startsWith("idle ");
    const idleControl = await control.first(isIdle, "the control probe's idle time", 60_000);
    const idle = await withFlags.first(isIdle, "the probe's idle time", 60_000);
    // Without the flag, V8 shrinks the quiet process's heap: the window below is long enough.
    const limit = size(idleControl.text) * SHRUNK;
    const shrunk = await control.first(
      (text) => text.startsWith("heap ") && size(text) < limit,
      "the control probe's heap shrinking",
      CONTROL_DEADLINE_MS,
    );
    // With it, the same quiet time (and three seconds more) leaves the heap as it was.
    const quiet = shrunk.at - idleControl.at + 3_000;
    const left = idle.at + quiet - performance.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, left)));
    const sizes = withFlags.lines.filter((l) => l.text.startsWith("heap ")).map((l) =>
      size(l.text)
    );
    assert.ok(sizes.length >= quiet / 1000, `${sizes.length} sizes in ${quiet} ms`);
    assert.ok(Math.min(...sizes) >= size(idle.text) * SHRUNK, `${idle.text}: ${sizes.join(" ")}`);
  } finally {
    const [flagged, unflagged] = await Promise.all([withFlags.finish(), control.finish()]);
    assert.equal(flagged.code, 0);
    assert.equal(unflagged.code, 0);
  }
  assert.ok(withFlags.lines.some((l) => l.text === "done"));
});
