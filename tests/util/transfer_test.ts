/**
 * Early release of transfer buffers (src/util/transfer.ts): it runs only where V8's `gc` is
 * exposed, so the ways the service is started must pass `--expose-gc`.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const PROBE = `import { collectsEarly } from "${new URL("src/util/transfer.ts", ROOT).href}";
console.log(collectsEarly());`;

async function collects(flags: string[]): Promise<boolean> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", ...flags, PROBE],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim() === "true";
}

Deno.test("transfer: collections run with --expose-gc and not without", async () => {
  assert.equal(await collects(["--v8-flags=--expose-gc"]), true);
  assert.equal(await collects([]), false);
});

Deno.test("transfer: deno task start and the image start the service with --expose-gc", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))).tasks;
  for (const name of ["start", "start:example"]) {
    assert.match(tasks[name], /^deno run --v8-flags=--expose-gc /, name);
  }
  const cmd = (await Deno.readTextFile(new URL("Dockerfile", ROOT))).split("\n")
    .find((line) => line.startsWith("CMD "));
  assert.ok(cmd?.includes('"--v8-flags=--expose-gc"'), cmd);
});
