/**
 * The embedded store's own pass for a plain `$group` (one top-level key, `$sum`, `$avg`,
 * `$count`) and for a final `$facet` of a page and a count answers exactly as the query
 * engine does: the same groups in the same order, the same keys in the same order, the same
 * numbers (NaN, -0 and non-numbers included).
 */
import assert from "node:assert/strict";
import { pageFacets, plainGroup } from "../../src/store/embedded/aggregate.ts";
import { withStore } from "../support/embedded.ts";
import type { Doc } from "../../src/store/store.ts";

/** Every value kind a group key or a summed field may hold. */
const ODD = [
  "new",
  "paid",
  7,
  -0,
  0,
  NaN,
  true,
  null,
  undefined,
  [1, 2],
  { a: 1 },
  "7",
  2.5,
];

/** The engine's answer: an identity `$addFields` first keeps the store's own pass out. */
function engine(pipeline: Doc[]): Doc[] {
  return [{ $addFields: {} }, ...pipeline];
}

/** Deep equality that also compares the order of every object's keys. */
function sameAnswer(actual: Doc[], expected: Doc[], label: string): void {
  assert.deepStrictEqual(actual, expected, label);
  const keys = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(keys)
      : v !== null && typeof v === "object"
      ? Object.entries(v).map(([k, x]) => [k, keys(x)])
      : null;
  assert.deepStrictEqual(keys(actual), keys(expected), `${label}: key order`);
}

Deno.test("embedded aggregation: a plain $group answers as the engine does", () =>
  withStore(async (store) => {
    const c = store.collection("orders");
    await c.insertMany(
      Array.from({ length: 60 }, (_, n) => {
        const doc: Doc = { n, total: [3, 0.1, 0.2, -0, "9", null, [4]][n % 7] };
        // Primitive keys only in the first collection; missing keys on every eleventh.
        if (n % 11 !== 0) doc.status = ODD[n % 9];
        if (n % 13 === 0) doc.total = NaN;
        return doc;
      }),
    );
    const pipelines: Doc[][] = [
      [
        { $match: { n: { $gte: 3 } } },
        {
          $group: {
            _id: "$status",
            orders: { $sum: 1 },
            revenue: { $sum: "$total" },
            mean: { $avg: "$total" },
            half: { $sum: 0.5 },
            count: { $count: {} },
          },
        },
        { $sort: { revenue: -1, orders: 1 } },
      ],
      [{ $group: { _id: "$status", revenue: { $sum: "$total" } } }],
      [{ $group: { _id: null, revenue: { $sum: "$total" }, none: { $avg: "$missing" } } }],
      [{ $group: { _id: "$missing", n: { $sum: 1 } } }],
      [{ $match: { n: { $gt: 1000 } } }, { $group: { _id: "$status", n: { $sum: 1 } } }],
    ];
    for (const pipeline of pipelines) {
      assert.ok(plainGroup(pipeline.find((s) => "$group" in s)!), JSON.stringify(pipeline));
      sameAnswer(
        await c.aggregate(pipeline),
        await c.aggregate(engine(pipeline)),
        JSON.stringify(pipeline),
      );
    }
    // Keys the engine compares by content (an array, an object) leave the stage to it.
    await c.insertMany([{ status: [1, 2], total: 1 }, { status: { a: 1 }, total: 2 }]);
    const pipeline = [{ $group: { _id: "$status", revenue: { $sum: "$total" } } }];
    sameAnswer(await c.aggregate(pipeline), await c.aggregate(engine(pipeline)), "object keys");
  }));

Deno.test("embedded aggregation: stages the store's own pass leaves to the engine", () => {
  for (
    const stage of [
      { $group: { _id: "$a.b", n: { $sum: 1 } } },
      { $group: { _id: { s: "$status" }, n: { $sum: 1 } } },
      { $group: { _id: "$status", n: { $sum: "$a.b" } } },
      { $group: { _id: "$status", n: { $max: "$total" } } },
      { $group: { _id: "$status", n: { $sum: { $multiply: ["$a", 2] } } } },
      { $group: { _id: "$constructor", n: { $sum: 1 } } },
      { $group: { _id: "$$ROOT", n: { $sum: 1 } } },
      { $group: { n: { $sum: 1 } } },
      { $project: { a: 1 } },
    ]
  ) {
    assert.equal(plainGroup(stage as Doc), null, JSON.stringify(stage));
  }
  for (
    const stage of [
      { $facet: { page: [{ $skip: 1 }, { $sort: { a: 1 } }] } },
      { $facet: { page: [{ $limit: 0 }] } },
      { $facet: { page: [{ $skip: -1 }] } },
      { $facet: { total: [{ $count: "$n" }] } },
      { $facet: { page: { $skip: 1 } } },
    ]
  ) {
    assert.equal(pageFacets(stage as Doc), null, JSON.stringify(stage));
  }
});

Deno.test("embedded aggregation: a final $facet of a page and a count answers as the engine does", () =>
  withStore(async (store) => {
    const c = store.collection("orders");
    await c.insertMany(
      Array.from({ length: 30 }, (_, n) => ({ status: ["a", "b", "c", "d"][n % 4], total: n })),
    );
    const group = { $group: { _id: "$status", revenue: { $sum: "$total" } } };
    const sort = { $sort: { revenue: -1 } };
    for (const [skip, limit] of [[0, 2], [2, 2], [3, 5], [10, 1]]) {
      const facet = (extra: Doc[]) => ({
        $facet: {
          page: [{ $skip: skip }, { $limit: limit }, ...extra],
          total: [{ $count: "n" }, ...extra],
          all: [...extra],
        },
      });
      for (const head of [[group, sort], [{ $match: { total: { $gt: 5 } } }], []]) {
        const ours = await c.aggregate([...head, facet([])]);
        // An identity $addFields in every facet leaves the whole stage to the engine.
        const theirs = await c.aggregate([...head, facet([{ $addFields: {} }])]);
        sameAnswer(ours, theirs, JSON.stringify({ head, skip, limit }));
        // The facets hold their own documents: editing one leaves the others.
        const [out] = ours;
        for (const doc of out.all as Doc[]) doc.edited = true;
        assert.ok((out.page as Doc[]).every((doc) => !("edited" in doc)));
      }
    }
    const none = await c.aggregate([{ $match: { total: -1 } }, {
      $facet: { page: [{ $skip: 0 }, { $limit: 5 }], total: [{ $count: "n" }] },
    }]);
    assert.deepStrictEqual(none, [{ page: [], total: [] }]);
  }));
