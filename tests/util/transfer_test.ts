/**
 * Early release of transfer buffers (src/util/transfer.ts): it runs only where V8's `gc` is
 * exposed (`--expose-gc`, one of the flags every way of starting the service passes: see
 * tests/util/v8_flags_test.ts).
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
