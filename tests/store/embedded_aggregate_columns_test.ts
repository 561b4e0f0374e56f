/**
 * The embedded store's plain `$group` read from columns of the snapshot (columns.ts): the
 * same answers as the engine and as the pass over documents, columns dropped by every
 * write, fields every object inherits left to the documents, the time bound kept; and the
 * matcher's shortcut for primitive values answering as its general tests.
 */
import assert from "node:assert/strict";
import { type AggregateSource, runAggregate } from "../../src/store/embedded/aggregate.ts";
import { Columns, MAX_COLUMNS } from "../../src/store/embedded/columns.ts";
import { generalTest, operatorTest } from "../../src/doc/match/fastmatch.ts";
import { engineOptions } from "../../src/doc/match/engine.ts";
import { Int32 } from "mongodb";
import { Decimal128, Long, ObjectId } from "../../src/doc/bson.ts";
import { QueryTimeoutError } from "../../src/store/store.ts";
import { withStore } from "../support/embedded.ts";
import type { Doc } from "../../src/store/store.ts";

/** Every value kind a field may hold. */
const ODD: unknown[] = [
  "new",
  "paid",
  "\u{1F600}",
  "\uFFFF",
  "",
  7,
  -0,
  0,
  NaN,
  Infinity,
  -Infinity,
  2.5,
  true,
  false,
  null,
  undefined,
  [1, 2],
  [],
  ["new", 7],
  { a: 1 },
  "7",
  new Date(5),
  new ObjectId("0123456789abcdef01234567"),
  Decimal128.fromString("7"),
  new Int32(3),
  Long.fromNumber(9),
];

/**
 * The values both the engine and the store's matcher read as MongoDB does: the matcher
 * compares BSON numbers by value and never orders NaN, where the engine does neither.
 */
const SHARED = ODD.filter((v) =>
  !Number.isNaN(v) && !(v instanceof Decimal128 || v instanceof Int32 || v instanceof Long)
);

function documents(count: number, values = ODD): Doc[] {
  return Array.from({ length: count }, (_, n) => {
    const doc: Doc = { _id: n, n };
    if (n % 11 !== 0) doc.status = values[n % 7];
    if (n % 5 !== 0) doc.total = values[(n * 3) % values.length];
    if (n % 4 !== 0) doc.flag = values[(n * 7) % values.length];
    return doc;
  });
}

/** A source over `docs`, with columns unless `columns` is false; counts the columns read. */
function sourceOf(docs: Doc[], columns = true) {
  const kept = new Columns(docs);
  const read: string[][] = [];
  const source: AggregateSource = {
    name: "orders",
    snapshot: () => docs,
    sibling: () => {
      throw new Error("no sibling");
    },
    options: engineOptions(),
    ...(columns
      ? {
        columns: (fields: readonly string[], timeout: null) => {
          const got = kept.get(fields, timeout);
          if (got !== null) read.push([...fields]);
          return got;
        },
      }
      : {}),
  };
  return { source, read };
}

/** The engine's answer: an identity `$addFields` first keeps the store's own passes out. */
function engine(pipeline: Doc[]): Doc[] {
  return [{ $addFields: {} }, ...pipeline];
}

const GROUP = {
  $group: {
    _id: "$status",
    orders: { $sum: 1 },
    revenue: { $sum: "$total" },
    mean: { $avg: "$total" },
    flags: { $sum: "$flag" },
  },
};

/** Leading `$match` stages in the simple shape (see simpleConditions). */
function matchStages(): Doc[][] {
  const stages: Doc[][] = [[], [{ $match: {} }]];
  for (const x of ["new", 7, 0, 2.5, true, "7", new Date(5), Decimal128.fromString("7")]) {
    for (const op of ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]) {
      stages.push([{ $match: { total: { [op]: x } } }]);
    }
    stages.push([{ $match: { flag: x } }]);
  }
  stages.push(
    [{ $match: { total: { $in: [7, "new", true] } } }],
    [{ $match: { flag: { $nin: [7, "new"] } } }],
    [{ $match: { flag: { $exists: true } } }, { $match: { total: { $exists: false } } }],
    [{ $match: { flag: { $ne: true } } }, { $match: { total: { $gte: 0 } } }],
    [{ $match: { $and: [{ n: { $gt: 10 } }, { status: { $ne: "paid" } }], flag: { $lt: 9 } } }],
  );
  return stages;
}

Deno.test("embedded aggregation: a plain $group read from columns answers as the documents do", () => {
  const odd = documents(400);
  const shared = documents(400, SHARED);
  for (const matches of matchStages()) {
    for (const tail of [[], [{ $sort: { revenue: -1, orders: 1 } }]] as Doc[][]) {
      const pipeline = [...matches, GROUP, ...tail];
      const label = JSON.stringify(pipeline);
      // As the pass over the documents, with the same matcher, on every kind of value.
      // The first aggregation over a snapshot reads the documents, the next ones the columns.
      const columns = sourceOf(odd);
      const first = runAggregate(columns.source, pipeline);
      assert.equal(columns.read.length, 0, `read from the documents: ${label}`);
      const answer = runAggregate(columns.source, pipeline);
      assert.equal(columns.read.length, 1, `read from columns: ${label}`);
      assert.deepStrictEqual(answer, first, label);
      assert.deepStrictEqual(answer, runAggregate(sourceOf(odd, false).source, pipeline), label);
      // As the engine, on the values it reads as the matcher does.
      assert.deepStrictEqual(
        runAggregate(sourceOf(shared).source, pipeline),
        runAggregate(sourceOf(shared).source, engine(pipeline)),
        label,
      );
    }
  }
});

Deno.test("embedded aggregation: fields every object inherits are read from the documents", () => {
  const docs = documents(50);
  Object.defineProperty(docs[3], "constructor", { value: 5, enumerable: true });
  for (
    const pipeline of [
      [{ $match: { constructor: { $exists: false } } }, GROUP],
      [{ $match: { toString: 5 } }, GROUP],
      [{ $match: { "a.b": { $exists: false } } }, GROUP],
      [{ $match: { $or: [{ n: 1 }, { n: 2 }] } }, GROUP],
    ]
  ) {
    const columns = sourceOf(docs);
    runAggregate(columns.source, pipeline);
    const answer = runAggregate(columns.source, pipeline);
    assert.deepStrictEqual(columns.read, [], JSON.stringify(pipeline));
    assert.deepStrictEqual(answer, runAggregate(sourceOf(docs).source, engine(pipeline)));
  }
});

Deno.test("embedded aggregation: every write drops the columns it would change", () =>
  withStore(async (store) => {
    const c = store.collection("orders");
    await c.insertMany(documents(100, SHARED));
    const pipeline = [{ $match: { total: { $gte: 0 } } }, GROUP, { $sort: { _id: 1 } }];
    // Twice after each write: the second reads the columns the first asked for.
    const check = async (label: string) => {
      const expected = await c.aggregate(engine(pipeline));
      assert.deepStrictEqual(await c.aggregate(pipeline), expected, `${label}, documents`);
      assert.deepStrictEqual(await c.aggregate(pipeline), expected, `${label}, columns`);
    };
    await check("loaded");
    await c.insertMany([{ _id: 1000, status: "new", total: 5, flag: 1 }]);
    await check("after an insert");
    await c.updateOne({ _id: 1000 }, { $set: { total: 50, status: "late" } });
    await check("after an update");
    await c.replaceOne({ _id: 1 }, { _id: 1, status: "new", total: 1 });
    await check("after a replacement");
    await c.deleteMany({ status: "paid" });
    await check("after a deletion");
    const groups = await c.aggregate(pipeline);
    assert.ok(groups.some((g) => g._id === "late" && g.revenue === 50));
    assert.ok(!groups.some((g) => g._id === "paid"));
  }));

Deno.test("embedded columns: own values only, the time bound, at most MAX_COLUMNS kept", () => {
  const docs: Doc[] = Array.from({ length: 3000 }, (_, n) => ({ n }));
  docs[1] = Object.assign(Object.create({ inherited: 1 }), { n: 1 });
  const columns = new Columns(docs);
  const timedOut = new Columns(docs);
  assert.equal(timedOut.get(["n"], { deadline: -1, ms: 5 }), null);
  assert.throws(() => timedOut.get(["n"], { deadline: -1, ms: 5 }), QueryTimeoutError);
  assert.throws(() => columns.get(["constructor"], null), /no column/);
  // None on the first ask of a field; built on the next.
  assert.equal(columns.get(["n", "inherited"], null), null);
  const [n, inherited] = columns.get(["n", "inherited"], null)!;
  assert.deepStrictEqual(n, docs.map((d) => d.n));
  assert.ok(inherited.every((v) => v === undefined));
  // Columns are built once and kept; past MAX_COLUMNS, the oldest go.
  assert.equal(columns.get(["n"], { deadline: -1, ms: 5 })![0], n);
  for (let i = 0; i < MAX_COLUMNS + 4; i++) {
    columns.get([`f${i}`], null);
    columns.get([`f${i}`], null);
  }
  assert.notEqual(columns.get(["n"], null)![0], n);
  assert.deepStrictEqual(columns.get(["n"], null)![0], n);
});

Deno.test("matcher: the shortcut for primitive values answers as the general tests do", () => {
  const operands = [
    "new",
    "",
    "\u{1F600}",
    "7",
    7,
    0,
    -0,
    2.5,
    -1,
    Infinity,
    -Infinity,
    true,
    false,
  ];
  for (const op of ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]) {
    for (const x of operands) {
      const fast = operatorTest(op, x)!;
      const general = generalTest(op, x)!;
      for (const v of [...ODD, ...operands]) {
        assert.equal(fast(v), general(v), `${op} ${String(x)} on ${String(v)}`);
      }
    }
  }
});
