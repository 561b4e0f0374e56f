import assert from "node:assert/strict";
import { inNaturalOrder } from "../../src/store/embedded/state.ts";

Deno.test("inNaturalOrder: keys come in the order of their sequence numbers", () => {
  const ids = ["c", "a", "d", "b", "e"];
  assert.deepEqual(inNaturalOrder(ids, [30, 10, 40, 20, 0]), ["e", "a", "b", "c", "d"]);
  assert.deepEqual(inNaturalOrder(["x"], [5]), ["x"]);
  assert.deepEqual(inNaturalOrder([], []), []);
});

Deno.test("inNaturalOrder: numbers too large to pack are compared instead", () => {
  const big = 2 ** 40;
  const ids = ["late", "early", "middle"];
  assert.deepEqual(inNaturalOrder(ids, [big + 2, big, big + 1]), ["early", "middle", "late"]);
});

Deno.test("inNaturalOrder: agrees with a comparing sort on many keys", () => {
  const n = 5000;
  const seqs = Array.from({ length: n }, (_, i) => (i * 7919) % 100_003);
  const ids = seqs.map((s) => `k${s}`);
  const expected = [...ids].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  assert.deepEqual(inNaturalOrder(ids, Float64Array.from(seqs)), expected);
});
