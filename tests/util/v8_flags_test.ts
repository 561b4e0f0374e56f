/**
 * The V8 flags of src/util/v8_flags.ts: every way the service is started passes them, and the
 * runtime accepts them.
 */
import assert from "node:assert/strict";
import { v8FlagsArgument } from "../../src/util/v8_flags.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("v8 flags: deno task start and start:example pass them", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))).tasks;
  for (const name of ["start", "start:example"]) {
    assert.ok(tasks[name].startsWith(`deno run ${v8FlagsArgument()} `), `${name}: ${tasks[name]}`);
  }
});

Deno.test("v8 flags: the image's command passes them", async () => {
  const cmd = (await Deno.readTextFile(new URL("Dockerfile", ROOT))).split("\n")
    .find((line) => line.startsWith("CMD "));
  assert.ok(cmd?.includes(`"${v8FlagsArgument()}"`), cmd);
});

Deno.test("v8 flags: the runtime takes them without a word", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", v8FlagsArgument(), "console.log(typeof globalThis.gc)"],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.equal(stderr, "");
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "function");
  // A flag V8 does not know stops the runtime: the check above would catch a renamed one.
  const unknown = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--heap-growing-percentage=100", "0"],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  assert.notEqual(unknown.code, 0);
});
