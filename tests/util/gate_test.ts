import assert from "node:assert/strict";
import { Gate } from "../../src/util/gate.ts";

Deno.test("gate: at most its limit at a time, the others in the order they came", async () => {
  const gate = new Gate(2);
  let inFlight = 0;
  let most = 0;
  const started: number[] = [];
  const results = await Promise.all(Array.from({ length: 7 }, (_, n) =>
    gate.run(async () => {
      started.push(n);
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1 + (n % 3)));
      inFlight--;
      return n * 10;
    })));
  assert.deepEqual(results, [0, 10, 20, 30, 40, 50, 60]);
  assert.equal(most, 2);
  assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6]);
});

Deno.test("gate: a failing task frees its place and keeps its error", async () => {
  const gate = new Gate(1);
  const failed = gate.run(() => Promise.reject(new Error("boom")));
  const next = gate.run(() => Promise.resolve("after"));
  await assert.rejects(failed, /boom/);
  assert.equal(await next, "after");
  // Places freed with nobody waiting are taken again at once.
  assert.equal(await gate.run(() => Promise.resolve(1)), 1);
});

Deno.test("gate: a limit below one is refused", () => {
  for (const limit of [0, -1, NaN]) assert.throws(() => new Gate(limit), RangeError);
});
