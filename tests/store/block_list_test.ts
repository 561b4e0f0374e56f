/** The blocked sorted list behind sorted views answers as one sorted array would. */
import assert from "node:assert/strict";
import { BlockList } from "../../src/store/embedded/block_list.ts";

interface Item {
  key: number;
  id: number;
}

const compare = (a: Item, b: Item) => a.key - b.key || a.id - b.id;

Deno.test("BlockList: inserts, removals, positions and slices agree with a sorted array", () => {
  let x = 12345;
  const random = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % n;
  };
  const start = Array.from({ length: 3000 }, (_, id) => ({ key: random(500), id })).sort(compare);
  const list = new BlockList(compare, start);
  let model = [...start];
  let nextId = 3000;
  for (let step = 0; step < 6000; step++) {
    if (random(3) === 0 && model.length > 0) {
      const gone = model[random(model.length)];
      // Sometimes looked for under a stale key: found anyway.
      const probe = random(4) === 0 ? { key: gone.key + 1, id: gone.id } : gone;
      assert.ok(list.remove(probe, (e) => e.id === gone.id));
      model = model.filter((e) => e !== gone);
    } else {
      // Clustered keys grow some blocks past their split size.
      const item = { key: step % 7 === 0 ? 250 : random(500), id: nextId++ };
      list.insert(item);
      model.push(item);
      model.sort(compare);
    }
    if (step % 500 === 0) assert.deepEqual([...list], model, `step ${step}`);
  }
  assert.deepEqual(list.toArray(), model);
  assert.equal(list.size, model.length);
  assert.equal(list.remove({ key: 1, id: -1 }, (e) => e.id === -1), false);
  for (const key of [-1, 0, 100, 250, 251, 499, 500]) {
    const expected = model.findIndex((e) => e.key >= key);
    assert.equal(list.firstWhere((e) => e.key >= key), expected < 0 ? model.length : expected);
  }
  for (const [a, b] of [[0, 10], [400, 1700], [model.length - 5, model.length], [7, 7]]) {
    assert.deepEqual(list.slice(a, b), model.slice(a, b));
  }
});

Deno.test("BlockList: an empty list, and one emptied", () => {
  const list = new BlockList<Item>(compare);
  assert.equal(list.size, 0);
  assert.equal(list.firstWhere(() => true), 0);
  assert.equal(list.remove({ key: 1, id: 1 }, () => true), false);
  list.insert({ key: 1, id: 1 });
  assert.ok(list.remove({ key: 1, id: 1 }, (e) => e.id === 1));
  assert.deepEqual([...list], []);
  list.insert({ key: 2, id: 2 });
  assert.deepEqual(list.slice(0, 5), [{ key: 2, id: 2 }]);
});
