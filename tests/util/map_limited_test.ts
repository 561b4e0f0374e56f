import assert from "node:assert/strict";
import { mapLimited } from "../../src/util/map_limited.ts";

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("mapLimited: results in order, at most `limit` calls at a time", async () => {
  let inFlight = 0;
  let most = 0;
  const started: number[] = [];
  const results = await mapLimited([0, 1, 2, 3, 4, 5, 6], 3, async (n) => {
    started.push(n);
    most = Math.max(most, ++inFlight);
    await tick(1 + ((n * 7) % 3));
    inFlight--;
    return n * 10;
  });
  assert.deepEqual(results, [0, 10, 20, 30, 40, 50, 60]);
  assert.equal(most, 3);
  assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6]);
});

Deno.test("mapLimited: none and one item", async () => {
  let calls = 0;
  assert.deepEqual(await mapLimited([], 4, () => Promise.resolve(calls++)), []);
  assert.deepEqual(await mapLimited(["a"], 4, (s) => Promise.resolve(s + calls++)), ["a0"]);
  // A limit below one still makes progress, one at a time.
  assert.deepEqual(await mapLimited([1, 2], 0, (n) => Promise.resolve(n * 2)), [2, 4]);
});

Deno.test("mapLimited: after a failure no new call starts, and the error is thrown", async () => {
  const started: number[] = [];
  const failing = mapLimited(Array.from({ length: 20 }, (_, i) => i), 2, async (n) => {
    started.push(n);
    await tick(1);
    if (n === 3) throw new Error("boom");
    return n;
  });
  await assert.rejects(failing, /boom/);
  await tick(20);
  // 3 failed while 4 ran beside it; nothing after 4 started.
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
});
