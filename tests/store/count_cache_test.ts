/**
 * The embedded store remembers whole counts of filters, and results of pipelines, of plain
 * data until the collection's documents change: every write, update, replacement and deletion
 * shows in the next count or result; filters and pipelines running code, reading the clock or
 * other collections are run every time.
 */
import assert from "node:assert/strict";
import {
  countKey,
  MAX_KEY,
  MAX_RESULT_VALUES,
  pipelineKey,
  smallResult,
} from "../../src/store/embedded/count_cache.ts";
import { Decimal128, ObjectId } from "../../src/doc/bson.ts";
import { Code } from "mongodb";
import { withStore } from "../support/embedded.ts";
import type { Filter } from "../../src/store/store.ts";

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

Deno.test("count cache: pages of a counted filter are the pages a scan finds, after every change", () =>
  withStore(async (store) => {
    const c = store.collection("people");
    await c.insertMany(Array.from({ length: 60 }, (_, n) => ({ _id: n, n: n % 7, tag: "t" })));
    const filter = { n: { $gte: 3 } };
    // The same filter, not remembered ($expr): always a scan from the first document.
    const scanned = { $and: [filter, { $expr: { $eq: [1, 1] } }] };
    const pages = async (f: Filter) => {
      const out: unknown[][] = [];
      for (const [skip, limit] of [[0, 5], [5, 5], [20, 7], [30, 100], [200, 5], [3, 0]]) {
        out.push((await c.find(f, { skip, limit })).map((d) => d._id));
      }
      return out;
    };
    const check = async (label: string) => {
      const expected = await pages(scanned);
      assert.equal(await c.count(filter), await c.count(scanned), label);
      assert.deepEqual(await pages(filter), expected, label);
      // Copies are handed out: changing one changes neither the store nor the next page.
      const [first] = await c.find(filter, { limit: 1 });
      first.n = -1;
      assert.deepEqual(await pages(filter), expected, `${label}, after a change to a copy`);
    };
    await check("fresh");
    await c.insertMany([{ _id: 100, n: 6 }]);
    await check("after an insert");
    await c.updateOne({ _id: 4 }, { $set: { n: 0 } });
    await check("after an update");
    await c.replaceOne({ _id: 10 }, { n: 1 });
    await check("after a replacement");
    await c.deleteMany({ _id: { $lt: 6 } });
    await check("after deletions");
  }));

Deno.test("count cache: pipelines reading other collections, the clock, code or samples have no key", () => {
  const kept = [
    [{ $match: { a: 1 } }, { $group: { _id: "$s", n: { $sum: 1 } } }],
    [{ $match: { $expr: { $gt: ["$a", "$b"] } } }],
    [{ $project: { d: { $dateToString: { date: "$t", format: "%Y" } } } }],
  ].map((p) => pipelineKey(p));
  assert.ok(kept.every((k) => k !== undefined));
  assert.equal(new Set(kept).size, kept.length);
  const refused = [
    [{ $lookup: { from: "b", localField: "x", foreignField: "_id", as: "y" } }],
    [{ $unionWith: "b" }],
    [{ $graphLookup: { from: "b" } }],
    [{ $match: { a: 1 } }, { $out: "c" }],
    [{ $merge: { into: "c" } }],
    [{ $sample: { size: 2 } }],
    [{ $match: { $expr: { $lt: ["$t", "$$NOW"] } } }],
    [{ $project: { r: { $rand: {} } } }],
    [{ $group: { _id: null, f: { $accumulator: {} } } }],
    [{ $addFields: { f: { $function: { body: "x", args: [], lang: "js" } } } }],
    [{ $facet: { a: [{ $lookup: { from: "b", as: "y" } }] } }],
    [{ $match: { a: new Code("1") } }],
  ];
  for (const pipeline of refused) {
    assert.equal(pipelineKey(pipeline), undefined, JSON.stringify(pipeline));
  }
});

Deno.test("count cache: results are bounded by their values", () => {
  assert.ok(smallResult([{ a: 1, b: [1, 2, 3] }]));
  assert.ok(!smallResult([{ all: Array.from({ length: MAX_RESULT_VALUES }, (_, n) => n) }]));
});

Deno.test("count cache: a remembered aggregation follows every change, and hands out copies", () =>
  withStore(async (store) => {
    const c = store.collection("orders");
    await c.insertMany([{ s: "open", t: 1 }, { s: "open", t: 2 }, { s: "paid", t: 5 }]);
    const pipeline = [
      { $match: { t: { $gte: 1 } } },
      { $group: { _id: "$s", total: { $sum: "$t" } } },
      { $sort: { _id: 1 } },
    ];
    const totals = async () => (await c.aggregate(pipeline)).map((d) => [d._id, d.total]);
    assert.deepEqual(await totals(), [["open", 3], ["paid", 5]]);
    const first = await c.aggregate(pipeline);
    first[0].total = 999;
    assert.deepEqual(await totals(), [["open", 3], ["paid", 5]]);
    await c.insertMany([{ s: "paid", t: 10 }]);
    assert.deepEqual(await totals(), [["open", 3], ["paid", 15]]);
    await c.updateOne({ t: 1 }, { $set: { s: "paid" } });
    assert.deepEqual(await totals(), [["open", 2], ["paid", 16]]);
    await c.deleteMany({ s: "open" });
    assert.deepEqual(await totals(), [["paid", 16]]);
  }));
