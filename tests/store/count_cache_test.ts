/**
 * The embedded store remembers whole counts of filters of plain data until the collection's
 * documents change: every write, update, replacement and deletion shows in the next count;
 * filters running code or reading the clock are counted every time.
 */
import assert from "node:assert/strict";
import { countKey, MAX_KEY } from "../../src/store/embedded/count_cache.ts";
import { Decimal128, ObjectId } from "../../src/doc/bson.ts";
import { Code } from "mongodb";
import { withStore } from "../support/embedded.ts";

Deno.test("count cache: keys tell types apart; code, expressions and samples have none", () => {
  const id = new ObjectId();
  const keys = [
    { a: 1 },
    { a: "1" },
    { a: 1.5 },
    { a: id },
    { a: id.toHexString() },
    { a: new Date(0) },
    { a: { $gt: 1 } },
    { a: /x/i },
    { a: /x/ },
    { a: Decimal128.fromString("1") },
    { $or: [{ a: 1 }, { b: 2 }] },
  ].map((f) => countKey(f));
  assert.ok(keys.every((k) => k !== undefined));
  assert.equal(new Set(keys).size, keys.length);
  assert.equal(countKey({ a: 1 }), keys[0]);
  const refused = [
    { $where: "this.a > 1" },
    { $where: () => true },
    { $expr: { $gt: ["$a", "$$NOW"] } },
    { a: { $elemMatch: { $expr: { $eq: [1, 1] } } } },
    { $sampleRate: 0.5 },
    { $text: { $search: "x" } },
    { a: new Code("1") },
    { a: () => 1 },
    { a: 1n },
    { a: new Map() },
    { a: "x".repeat(MAX_KEY) },
  ];
  for (const filter of refused) assert.equal(countKey(filter), undefined, String(filter));
  let deep: Record<string, unknown> = { a: 1 };
  for (let i = 0; i < 40; i++) deep = { $and: [deep] };
  assert.equal(countKey(deep), undefined);
});

Deno.test("count cache: a remembered count follows every change to the collection", () =>
  withStore(async (store) => {
    const c = store.collection("people");
    await c.insertMany(Array.from({ length: 10 }, (_, n) => ({ n, even: n % 2 === 0 })));
    const filter = { n: { $gte: 5 } };
    assert.equal(await c.count(filter), 5);
    assert.equal(await c.count({ n: { $gte: 5 } }), 5);
    await c.insertMany([{ n: 10 }]);
    assert.equal(await c.count(filter), 6);
    await c.updateOne({ n: 10 }, { $set: { n: 1 } });
    assert.equal(await c.count(filter), 5);
    await c.replaceOne({ n: 1, even: { $exists: false } }, { n: 11 });
    assert.equal(await c.count(filter), 6);
    await c.deleteOne({ n: 11 });
    assert.equal(await c.count(filter), 5);
    await c.deleteMany({ n: { $gte: 8 } });
    assert.equal(await c.count(filter), 3);
    // Skip and limit apply to the remembered whole count; a bounded count is its own.
    assert.equal(await c.count(filter, { skip: 1 }), 2);
    assert.equal(await c.count(filter, { limit: 2 }), 2);
    assert.equal(await c.count({ even: true }), 4);
    await c.drop();
    assert.equal(await c.count(filter), 0);
    await c.insertMany([{ n: 9 }]);
    assert.equal(await c.count(filter), 1);
  }));
