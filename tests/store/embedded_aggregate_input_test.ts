/**
 * A `$group` first after the leading `$match` gets copies of the fields it reads only: the
 * results are those of the whole documents, and stored documents are never changed.
 */
import assert from "node:assert/strict";
import { groupInputFields } from "../../src/store/embedded/aggregate.ts";
import { withStore } from "../support/embedded.ts";

Deno.test("embedded aggregation: the fields a leading $group reads", () => {
  assert.deepEqual(
    groupInputFields({
      $group: { _id: "$status", n: { $sum: 1 }, total: { $sum: "$total" }, a: { $push: "$x.y" } },
    })?.sort(),
    ["status", "total", "x"],
  );
  assert.deepEqual(groupInputFields({ $group: { _id: null, n: { $sum: 1 } } }), []);
  for (
    const opaque of [
      { $group: { _id: null, docs: { $push: "$$ROOT" } } },
      { $group: { _id: null, v: { $first: { $getField: "total" } } } },
      { $group: { _id: null, v: { $sum: { $let: { vars: { t: "$total" }, in: "$$t" } } } } },
      { $project: { total: 1 } },
      { $group: { _id: null }, $sort: { _id: 1 } },
    ]
  ) {
    assert.equal(groupInputFields(opaque), null, JSON.stringify(opaque));
  }
});

Deno.test("embedded aggregation: narrowed $group input answers as whole documents do", () =>
  withStore(async (store) => {
    const c = store.collection("orders");
    await c.insertMany(
      Array.from({ length: 40 }, (_, n) => ({
        status: ["new", "paid", "shipped"][n % 3],
        total: n,
        items: [{ sku: `s${n % 4}`, q: 1 + n % 2 }],
        note: n % 5 === 0 ? undefined : `n${n}`,
      })),
    );
    const pipelines = [
      [
        { $match: { total: { $gte: 5 } } },
        { $group: { _id: "$status", n: { $sum: 1 }, revenue: { $sum: "$total" } } },
        { $sort: { revenue: -1 } },
      ],
      [{ $group: { _id: "$status", items: { $push: "$items" }, notes: { $addToSet: "$note" } } }],
      [{ $group: { _id: "$status", first: { $first: "$$ROOT" } } }, { $sort: { _id: 1 } }],
      [{ $group: { _id: { $arrayElemAt: ["$items.sku", 0] }, q: { $sum: { $sum: "$items.q" } } } }],
    ];
    const before = JSON.stringify(await c.find({}));
    for (const pipeline of pipelines) {
      // An identity $addFields first turns the narrowing off: the whole documents' answer.
      const whole = await c.aggregate([{ $addFields: {} }, ...pipeline]);
      const narrowed = await c.aggregate(pipeline);
      const sort = (docs: unknown[]) => docs.map((d) => JSON.stringify(d)).sort();
      assert.deepEqual(sort(narrowed), sort(whole), JSON.stringify(pipeline));
      assert.ok(narrowed.length > 0);
      // Editing what came back leaves the stored documents as they were.
      for (const doc of narrowed) {
        for (const v of Object.values(doc)) if (Array.isArray(v)) v.push("edited");
      }
    }
    assert.equal(JSON.stringify(await c.find({})), before);
  }));
