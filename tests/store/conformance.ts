/**
 * Store conformance suite: the `Store` contract, checked the same way on every backend.
 *
 * Call `storeConformance(label, open, gaps)` from a `*_test.ts` file. Each case opens a
 * fresh store and uses collection names of its own. A case that needs a feature named in
 * `gaps` (see `JONGODB_GAPS`) is registered as ignored, with the gap in its name.
 */
import assert from "node:assert/strict";
import { Decimal128, ObjectId } from "../../src/doc/bson.ts";
import { Int32, Long } from "mongodb";
import type { Collection, Doc, Filter, Store } from "../../src/store/store.ts";
import { DuplicateKeyError, InvalidQueryError } from "../../src/store/store.ts";
import { jongodbGap, skipUnless } from "../support/skip.ts";
import { SANITIZED, type StoreKind } from "../support/harness.ts";

interface Context {
  store: Store;
  /** A collection with a name unique to this test run; dropped afterwards. */
  coll(base: string): Collection;
}

interface Case {
  name: string;
  /** Features this case needs that an emulator may lack. */
  needs?: string[];
  fn(ctx: Context): Promise<void>;
}

let counter = 0;

function uniqueName(base: string): string {
  counter++;
  return `conf_${base}_${Date.now().toString(36)}${counter}`;
}

const ids = (docs: Doc[]) => docs.map((d) => d._id);

/**
 * Asserts that `{[path]: condition}` finds the documents `expected` (by `_id`) in `c`, alone and
 * as a branch of an `$or` (which the embedded store's query engine tests rather than its direct
 * matcher).
 */
async function findsAloneAndInOr(
  c: Collection,
  path: string,
  condition: Record<string, unknown>,
  expected: unknown[],
): Promise<void> {
  const label = `${path} ${JSON.stringify(condition)}`;
  for (const filter of [{ [path]: condition }, { $or: [{ [path]: condition }, { _id: 100 }] }]) {
    const found = await c.find(filter, { sort: { _id: 1 } });
    assert.deepEqual(ids(found), expected, "$or" in filter ? `$or ${label}` : label);
  }
}

/** The documents of the `$type` cases: values of every common type, alone and in arrays. */
async function typedDocs(coll: (name: string) => Collection): Promise<Collection> {
  const c = coll("types");
  await c.insertMany([
    { _id: 1, v: 7, a: [{ b: 7 }] },
    { _id: 2, v: [1.5, "x"], a: [{ b: "s" }, { b: [7] }] },
    { _id: 3, v: [[7]], a: { b: [[7]] } },
    { _id: 4, v: "7", a: [{ b: null }] },
    { _id: 5, v: null, a: [] },
    { _id: 6, v: { w: 1 }, a: [{ c: 1 }] },
    { _id: 7, v: new ObjectId("6650c2f1a2b3c4d5e6f70809"), a: [{ b: true }] },
    { _id: 8, v: new Date(Date.UTC(2026, 0, 1)), a: [{ b: [new Date(0)] }] },
    { _id: 9, v: [], a: { b: 2 ** 40 } },
  ]);
  return c;
}

/**
 * The documents of the null cases (MongoDB's own test of equality to null,
 * jstests/core/query/null_query_semantics.js, without its BSON `undefined` values): `_id` names
 * the shape of `a`.
 */
async function nullShapes(coll: (name: string) => Collection): Promise<Collection> {
  const c = coll("null_shapes");
  await c.insertMany([
    { _id: "a_empty_subobject", a: {} },
    { _id: "a_null", a: null },
    { _id: "a_number", a: 4 },
    { _id: "a_subobject_b_not_null", a: { b: "hi" } },
    { _id: "a_subobject_b_null", a: { b: null } },
    { _id: "no_a" },
    { _id: "a_double_array", a: [[]] },
    { _id: "a_empty_array", a: [] },
    { _id: "a_object_array_b_mix_null_missing", a: [{ b: null }, { b: null }, {}] },
    { _id: "a_object_array_no_b_nulls", a: [{ b: 1 }, { b: 3 }, { b: "string" }] },
    { _id: "a_object_array_some_b_nulls", a: [{ b: null }, { b: 3 }, { b: null }] },
    { _id: "a_object_array_some_b_missing", a: [{ b: 3 }, {}] },
    { _id: "a_value_array_all_nulls", a: [null, null] },
    { _id: "a_value_array_no_nulls", a: [1, "string", 4] },
    { _id: "a_value_array_with_null", a: [1, "string", null, 4] },
  ]);
  return c;
}

/** The `_id`s of the null shapes but `left`, sorted. */
async function nullShapesBut(c: Collection, ...left: string[]): Promise<string[]> {
  const all = (await c.find({})).map((d) => d._id as string);
  return all.filter((id) => !left.includes(id)).sort();
}

async function seedPeople(c: Collection): Promise<Doc[]> {
  const docs: Doc[] = [
    { _id: 1, name: "ann", age: 31, city: "rome", tags: ["a", "b"], address: { zip: "100" } },
    { _id: 2, name: "bob", age: 25, city: "oslo", tags: ["b"], address: { zip: "200" } },
    { _id: 3, name: "cid", age: 42, city: "rome", tags: [], address: { zip: "300" } },
    { _id: 4, name: "dan", age: 25, city: "lima", tags: ["c"], address: { zip: "100" } },
    { _id: 5, name: "eve", age: 37, city: "oslo", tags: ["a"], address: { zip: "500" } },
  ];
  await c.insertMany(docs);
  return docs;
}

/** A reporting line of four: Asya reports to Ron, Ron to Eliot, Eliot to Dev. */
async function seedStaff(c: Collection): Promise<Collection> {
  await c.insertMany([
    { _id: 1, name: "Dev" },
    { _id: 2, name: "Eliot", boss: "Dev" },
    { _id: 3, name: "Ron", boss: "Eliot" },
    { _id: 4, name: "Asya", boss: "Ron" },
  ]);
  return c;
}

/** A `$graphLookup` up the reporting line of {@link seedStaff}'s collection `from`. */
const CHAIN = (from: string) => ({
  from,
  startWith: "$boss",
  connectFromField: "boss",
  connectToField: "name",
  as: "chain",
});

/** Asserts each filter finds (and counts) exactly the documents of the given ids. */
async function expectIds(c: Collection, cases: Array<[Filter, number[]]>): Promise<void> {
  for (const [filter, expected] of cases) {
    const found = (await c.find(filter)).map((d) => d._id as number).sort((a, b) => a - b);
    assert.deepEqual(found, expected, JSON.stringify(filter));
    assert.equal(await c.count(filter), expected.length, JSON.stringify(filter));
  }
}

async function assertDuplicate(promise: Promise<unknown>, field: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof DuplicateKeyError, `expected DuplicateKeyError, got ${err}`);
    assert.deepEqual(err.fields, [field]);
    return true;
  });
}

const CASES: Case[] = [
  {
    name: "insert, find, findOne, delete",
    async fn({ coll }) {
      const c = coll("crud");
      await c.insertMany([{ _id: "a", v: 1 }, { _id: "b", v: 2 }]);
      assert.deepEqual(await c.find({}, { sort: { _id: 1 } }), [
        { _id: "a", v: 1 },
        { _id: "b", v: 2 },
      ]);
      assert.deepEqual(await c.findOne({ v: 2 }), { _id: "b", v: 2 });
      assert.equal(await c.findOne({ v: 3 }), null);
      assert.equal(await c.deleteOne({ _id: "a" }), 1);
      assert.equal(await c.deleteOne({ _id: "a" }), 0);
      await c.insertMany([{ _id: "c", v: 2 }, { _id: "d", v: 3 }]);
      assert.equal(await c.deleteMany({ v: 2 }), 2);
      assert.deepEqual(ids(await c.find({})), ["d"]);
      await c.insertMany([]);
    },
  },
  {
    name: "filters: ObjectId, Date, dotted, $in, $or, $elemMatch, $regex, $exists",
    async fn({ coll }) {
      const c = coll("filters");
      const oid = new ObjectId();
      await c.insertMany([
        { _id: oid, at: new Date("2024-01-01T00:00:00Z"), a: { b: 1 }, k: "x", items: [] },
        {
          _id: new ObjectId(),
          at: new Date("2024-06-01T00:00:00Z"),
          a: { b: 2 },
          k: "y",
          items: [{ q: 5, r: "s" }, { q: 1, r: "t" }],
        },
        { _id: new ObjectId(), at: new Date("2025-01-01T00:00:00Z"), a: { b: 3 }, k: "zz" },
      ]);
      assert.deepEqual(ids(await c.find({ _id: oid })), [oid]);
      assert.equal((await c.find({ _id: new ObjectId(oid.toHexString()) })).length, 1);
      const mid = await c.find({
        at: { $gte: new Date("2024-03-01"), $lt: new Date("2024-12-31") },
      });
      assert.deepEqual(mid.map((d) => (d.a as Doc).b), [2]);
      assert.equal((await c.find({ "a.b": { $gt: 1 } })).length, 2);
      assert.equal((await c.find({ k: { $in: ["x", "zz", "q"] } })).length, 2);
      assert.equal((await c.find({ $or: [{ k: "x" }, { "a.b": 3 }] })).length, 2);
      const em = await c.find({ items: { $elemMatch: { q: { $gt: 4 }, r: "s" } } });
      assert.deepEqual(em.map((d) => d.k), ["y"]);
      assert.equal((await c.find({ items: { $elemMatch: { q: 5, r: "t" } } })).length, 0);
      assert.deepEqual((await c.find({ k: { $regex: "^z" } })).map((d) => d.k), ["zz"]);
      assert.equal((await c.find({ items: { $exists: false } })).length, 1);
    },
  },
  {
    name: "$in and $nin with an array member match a field holding that array, as equality does",
    async fn({ coll }) {
      const c = coll("array_members");
      await c.insertMany([
        { _id: 1, x: [] },
        { _id: 2, x: [1] },
        { _id: 4, x: 1 },
        { _id: 5 },
        { _id: 6, d: { e: [] } },
      ]);
      const cases: Array<[Filter, number[]]> = [
        [{ x: { $in: [[]] } }, [1]],
        [{ x: { $in: [[], 5] } }, [1]],
        [{ x: { $in: [[1]] } }, [2]],
        [{ x: { $nin: [[]] } }, [2, 4, 5, 6]],
        [{ x: { $in: [[1]], $exists: true } }, [2]],
        [{ $or: [{ x: { $in: [[]] } }, { _id: 4 }] }, [1, 4]],
        [{ "d.e": { $in: [[]] } }, [6]],
      ];
      await expectIds(c, cases);
      // The same in a pipeline's $match, leading or not.
      for (
        const pipeline of [[{ $match: { x: { $in: [[]] } } }], [
          { $sort: { _id: 1 } },
          { $match: { x: { $in: [[]] } } },
        ]]
      ) {
        const out = await c.aggregate(pipeline);
        assert.deepEqual(out.map((d) => d._id), [1], JSON.stringify(pipeline));
      }
    },
  },
  {
    name: "an array equality also matches an element that is that array",
    needs: ["nested-array-equality"],
    async fn({ coll }) {
      const c = coll("nested_arrays");
      await c.insertMany([{ _id: 1, x: [] }, { _id: 2, x: [[]] }, { _id: 3, x: [[1], 2] }]);
      await expectIds(c, [
        [{ x: [] }, [1, 2]],
        [{ x: { $in: [[]] } }, [1, 2]],
        [{ x: { $nin: [[]] } }, [3]],
        [{ x: [1] }, [3]],
      ]);
    },
  },
  {
    name: "skip and limit without a sort page through the natural order",
    async fn({ coll }) {
      const c = coll("natural_pages");
      await seedPeople(c);
      await c.insertMany(
        [6, 7, 8, 9].map((n) => ({ _id: n, name: `p${n}`, age: n, city: "oslo" })),
      );
      const pages = async (filter: Doc) => {
        const out: unknown[] = [];
        for (let skip = 0; skip < 12; skip += 2) {
          out.push(...ids(await c.find(filter, { skip, limit: 2 })));
        }
        return out;
      };
      for (
        const filter of [{}, { city: "oslo" }, { age: { $gte: 8 } }, { _id: { $in: [2, 7, 9] } }]
      ) {
        const all = ids(await c.find(filter));
        assert.ok(all.length > 2, JSON.stringify(filter));
        assert.deepEqual(await pages(filter), all, JSON.stringify(filter));
        assert.deepEqual(
          ids(await c.find(filter, { skip: all.length })),
          [],
          JSON.stringify(filter),
        );
      }
      // Again with indexes that narrow the equality and the range.
      await c.createIndex({ keys: { city: 1 } });
      await c.createIndex({ keys: { age: 1 } });
      for (const filter of [{ city: "oslo" }, { age: { $gte: 8 } }, { age: { $lt: 30 } }]) {
        assert.deepEqual(await pages(filter), ids(await c.find(filter)), JSON.stringify(filter));
      }
      assert.deepEqual(ids(await c.find({ _id: 3 }, { skip: 0, limit: 1 })), [3]);
      assert.deepEqual(ids(await c.find({ _id: 3 }, { skip: 1 })), []);
    },
  },
  {
    name: "sort (compound, key order), skip, limit",
    async fn({ coll }) {
      const c = coll("sort");
      await seedPeople(c);
      assert.deepEqual(ids(await c.find({}, { sort: { age: 1, name: -1 } })), [4, 2, 1, 5, 3]);
      assert.deepEqual(ids(await c.find({}, { sort: { age: -1, _id: 1 } })), [3, 5, 1, 2, 4]);
      assert.deepEqual(ids(await c.find({}, { sort: { city: 1, age: -1 } })), [4, 5, 2, 3, 1]);
      assert.deepEqual(ids(await c.find({}, { sort: { name: 1 }, skip: 1, limit: 2 })), [2, 3]);
      assert.deepEqual(ids(await c.find({}, { sort: { name: 1 }, skip: 4, limit: 10 })), [5]);
      assert.deepEqual(ids(await c.find({}, { sort: { name: 1 }, skip: 9 })), []);
      assert.deepEqual(await c.findOne({ city: "oslo" }, { sort: { age: -1 } }), {
        _id: 5,
        name: "eve",
        age: 37,
        city: "oslo",
        tags: ["a"],
        address: { zip: "500" },
      });
    },
  },
  {
    name: "sort: fields under one list take one member's values; two lists are refused",
    needs: ["array-sort"],
    async fn({ coll }) {
      const c = coll("sortpaired");
      await c.insertMany([
        // Member by member: (2, 1) and (3, 0); the first in sort order is (2, 1).
        { _id: 1, a: [{ b: 1, c: 2 }, { b: 0, c: 3 }] },
        { _id: 2, a: [{ b: 0.5, c: 2 }] },
        { _id: 3, a: { b: 9, c: 1 } },
      ]);
      const sorts: Record<string, 1 | -1>[] = [{ "a.c": 1, "a.b": 1 }, {
        "a.c": 1,
        "a.b": 1,
        _id: 1,
      }];
      for (const sort of sorts) {
        assert.deepEqual(ids(await c.find({}, { sort })), [3, 2, 1], JSON.stringify(sort));
        assert.deepEqual(ids(await c.find({}, { sort, limit: 2 })), [3, 2], JSON.stringify(sort));
      }
      assert.deepEqual(ids(await c.find({}, { sort: { "a.c": -1, "a.b": 1 } })), [1, 2, 3]);
      const lists = coll("sortparallel");
      await lists.insertMany([{ _id: 1, x: [1, 2], y: [3, 4] }, { _id: 2, x: 0, y: 0 }]);
      await assert.rejects(lists.find({}, { sort: { x: 1, y: 1 } }));
    },
  },
  {
    // MongoDB's documented sort rules: an array sorts by its smallest element ascending and
    // its largest descending, an empty array below null and missing fields (which equal
    // null), and values of different types in BSON order (null < numbers < strings <
    // objects < booleans).
    name: "sort: arrays by their smallest / largest element, empty arrays, missing, mixed types",
    needs: ["array-sort"],
    async fn({ coll }) {
      const c = coll("sortmixed");
      await c.insertMany([
        { _id: 1, v: 5 },
        { _id: 2, v: [1, 9] },
        { _id: 3, v: [] },
        { _id: 4 },
        { _id: 5, v: null },
        { _id: 6, v: "a" },
        { _id: 7, v: [3, "b"] },
        { _id: 8, v: { x: 1 } },
        { _id: 9, v: true },
      ]);
      assert.deepEqual(ids(await c.find({}, { sort: { v: 1, _id: 1 } })), [
        3,
        4,
        5,
        2,
        7,
        1,
        6,
        8,
        9,
      ]);
      assert.deepEqual(ids(await c.find({}, { sort: { v: -1, _id: 1 } })), [
        9,
        8,
        7,
        6,
        2,
        1,
        4,
        5,
        3,
      ]);
      assert.deepEqual(ids(await c.find({}, { sort: { v: 1, _id: 1 }, skip: 3, limit: 3 })), [
        2,
        7,
        1,
      ]);
    },
  },
  {
    name: "count with filter, limit and skip",
    async fn({ coll }) {
      const c = coll("count");
      await seedPeople(c);
      assert.equal(await c.count({}), 5);
      assert.equal(await c.count({ city: "rome" }), 2);
      assert.equal(await c.count({}, { limit: 3 }), 3);
      assert.equal(await c.count({}, { skip: 4 }), 1);
      assert.equal(await c.count({}, { skip: 2, limit: 2 }), 2);
      assert.equal(await c.count({ city: "nowhere" }), 0);
      assert.equal(await coll("count_empty").count({}), 0);
    },
  },
  {
    name: "inclusive projection",
    needs: ["projection"],
    async fn({ coll }) {
      const c = coll("proj_in");
      await seedPeople(c);
      assert.deepEqual(await c.find({ _id: 1 }, { projection: { name: 1, "address.zip": 1 } }), [
        { _id: 1, name: "ann", address: { zip: "100" } },
      ]);
      assert.deepEqual(await c.findOne({ _id: 2 }, { projection: { name: 1, _id: 0 } }), {
        name: "bob",
      });
    },
  },
  {
    name: "exclusive projection",
    needs: ["projection"],
    async fn({ coll }) {
      const c = coll("proj_ex");
      await seedPeople(c);
      assert.deepEqual(await c.find({ _id: 3 }, { projection: { tags: 0, address: 0, age: 0 } }), [
        { _id: 3, name: "cid", city: "rome" },
      ]);
    },
  },
  {
    name: "updateOne/updateMany with $set, $unset, $inc",
    async fn({ coll }) {
      const c = coll("update");
      await seedPeople(c);
      const r = await c.updateOne({ _id: 1 }, {
        $set: { city: "pisa", "address.zip": "999" },
        $unset: { tags: "" },
        $inc: { age: 2 },
      });
      assert.deepEqual(r, { matched: 1 });
      assert.deepEqual(await c.findOne({ _id: 1 }), {
        _id: 1,
        name: "ann",
        age: 33,
        city: "pisa",
        address: { zip: "999" },
      });
      assert.deepEqual(await c.updateOne({ _id: 99 }, { $set: { x: 1 } }), { matched: 0 });
      assert.equal(await c.updateMany({ age: 25 }, { $inc: { age: 1 }, $set: { n: true } }), 2);
      assert.deepEqual(ids(await c.find({ age: 26, n: true }, { sort: { _id: 1 } })), [2, 4]);
      assert.equal(await c.updateMany({ city: "nowhere" }, { $set: { x: 1 } }), 0);
    },
  },
  {
    name: "$push update",
    needs: ["$push"],
    async fn({ coll }) {
      const c = coll("push");
      await seedPeople(c);
      await c.updateOne({ _id: 2 }, { $push: { tags: "z" } });
      assert.deepEqual((await c.findOne({ _id: 2 }))?.tags, ["b", "z"]);
    },
  },
  {
    name: "upsert with updateOne and replaceOne",
    async fn({ coll }) {
      const c = coll("upsert");
      await c.updateOne({ _id: "u1" }, { $set: { v: 1 } }, { upsert: true });
      assert.deepEqual(await c.findOne({ _id: "u1" }), { _id: "u1", v: 1 });
      const again = await c.updateOne({ _id: "u1" }, { $set: { v: 2 } }, { upsert: true });
      assert.equal(again.matched, 1);
      await c.replaceOne({ _id: "u2" }, { _id: "u2", w: true }, { upsert: true });
      assert.deepEqual(await c.findOne({ _id: "u2" }), { _id: "u2", w: true });
      assert.equal(await c.count({}), 2);
    },
  },
  {
    name: "replaceOne replaces the whole document and keeps _id",
    async fn({ coll }) {
      const c = coll("replace");
      await seedPeople(c);
      assert.deepEqual(await c.replaceOne({ _id: 3 }, { _id: 3, name: "new" }), { matched: 1 });
      assert.deepEqual(await c.findOne({ _id: 3 }), { _id: 3, name: "new" });
      assert.deepEqual(await c.replaceOne({ _id: 42 }, { _id: 42, name: "x" }), { matched: 0 });
      assert.equal(await c.findOne({ _id: 42 }), null);
    },
  },
  {
    name: "unique index: insert, update, replace and upsert raise DuplicateKeyError",
    async fn({ coll }) {
      const c = coll("unique");
      await c.createIndex({ keys: { email: 1 }, unique: true });
      await c.createIndex({ keys: { email: 1 }, unique: true }); // idempotent
      await c.insertMany([{ _id: 1, email: "a@x" }, { _id: 2, email: "b@x" }]);
      await assertDuplicate(c.insertMany([{ _id: 3, email: "a@x" }]), "email");
      await assertDuplicate(c.updateOne({ _id: 2 }, { $set: { email: "a@x" } }), "email");
      await assertDuplicate(c.replaceOne({ _id: 2 }, { _id: 2, email: "a@x" }), "email");
      await assertDuplicate(
        c.updateOne({ _id: 9 }, { $set: { email: "b@x" } }, { upsert: true }),
        "email",
      );
      await assertDuplicate(c.insertMany([{ _id: 1, email: "c@x" }]), "_id");
      assert.deepEqual(await c.find({}, { sort: { _id: 1 } }), [
        { _id: 1, email: "a@x" },
        { _id: 2, email: "b@x" },
      ]);
    },
  },
  {
    name: "unique index with partialFilterExpression",
    async fn({ coll }) {
      const c = coll("partial");
      await c.createIndex({
        keys: { sku: 1 },
        unique: true,
        name: "sku_live",
        partialFilterExpression: { live: true },
      });
      await c.insertMany([{ _id: 1, sku: "s", live: true }, { _id: 2, sku: "s", live: false }]);
      await c.insertMany([{ _id: 3, sku: "s", live: false }]);
      await assert.rejects(
        c.insertMany([{ _id: 4, sku: "s", live: true }]),
        (e: unknown) => e instanceof DuplicateKeyError,
      );
      await assert.rejects(
        c.updateOne({ _id: 2 }, { $set: { live: true } }),
        (e: unknown) => e instanceof DuplicateKeyError,
      );
      assert.equal(await c.count({ sku: "s" }), 3);
    },
  },
  {
    name: "createIndex is idempotent, also under another name",
    async fn({ coll }) {
      const c = coll("ix_same");
      await c.createIndex({ keys: { a: 1, b: -1 } });
      await c.createIndex({ keys: { a: 1, b: -1 } });
      await c.createIndex({ keys: { a: 1, b: -1 }, name: "other_name" });
      await c.insertMany([{ _id: 1, a: 1, b: 1 }, { _id: 2, a: 1, b: 1 }]);
      assert.equal(await c.count({ a: 1 }), 2);
    },
  },
  {
    name: "createIndex with changed options replaces the index",
    needs: ["index-redefinition"],
    async fn({ coll }) {
      const c = coll("ix_change");
      await c.createIndex({ keys: { tag: 1 } });
      await c.insertMany([{ _id: 1, tag: "x" }]);
      await c.createIndex({ keys: { tag: 1 }, unique: true });
      await assertDuplicate(c.insertMany([{ _id: 2, tag: "x" }]), "tag");
    },
  },
  {
    name: "insertMany is all-or-nothing (duplicate in the middle of the batch)",
    async fn({ coll }) {
      const c = coll("atomic");
      await c.createIndex({ keys: { code: 1 }, unique: true });
      await c.insertMany([{ _id: "pre", code: "taken" }]);
      await assert.rejects(
        c.insertMany([
          { _id: "n1", code: "c1" },
          { _id: "n2", code: "c2" },
          { _id: "n3", code: "taken" },
          { _id: "n4", code: "c4" },
        ]),
        DuplicateKeyError,
      );
      await assert.rejects(
        c.insertMany([{ _id: "m1", code: "m1" }, { _id: "m2", code: "m2" }, {
          _id: "m1",
          code: "z",
        }]),
        DuplicateKeyError,
      );
      assert.deepEqual(await c.find({}), [{ _id: "pre", code: "taken" }]);
    },
  },
  {
    name: "aggregate: $match, $group with $sum, $sort",
    async fn({ coll }) {
      const c = coll("agg");
      await seedPeople(c);
      const out = await c.aggregate([
        { $match: { age: { $gte: 25 } } },
        { $group: { _id: "$city", n: { $sum: 1 }, years: { $sum: "$age" } } },
        { $sort: { _id: 1 } },
      ]);
      assert.deepEqual(out, [
        { _id: "lima", n: 1, years: 25 },
        { _id: "oslo", n: 2, years: 62 },
        { _id: "rome", n: 2, years: 73 },
      ]);
    },
  },
  {
    name: "aggregate: $group with $avg",
    needs: ["$avg"],
    async fn({ coll }) {
      const c = coll("avg");
      await seedPeople(c);
      const out = await c.aggregate([
        { $group: { _id: "$city", avg: { $avg: "$age" } } },
        { $sort: { _id: 1 } },
      ]);
      assert.deepEqual(out, [
        { _id: "lima", avg: 25 },
        { _id: "oslo", avg: 31 },
        { _id: "rome", avg: 36.5 },
      ]);
    },
  },
  {
    name: "aggregate: $lookup",
    async fn({ coll }) {
      const people = coll("lk_people");
      const orders = coll("lk_orders");
      await seedPeople(people);
      await orders.insertMany([
        { _id: "o1", who: 1, total: 10 },
        { _id: "o2", who: 1, total: 5 },
        { _id: "o3", who: 3, total: 7 },
      ]);
      const out = await people.aggregate([
        { $match: { _id: { $in: [1, 2] } } },
        { $lookup: { from: orders.name, localField: "_id", foreignField: "who", as: "orders" } },
        { $sort: { _id: 1 } },
      ]);
      assert.deepEqual(out.map((d) => [d._id, ids(d.orders as Doc[]).sort()]), [
        [1, ["o1", "o2"]],
        [2, []],
      ]);
    },
  },
  {
    name: "aggregate: $lookup with localField, foreignField and a pipeline runs it on the matches",
    async fn({ coll }) {
      const people = coll("lkp_people");
      const orders = coll("lkp_orders");
      await people.insertMany([{ _id: 1, min: 6 }, { _id: 2, min: 0 }, { _id: 3, min: 0 }]);
      await orders.insertMany([
        { _id: "o1", who: 1, total: 10 },
        { _id: "o2", who: 1, total: 5 },
        { _id: "o3", who: 2, total: 1 },
      ]);
      const out = await people.aggregate([
        {
          $lookup: {
            from: orders.name,
            localField: "_id",
            foreignField: "who",
            let: { least: "$min" },
            pipeline: [{ $match: { $expr: { $gte: ["$total", "$$least"] } } }],
            as: "big",
          },
        },
        { $sort: { _id: 1 } },
      ]);
      assert.deepEqual(out.map((d) => [d._id, ids(d.big as Doc[]).sort()]), [
        [1, ["o1"]],
        [2, ["o3"]],
        [3, []],
      ]);
    },
  },
  {
    name: "aggregate: $lookup joins numbers across their types, lists by members, missing as null",
    needs: ["lookup-equality"],
    async fn({ coll }) {
      const left = coll("lkn_left");
      const right = coll("lkn_right");
      await left.insertMany([
        { _id: 1, k: 7 },
        { _id: 2, k: Long.fromNumber(8) },
        { _id: 3, k: [7, 8] },
        { _id: 4 },
      ]);
      await right.insertMany([
        { _id: "a", n: Long.fromNumber(7) },
        { _id: "b", n: 7.5 },
        { _id: "c", n: [8, 9] },
        { _id: "d" },
      ]);
      const out = await left.aggregate([
        { $lookup: { from: right.name, localField: "k", foreignField: "n", as: "j" } },
        { $sort: { _id: 1 } },
      ]);
      assert.deepEqual(out.map((d) => [d._id, ids(d.j as Doc[]).sort()]), [
        [1, ["a"]],
        [2, ["c"]],
        [3, ["a", "c"]],
        [4, ["d"]],
      ]);
    },
  },
  {
    name: "aggregate: $lookup's 'as' with a dot sets a nested field",
    needs: ["lookup-as-path"],
    async fn({ coll }) {
      const left = coll("lkd_left");
      const right = coll("lkd_right");
      await left.insertMany([{ _id: 1, k: 7, info: { keep: true } }, { _id: 2, k: 8, info: 5 }]);
      await right.insertMany([{ _id: "a", n: 7 }]);
      const out = await left.aggregate([
        { $lookup: { from: right.name, localField: "k", foreignField: "n", as: "info.joined" } },
        { $sort: { _id: 1 } },
      ]);
      assert.deepEqual(out, [
        { _id: 1, k: 7, info: { keep: true, joined: [{ _id: "a", n: 7 }] } },
        { _id: 2, k: 8, info: { joined: [] } },
      ]);
      // The same with a pipeline and no localField.
      const piped = await left.aggregate([
        {
          $lookup: {
            from: right.name,
            let: { k: "$k" },
            pipeline: [{ $match: { $expr: { $eq: ["$n", "$$k"] } } }],
            as: "info.joined",
          },
        },
        { $sort: { _id: 1 } },
      ]);
      assert.deepEqual(piped, out);
    },
  },
  {
    name: "aggregate: $graphLookup follows a chain, as far as maxDepth",
    async fn({ coll }) {
      const staff = await seedStaff(coll("gl_staff"));
      const chain = async (maxDepth?: number) => {
        const [out] = await staff.aggregate([
          { $match: { _id: 4 } },
          {
            $graphLookup: { ...CHAIN(staff.name), ...(maxDepth === undefined ? {} : { maxDepth }) },
          },
        ]);
        return (out.chain as Doc[]).map((d) => d.name).sort();
      };
      assert.deepEqual(await chain(), ["Dev", "Eliot", "Ron"]);
      assert.deepEqual(await chain(1), ["Eliot", "Ron"]);
      assert.deepEqual(await chain(0), ["Ron"]);
    },
  },
  {
    name: "aggregate: $graphLookup's depthField gives each document's depth as a Long, last",
    needs: ["graphLookup-depthField"],
    async fn({ coll }) {
      const staff = await seedStaff(coll("gld_staff"));
      const [out] = await staff.aggregate([
        { $match: { _id: 4 } },
        { $graphLookup: { ...CHAIN(staff.name), depthField: "level" } },
      ]);
      const chain = out.chain as Doc[];
      assert.deepEqual(
        chain.map((d) => [d.name, Number(d.level)]).sort((a, b) => Number(a[1]) - Number(b[1])),
        [["Ron", 0], ["Eliot", 1], ["Dev", 2]],
      );
      const ron = chain.find((d) => d.name === "Ron")!;
      assert.ok(ron.level instanceof Long);
      assert.deepEqual(Object.keys(ron), ["_id", "name", "boss", "level"]);
    },
  },
  {
    name: "aggregate: $graphLookup meets numbers across their types and lists by members; " +
      "null meets null, never a missing field",
    needs: ["graphLookup-equality"],
    async fn({ coll }) {
      const nodes = coll("gle_nodes");
      await nodes.insertMany([
        { _id: "a", n: Long.fromNumber(7), next: 8 },
        { _id: "b", n: [8, 9], next: null },
        { _id: "c", n: null, next: 10 },
        { _id: "d", next: 11 },
        { _id: "e", n: 10.5 },
      ]);
      const start = coll("gle_start");
      await start.insertMany([{ _id: 0, from: 7 }]);
      const out = await start.aggregate([
        {
          $graphLookup: {
            from: nodes.name,
            startWith: "$from",
            connectFromField: "next",
            connectToField: "n",
            as: "reached",
            restrictSearchWithMatch: { _id: { $ne: "e" } },
          },
        },
      ]);
      assert.deepEqual(ids(out[0].reached as Doc[]).sort(), ["a", "b", "c"]);
    },
  },
  {
    name: "aggregate: a nested $project keeps the document's field order at every level",
    needs: ["nested-projection"],
    async fn({ coll }) {
      const c = coll("nested_project");
      await c.insertMany([{ _id: 1, a: { x: 1, y: 2, z: 3 }, list: [{ q: 1, p: 2 }] }]);
      const out = await c.aggregate([{
        $project: { a: { z: 1, x: 1 }, "list.p": 1, "list.q": 1 },
      }]);
      assert.deepEqual(
        JSON.stringify(out),
        JSON.stringify([{ _id: 1, a: { x: 1, z: 3 }, list: [{ q: 1, p: 2 }] }]),
      );
    },
  },
  {
    name: "aggregate: $set with a dotted path sets the field in each document of a list, " +
      "and makes a document of a value that is none",
    needs: ["set-through-lists"],
    async fn({ coll }) {
      const c = coll("set_paths");
      await c.insertMany([
        { _id: 1, a: [{ b: 1 }, 5, [{ b: 4 }]], k: 7 },
        { _id: 2, a: 5, k: 8 },
        { _id: 3, k: 9 },
        { _id: 4, a: { b: 1, c: 0, d: 2 }, k: 10 },
      ]);
      const out = await c.aggregate([
        { $set: { "a.c": "$k" } },
        { $project: { k: 0 } },
        { $sort: { _id: 1 } },
      ]);
      assert.deepEqual(
        JSON.stringify(out),
        JSON.stringify([
          { _id: 1, a: [{ b: 1, c: 7 }, { c: 7 }, [{ b: 4, c: 7 }]] },
          { _id: 2, a: { c: 8 } },
          { _id: 3, a: { c: 9 } },
          { _id: 4, a: { b: 1, c: 10, d: 2 } },
        ]),
      );
    },
  },
  {
    name: "aggregate: $addFields with a nested document sets fields inside the field; " +
      "an expression giving nothing removes its field",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("addfields_nested");
      await c.insertMany([{ _id: 1, a: { b: 1, c: 0 }, x: 9, gone: true }]);
      const out = await c.aggregate([
        { $addFields: { a: { c: "$x", d: { e: 1 } }, gone: "$nothing" } },
      ]);
      assert.deepEqual(out, [{ _id: 1, a: { b: 1, c: 9, d: { e: 1 } }, x: 9 }]);
    },
  },
  {
    name: "aggregate: $top, $bottom, $topN and $bottomN pick outputs by a sort in $group",
    needs: ["$avg"],
    async fn({ coll }) {
      const c = coll("top_bottom");
      await c.insertMany([
        { _id: 1, g: 1, n: "a", s: 1 },
        { _id: 2, g: 1, n: "b", s: 3 },
        { _id: 3, g: 1, n: "c", s: "x" },
        { _id: 4, g: 2, n: "d", s: 2 },
      ]);
      const out = await c.aggregate([
        {
          $group: {
            _id: { g: "$g" },
            top: { $top: { sortBy: { s: -1 }, output: "$n" } },
            bottom: { $bottom: { sortBy: { s: -1 }, output: ["$n", "$s"] } },
            topN: { $topN: { n: 2, sortBy: { s: 1 }, output: "$none" } },
            // n from the group's key: 2 for group 1, 1 for the others.
            bottomN: {
              $bottomN: {
                n: { $cond: [{ $eq: ["$g", 1] }, 2, 1] },
                sortBy: { s: 1 },
                output: "$n",
              },
            },
            firstN: { $firstN: { n: { $cond: [{ $eq: ["$g", 1] }, 1, 2] }, input: "$n" } },
          },
        },
        { $sort: { "_id.g": 1 } },
      ]);
      assert.deepEqual(out, [
        {
          _id: { g: 1 },
          top: "c",
          bottom: ["a", 1],
          topN: [null, null],
          bottomN: ["b", "c"],
          firstN: ["a"],
        },
        { _id: { g: 2 }, top: "d", bottom: ["d", 2], topN: [null], bottomN: ["d"], firstN: ["d"] },
      ]);
    },
  },
  {
    name: "aggregate: $sample gives each document at most once, all of them when fewer",
    needs: ["$sample"],
    async fn({ coll }) {
      const c = coll("sample");
      await c.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
      for (let round = 0; round < 5; round++) {
        const two = await c.aggregate([{ $sample: { size: 2 } }]);
        assert.equal(two.length, 2);
        assert.notEqual(two[0]._id, two[1]._id);
        const all = await c.aggregate([{ $sample: { size: 10 } }]);
        assert.deepEqual(ids(all).sort(), [1, 2, 3]);
      }
      const empty = coll("sample_empty");
      await empty.insertMany([{ _id: 1 }]);
      await empty.deleteMany({});
      assert.deepEqual(await empty.aggregate([{ $sample: { size: 2 } }]), []);
    },
  },
  {
    name: "aggregate: $unwind's includeArrayIndex is a Long, null where no list was unwound",
    needs: ["unwind-index"],
    async fn({ coll }) {
      const c = coll("unwind_index");
      await c.insertMany([{ _id: 1, a: [7, 8] }, { _id: 2, a: [] }, { _id: 3, a: 5 }]);
      const out = await c.aggregate([
        { $unwind: { path: "$a", includeArrayIndex: "i", preserveNullAndEmptyArrays: true } },
        { $sort: { _id: 1, i: 1 } },
      ]);
      assert.deepEqual(out.map((d) => [d._id, d.a, d.i === null ? null : Number(d.i)]), [
        [1, 7, 0],
        [1, 8, 1],
        [2, undefined, null],
        [3, 5, null],
      ]);
      assert.ok(out[1].i instanceof Long);
    },
  },
  {
    name: "aggregate: $unwind's includeArrayIndex with a dot sets a nested field",
    needs: ["unwind-index"],
    async fn({ coll }) {
      const c = coll("unwind_index_path");
      await c.insertMany([{ _id: 1, a: [7], at: { k: 1 } }]);
      const out = await c.aggregate([{ $unwind: { path: "$a", includeArrayIndex: "at.i" } }]);
      assert.deepEqual(out.map((d) => [d.a, (d.at as Doc).k, Number((d.at as Doc).i)]), [[
        7,
        1,
        0,
      ]]);
    },
  },
  {
    name: "aggregate: $unwind refuses an option it does not know",
    needs: ["unwind-options"],
    async fn({ coll }) {
      const c = coll("unwind_options");
      await c.insertMany([{ _id: 1, a: [1] }]);
      await assert.rejects(
        c.aggregate([{ $unwind: { path: "$a", bogus: true } }]),
        InvalidQueryError,
      );
    },
  },
  {
    name: "aggregate: $unwind and $project refuse what MongoDB refuses",
    async fn({ coll }) {
      const c = coll("unwind_refused");
      await c.insertMany([{ _id: 1, a: [1] }]);
      for (
        const stage of [
          { $unwind: "a" },
          { $unwind: { path: "$a", includeArrayIndex: "$i" } },
          { $project: {} },
        ]
      ) {
        await assert.rejects(c.aggregate([stage]), InvalidQueryError, JSON.stringify(stage));
      }
    },
  },
  {
    name: "aggregate: $project computes a field under a path in each member of a list, " +
      "and in place of a value that is no document",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("project_paths");
      await c.insertMany([
        { _id: 1, a: [{ b: 1, x: 1 }, 7, [{ b: 3 }]], k: 5 },
        { _id: 2, a: 5, k: 6 },
        { _id: 3, k: 7 },
      ]);
      const out = await c.aggregate([
        { $project: { "a.b": 1, "a.c": "$k" } },
        { $sort: { _id: 1 } },
      ]);
      assert.deepEqual(
        JSON.stringify(out),
        JSON.stringify([
          { _id: 1, a: [{ b: 1, c: 5 }, { c: 5 }, [{ b: 3, c: 5 }]] },
          { _id: 2, a: { c: 6 } },
          { _id: 3, a: { c: 7 } },
        ]),
      );
    },
  },
  {
    name: "aggregate: $bucketAuto orders values of every type as MongoDB does and keeps nulls " +
      "in its output lists",
    needs: ["$bucket"],
    async fn({ coll }) {
      const c = coll("bucket_auto");
      await c.insertMany([
        { _id: 1, v: "b", n: "x" },
        { _id: 2, v: 2, n: null },
        { _id: 3, v: null, n: "y" },
        { _id: 4, v: { a: 1 }, n: "z" },
        { _id: 5, v: 1, n: "w" },
        { _id: 6, n: "u" },
      ]);
      const out = await c.aggregate([
        { $bucketAuto: { groupBy: "$v", buckets: 3, output: { names: { $push: "$n" } } } },
      ]);
      assert.deepEqual(out.map((b) => [b._id, (b.names as unknown[]).length]), [
        [{ min: null, max: 1 }, 2],
        [{ min: 1, max: "b" }, 2],
        [{ min: "b", max: { a: 1 } }, 2],
      ]);
      assert.ok((out[1].names as unknown[]).includes(null));
    },
  },
  {
    name: "aggregate: $setWindowFields refuses a window whose lower bound exceeds its upper one",
    needs: ["$setWindowFields"],
    async fn({ coll }) {
      const c = coll("window_bounds");
      await c.insertMany([{ _id: 1, v: 1 }, { _id: 2, v: 2 }]);
      const sum = (window: Doc) =>
        c.aggregate([{
          $setWindowFields: { sortBy: { _id: 1 }, output: { s: { $sum: "$v", window } } },
        }]);
      for (
        const window of [{ documents: [1, -1] }, { documents: ["current", -1] }, { range: [2, 1] }]
      ) {
        await assert.rejects(sum(window), InvalidQueryError, JSON.stringify(window));
      }
      const running = await sum({ documents: ["unbounded", "current"] });
      assert.deepEqual(running.map((d) => d.s), [1, 3]);
    },
  },
  {
    name: "aggregate: $bucket writes no empty bucket, the default bucket in its _id's order",
    needs: ["$bucket"],
    async fn({ coll }) {
      const c = coll("bucket_bounds");
      await c.insertMany([{ _id: 1, v: 1 }, { _id: 2, v: 25 }, { _id: 3, v: "x" }, { _id: 4 }]);
      const counts = async (fallback: unknown) =>
        (await c.aggregate([
          { $bucket: { groupBy: "$v", boundaries: [0, 10, 20, 30], default: fallback } },
        ])).map((b) => [b._id, b.count]);
      assert.deepEqual(await counts("other"), [[0, 1], [20, 1], ["other", 2]]);
      assert.deepEqual(await counts(-1), [[-1, 2], [0, 1], [20, 1]]);
      for (
        const bad of [
          { groupBy: "$v", boundaries: [10, 0], default: "d" },
          { groupBy: "$v", boundaries: [0, "a"], default: "d" },
          { groupBy: "$v", boundaries: [0, 10], default: 5 },
          { groupBy: "$v", boundaries: [0, 10], default: "d", bogus: 1 },
        ]
      ) {
        await assert.rejects(
          c.aggregate([{ $bucket: bad }]),
          InvalidQueryError,
          JSON.stringify(bad),
        );
      }
    },
  },
  {
    name: "distinct with and without filter",
    async fn({ coll }) {
      const c = coll("distinct");
      await seedPeople(c);
      assert.deepEqual((await c.distinct("city")).sort(), ["lima", "oslo", "rome"]);
      assert.deepEqual((await c.distinct("city", { age: 25 })).sort(), ["lima", "oslo"]);
      assert.deepEqual((await c.distinct("address.zip", { city: "rome" })).sort(), ["100", "300"]);
      assert.deepEqual(await c.distinct("city", { age: 1000 }), []);
    },
  },
  {
    name: "ObjectId, Date and Decimal128 round trip",
    async fn({ coll }) {
      const c = coll("types");
      const oid = new ObjectId();
      const ref = new ObjectId();
      const when = new Date("2023-04-05T06:07:08.009Z");
      await c.insertMany([{
        _id: oid,
        ref,
        when,
        price: Decimal128.fromString("12.34"),
        nested: { refs: [ref], at: when },
        n: 1.5,
        flag: false,
        none: null,
      }]);
      const got = await c.findOne({ _id: oid });
      assert.ok(got);
      assert.ok(got._id instanceof ObjectId && got._id.equals(oid));
      assert.ok(got.ref instanceof ObjectId && got.ref.equals(ref));
      assert.ok(got.when instanceof Date && got.when.getTime() === when.getTime());
      assert.ok(got.price instanceof Decimal128);
      assert.equal(got.price.toString(), "12.34");
      const nested = got.nested as { refs: unknown[]; at: unknown };
      assert.ok(nested.refs[0] instanceof ObjectId && nested.refs[0].equals(ref));
      assert.ok(nested.at instanceof Date);
      assert.equal(got.n, 1.5);
      assert.equal(got.flag, false);
      assert.equal(got.none, null);
      assert.equal((await c.find({ ref })).length, 1);
    },
  },
  {
    name: "Decimal128 ranges and equality, top level and nested",
    async fn({ coll }) {
      const c = coll("decimals");
      const dec = (text: string) => Decimal128.fromString(text);
      await c.insertMany([
        { _id: 1, price: dec("9.99"), box: { price: dec("9.99") } },
        { _id: 2, price: dec("12.50"), box: { price: dec("12.50") } },
        { _id: 3, price: dec("100"), box: { price: dec("100") } },
      ]);
      const ids = async (filter: Record<string, unknown>) =>
        (await c.find(filter, { sort: { _id: 1 } })).map((d) => d._id);
      assert.deepEqual(await ids({ price: { $lt: dec("12.5") } }), [1]);
      assert.deepEqual(await ids({ price: { $gte: dec("12.5") } }), [2, 3]);
      assert.deepEqual(await ids({ price: dec("12.50") }), [2]);
      assert.deepEqual(await ids({ price: { $in: [dec("100"), dec("9.99")] } }), [1, 3]);
      assert.deepEqual(await ids({ "box.price": { $gt: dec("10"), $lt: dec("100") } }), [2]);
      assert.deepEqual(await ids({ $or: [{ price: { $lte: dec("9.99") } }, { _id: 3 }] }), [1, 3]);
    },
  },
  {
    name: "number ranges and members on dotted paths through arrays of documents",
    async fn({ coll }) {
      const c = coll("ranges");
      await c.insertMany([
        { _id: 1, a: [{ b: 7 }] },
        { _id: 3, a: { b: [7] } },
        { _id: 4, a: { b: [[7]] } },
        { _id: 5, a: [{ b: [7] }] },
        { _id: 6, a: [{ b: 3 }, { b: 7 }] },
        { _id: 7, a: { b: null } },
        { _id: 8, a: [] },
        { _id: 9, a: { b: "9" } },
        { _id: 10, a: [1, { b: 7 }] },
        { _id: 11, a: { b: 5 } },
        { _id: 12, a: [{ b: 5 }, { b: 3 }] },
        { _id: 13, a: [6, 7] },
      ]);
      const both = (condition: Record<string, unknown>, expected: number[]) =>
        findsAloneAndInOr(c, "a.b", condition, expected);
      await both({ $gt: 5 }, [1, 3, 5, 6, 10]);
      await both({ $gte: 5 }, [1, 3, 5, 6, 10, 11, 12]);
      await both({ $lt: 5 }, [6, 12]);
      await both({ $lte: 5 }, [6, 11, 12]);
      // Without $elemMatch, one element may meet one bound and another the other.
      await both({ $gt: 4, $lt: 6 }, [6, 11, 12]);
      await both({ $in: [7, 9] }, [1, 3, 5, 6, 10]);
      await both({ $nin: [7, 9] }, [4, 7, 8, 9, 11, 12, 13]);
      // $exists: a value reached, null included.
      await both({ $exists: true }, [1, 3, 4, 5, 6, 7, 9, 10, 11, 12]);
      await both({ $exists: false }, [8, 13]);
      // Inside $elemMatch, a member that is no document has no `b`.
      await findsAloneAndInOr(c, "a", { $elemMatch: { b: { $gte: 5, $lt: 8 } } }, [
        1,
        5,
        6,
        10,
        12,
      ]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { b: { $in: [3, 7] } } }, [1, 5, 6, 10, 12]);
      // An array position in the path.
      await findsAloneAndInOr(c, "a.0.b", { $gte: 5 }, [1, 5, 12]);
      await findsAloneAndInOr(c, "a.1.b", { $lte: 7 }, [6, 10, 12]);
    },
  },
  {
    name: "string and date ranges on dotted paths through arrays, leaf arrays under arrays",
    async fn({ coll }) {
      const c = coll("text_ranges");
      const day = (n: number) => new Date(Date.UTC(2026, 0, n));
      await c.insertMany([
        { _id: 1, a: [{ s: "b", d: day(1) }, { s: ["a", "d"], d: [day(3)] }] },
        { _id: 2, a: { s: "\uFFFF", d: day(2) } },
        { _id: 3, a: { s: "\u{1F600}", d: day(5) } },
        { _id: 4, a: [{ s: "c" }, { s: 5 }, { d: "2026-01-09" }] },
      ]);
      await findsAloneAndInOr(c, "a.s", { $gt: "c" }, [1, 2, 3]);
      await findsAloneAndInOr(c, "a.s", { $lt: "b" }, [1]);
      await findsAloneAndInOr(c, "a.d", { $gt: day(2) }, [1, 3]);
      await findsAloneAndInOr(c, "a.d", { $lte: day(2) }, [1, 2]);
    },
  },
  {
    name: "string ranges in code point order: beyond U+FFFF after U+FFFF, as in UTF-8",
    needs: ["utf8-order"],
    async fn({ coll }) {
      const c = coll("code_points");
      await c.insertMany([
        { _id: 1, s: "\uFFFF", a: [{ s: "\uFFFF" }] },
        { _id: 2, s: "\u{1F600}", a: [{ s: "\u{1F600}" }] },
      ]);
      for (const path of ["s", "a.s"]) {
        await findsAloneAndInOr(c, path, { $gt: "\uFFFF" }, [2]);
        await findsAloneAndInOr(c, path, { $lt: "\u{1F600}" }, [1]);
      }
    },
  },
  {
    name: "$all: each member an equality of its own, on scalars and through arrays of documents",
    needs: ["all-as-equalities"],
    async fn({ coll }) {
      const c = coll("all_members");
      await c.insertMany([
        { _id: 1, v: 7, a: [{ b: 7 }] },
        { _id: 2, v: [7, 3], a: [{ b: 3 }, { b: [7] }] },
        { _id: 3, v: [3], a: { b: [3, 7] } },
        { _id: 4, v: "7", a: [{ b: 3 }] },
      ]);
      await findsAloneAndInOr(c, "v", { $all: [7] }, [1, 2]);
      await findsAloneAndInOr(c, "v", { $all: [3, 7] }, [2]);
      await findsAloneAndInOr(c, "a.b", { $all: [7] }, [1, 2, 3]);
      await findsAloneAndInOr(c, "a.b", { $all: [3, 7] }, [2, 3]);
      await findsAloneAndInOr(c, "v", { $all: [] }, []);
    },
  },
  {
    name: "$type: by alias and number, array elements included, through arrays of documents",
    async fn({ coll }) {
      const c = await typedDocs(coll);
      const both = (path: string, type: unknown, expected: number[]) =>
        findsAloneAndInOr(c, path, { $type: type }, expected);
      await both("v", "number", [1, 2]);
      await both("v", "int", [1]);
      await both("v", 16, [1]);
      await both("v", "double", [2]);
      await both("v", 1, [2]);
      await both("v", "string", [2, 4]);
      await both("v", 2, [2, 4]);
      await both("v", "array", [2, 3, 9]);
      await both("v", 4, [2, 3, 9]);
      await both("v", "null", [5]);
      await both("v", "object", [6]);
      await both("v", "objectId", [7]);
      await both("v", "date", [8]);
      await both("_id", "int", [1, 2, 3, 4, 5, 6, 7, 8, 9]);
      await both("a.b", "number", [1, 2, 9]);
      await both("a.b", "int", [1, 2]);
      await both("a.b", "long", []);
      await both("a.b", "double", [9]);
      await both("a.b", "string", [2]);
      await both("a.b", "array", [2, 3, 8]);
      await both("a.b", "null", [4]);
      await both("a.b", "bool", [7]);
      await both("a.b", "date", [8]);
      await both("a.0.b", "number", [1]);
      for (const bad of ["bogus", 99, []]) {
        await assert.rejects(c.find({ v: { $type: bad } }), InvalidQueryError, `${bad}`);
      }
    },
  },
  {
    name: "$type: a list of types, the objectId number, a fractional number refused",
    needs: ["type-operands"],
    async fn({ coll }) {
      const c = await typedDocs(coll);
      await findsAloneAndInOr(c, "v", { $type: 7 }, [7]);
      await findsAloneAndInOr(c, "v", { $type: ["string", "objectId"] }, [2, 4, 7]);
      await findsAloneAndInOr(c, "a.b", { $type: ["bool", 9] }, [7, 8]);
      await assert.rejects(c.find({ v: { $type: 2.5 } }), InvalidQueryError);
    },
  },
  {
    // MongoDB's own test of $elemMatch on elements (jstests/core/query/elemmatch/elemmatch_value.js).
    name: "$elemMatch on elements: each element one value, an array element included",
    needs: ["elemmatch-values"],
    async fn({ coll }) {
      const c = coll("elem_values");
      const shapes = [
        5,
        [5],
        [3, 7],
        [[5]],
        [[3, 7]],
        [[[5]]],
        [[[3, 7]]],
        { b: 5 },
        { b: [5] },
        { b: [3, 7] },
        [{ b: 5 }],
        [{ b: 3 }, { b: 7 }],
        [{ b: [5] }],
        [{ b: [3, 7] }],
        [[{ b: 5 }]],
        [[{ b: 3 }, { b: 7 }]],
        [[{ b: [5] }]],
        [[{ b: [3, 7] }]],
      ];
      await c.insertMany(shapes.map((a, i) => ({ _id: i + 1, a })));
      const between = { $lt: 6, $gt: 4 };
      await findsAloneAndInOr(c, "a", { $elemMatch: between }, [2]);
      await findsAloneAndInOr(c, "a.b", { $elemMatch: between }, [9, 13]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { $elemMatch: between } }, [4]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { $type: "number" } }, [2, 3]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { $type: "array" } }, [
        4,
        5,
        6,
        7,
        15,
        16,
        17,
        18,
      ]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { b: between } }, [11, 13, 14]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { b: { $elemMatch: between } } }, [13]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { $elemMatch: { b: between } } }, [15, 17, 18]);
      // An array element is one value: equal to an array, of its size, of no number.
      await findsAloneAndInOr(c, "a", { $elemMatch: { $eq: [5] } }, [4]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { $in: [5] } }, [2]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { $size: 2 } }, [5, 16]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { $ne: 5, $type: "array" } }, [
        4,
        5,
        6,
        7,
        15,
        16,
        17,
        18,
      ]);
      await assert.rejects(c.find({ a: { $elemMatch: 5 } }), InvalidQueryError);
    },
  },
  {
    name: "null: equality to null matches null, a missing field and a list holding null",
    async fn({ coll }) {
      const c = await nullShapes(coll);
      const nulls = ["a_null", "a_value_array_all_nulls", "a_value_array_with_null", "no_a"];
      await findsAloneAndInOr(c, "a", { $eq: null }, nulls);
      await findsAloneAndInOr(c, "a", { $in: [null, 75] }, nulls);
      await findsAloneAndInOr(c, "a", { $ne: null }, await nullShapesBut(c, ...nulls));
      await findsAloneAndInOr(c, "a", { $exists: false }, ["no_a"]);
      await findsAloneAndInOr(c, "a", { $elemMatch: { $eq: null } }, [
        "a_value_array_all_nulls",
        "a_value_array_with_null",
      ]);
      await findsAloneAndInOr(
        c,
        "a.b",
        { $exists: false },
        await nullShapesBut(
          c,
          "a_subobject_b_not_null",
          "a_subobject_b_null",
          "a_object_array_b_mix_null_missing",
          "a_object_array_no_b_nulls",
          "a_object_array_some_b_nulls",
          "a_object_array_some_b_missing",
        ),
      );
    },
  },
  {
    name: "null: $nin, ranges and dotted paths through lists, as MongoDB reads equality to null",
    needs: ["null-paths"],
    async fn({ coll }) {
      const c = await nullShapes(coll);
      const nulls = ["a_null", "a_value_array_all_nulls", "a_value_array_with_null", "no_a"];
      const others = await nullShapesBut(c, ...nulls);
      await findsAloneAndInOr(c, "a", { $nin: [null, 75] }, others);
      await findsAloneAndInOr(c, "a", { $not: { $gte: null } }, others);
      await findsAloneAndInOr(c, "a", { $lte: null }, nulls);
      await findsAloneAndInOr(c, "a", { $gt: null }, []);
      await findsAloneAndInOr(
        c,
        "a",
        { $nin: [null, []] },
        await nullShapesBut(c, ...nulls, "a_double_array", "a_empty_array"),
      );
      // On the way, anything but a document has no `b`, and a list stands for its members.
      const withB = ["a_object_array_no_b_nulls", "a_subobject_b_not_null"];
      const noB = await nullShapesBut(c, ...withB);
      await findsAloneAndInOr(c, "a.b", { $eq: null }, noB);
      await findsAloneAndInOr(c, "a.b", { $in: [null, 75] }, noB);
      await findsAloneAndInOr(c, "a.b", { $ne: null }, withB);
      await findsAloneAndInOr(c, "a.b", { $nin: [null, 75] }, withB);
      await findsAloneAndInOr(c, "a.b", { $gte: null }, noB);
    },
  },
  {
    name: "$size: lists of that many members at the end of a path; a bad size refused",
    async fn({ coll }) {
      const c = coll("sizes");
      await c.insertMany([
        { _id: 1, a: [1, 2], b: [{ c: [1, 2] }, { c: 3 }] },
        { _id: 2, a: [[1, 2]], b: { c: [1, 2, 3] } },
        { _id: 3, a: 5, b: [{ c: [4] }] },
        { _id: 4, a: [], b: [] },
      ]);
      await findsAloneAndInOr(c, "a", { $size: 2 }, [1]);
      await findsAloneAndInOr(c, "a", { $size: 1 }, [2]);
      await findsAloneAndInOr(c, "a", { $size: 0 }, [4]);
      await findsAloneAndInOr(c, "a", { $size: new Long(2) }, [1]);
      await findsAloneAndInOr(c, "a", { $size: new Int32(1) }, [2]);
      // Through a list of documents: each `c` that is a list, by its own length.
      await findsAloneAndInOr(c, "b.c", { $size: 2 }, [1]);
      await findsAloneAndInOr(c, "b.c", { $size: 1 }, [3]);
      await findsAloneAndInOr(c, "b.c", { $size: 3 }, [2]);
      for (const bad of [-1, 3.2, "2"]) {
        await assert.rejects(c.find({ a: { $size: bad } }), InvalidQueryError, `$size ${bad}`);
      }
    },
  },
  {
    name: "refused operands: $mod's list, $not's empty document, a regex flag MongoDB lacks",
    async fn({ coll }) {
      const c = coll("refused_operands");
      await c.insertMany([{ _id: 1, a: 1, n: 8 }]);
      for (
        const filter of [
          { n: { $mod: [0, 1] } },
          { n: { $mod: [10] } },
          { n: { $mod: ["a", 0] } },
          { n: { $mod: [10, 1, 1] } },
          { a: { $not: {} } },
          { a: { $regex: "x", $options: "g" } },
        ]
      ) {
        await assert.rejects(c.find(filter), InvalidQueryError, JSON.stringify(filter));
      }
    },
  },
  {
    name: "refused operands: empty $and/$or/$nor, $not of a value, operators in $in or $all",
    needs: ["operand-refusals"],
    async fn({ coll }) {
      const c = coll("refused_logic");
      await c.insertMany([{ _id: 1, a: 1 }]);
      for (
        const filter of [
          { $and: [] },
          { $or: [] },
          { $nor: [] },
          { a: { $not: "a" } },
          { a: { $in: [{ $elemMatch: { b: 1 } }] } },
          { a: { $nin: [{ $gt: 1 }] } },
          { a: { $ne: /a/ } },
          { a: { $gt: /a/ } },
          { a: { $all: [{ $gt: 5 }] } },
        ]
      ) {
        await assert.rejects(c.find(filter), InvalidQueryError, JSON.stringify(filter));
      }
    },
  },
  {
    name: "$mod: whole parts of numbers of any type, members of a list, 64 bits",
    needs: ["mod-truncation"],
    async fn({ coll }) {
      const c = coll("mods");
      await c.insertMany([
        { _id: 1, n: 8.5 },
        { _id: 2, n: Decimal128.fromString("12.7") },
        { _id: 3, n: -9 },
        { _id: 4, n: [3, [4]] },
        { _id: 5, n: 1e19 },
        { _id: 6, n: new Long(20) },
        { _id: 7, n: "8" },
      ]);
      await findsAloneAndInOr(c, "n", { $mod: [4, 0] }, [1, 2, 6]);
      await findsAloneAndInOr(c, "n", { $mod: [3, 0] }, [2, 3, 4]);
      await findsAloneAndInOr(c, "n", { $mod: [4, -1] }, [3]);
      // The divisor and the remainder are truncated too.
      await findsAloneAndInOr(c, "n", { $mod: [4.9, 0.5] }, [1, 2, 6]);
      await findsAloneAndInOr(c, "n", { $mod: [new Long(4), 0] }, [1, 2, 6]);
      // Beyond 64 bits a number has no whole part to divide.
      await findsAloneAndInOr(c, "n", { $mod: [1, 0] }, [1, 2, 3, 4, 6]);
    },
  },
  {
    name: "$all and $not $in with a null or a list: the equalities MongoDB reads",
    needs: ["all-as-equalities", "nested-array-equality"],
    async fn({ coll }) {
      const c = coll("all_null_lists");
      await c.insertMany([
        { _id: 1, a: [1, 2] },
        { _id: 2, a: [[1, 2]] },
        { _id: 3, a: 5 },
        { _id: 4, a: [] },
      ]);
      await findsAloneAndInOr(c, "x", { $all: [null] }, [1, 2, 3, 4]);
      await findsAloneAndInOr(c, "a", { $all: [[1, 2]] }, [1, 2]);
      await findsAloneAndInOr(c, "a", { $all: [[]] }, [4]);
      await findsAloneAndInOr(c, "a", { $in: [[1, 2]] }, [1, 2]);
      await findsAloneAndInOr(c, "a", { $not: { $in: [[1, 2]] } }, [3, 4]);
      await findsAloneAndInOr(c, "a", { $not: { $all: [[1, 2]] } }, [3, 4]);
    },
  },
  {
    name: "a number in a path: the element at that position as one value, and fields named so",
    needs: ["array-positions"],
    async fn({ coll }) {
      const c = coll("positions");
      await c.insertMany([
        { _id: 1, a: [42] },
        { _id: 2, a: { "0": 42 } },
        { _id: 3, a: [[42]] },
        { _id: 4, a: [{ "0": 42 }] },
        { _id: 5, a: { "0": [42] } },
        { _id: 6, a: [[[42]]] },
        { _id: 7, a: [{ "0": [42] }] },
        { _id: 8, a: { "0": [[42]] } },
        { _id: 9, a: [[{ "0": 42 }]] },
        { _id: 10, a: [{ "1": 4 }, 5] },
      ]);
      const forty2 = [1, 2, 4, 5, 7];
      await findsAloneAndInOr(c, "a.0", { $eq: 42 }, forty2);
      await findsAloneAndInOr(c, "a.0", { $gt: 41 }, forty2);
      await findsAloneAndInOr(c, "a.0", { $in: [41, 42] }, forty2);
      await findsAloneAndInOr(c, "a.0", { $type: "number" }, forty2);
      await findsAloneAndInOr(c, "a.0", { $ne: 42 }, [3, 6, 8, 9, 10]);
      await findsAloneAndInOr(c, "a.0", { $size: 1 }, [3, 5, 6, 7, 8, 9]);
      await findsAloneAndInOr(c, "a.0.0", { $eq: 42 }, [3, 4, 5, 7, 9]);
      await findsAloneAndInOr(c, "a.1", { $eq: 4 }, [10]);
      await findsAloneAndInOr(c, "a.1", { $exists: true }, [10]);
    },
  },
  {
    name:
      "a range against a list compares a stored list as a whole, and its members that are lists",
    needs: ["list-ranges"],
    async fn({ coll }) {
      const c = coll("list_ranges");
      await c.insertMany([
        { _id: 1, a: [1] },
        { _id: 2, a: [1, 2] },
        { _id: 3, a: [2, 1] },
        { _id: 4, a: [3] },
        { _id: 5, a: [[1], 5] },
        { _id: 6, a: 1 },
        { _id: 7, a: [[3]] },
      ]);
      await findsAloneAndInOr(c, "a", { $lt: [2] }, [1, 2, 5]);
      // A list orders after a number: [[1], 5] is above [1, 2] as a whole.
      await findsAloneAndInOr(c, "a", { $gte: [1, 2] }, [2, 3, 4, 5, 7]);
      await findsAloneAndInOr(c, "a", { $gt: [2, 1] }, [4, 5, 7]);
      await findsAloneAndInOr(c, "a", { $lte: [1] }, [1, 5]);
    },
  },
  {
    name: "a pattern also matches a stored pattern with the same source and flags",
    needs: ["stored-patterns"],
    async fn({ coll }) {
      const c = coll("stored_patterns");
      await c.insertMany([
        { _id: 1, r: /^a/ },
        { _id: 2, r: /^a/i },
        { _id: 3, r: "abc" },
        { _id: 4, r: [/^b/, "x"] },
      ]);
      await findsAloneAndInOr(c, "r", { $regex: /^a/ }, [1, 3]);
      await findsAloneAndInOr(c, "r", { $regex: /^a/i }, [2, 3]);
      await findsAloneAndInOr(c, "r", { $regex: /^b/ }, [4]);
    },
  },
  {
    name: "aggregate: $sum over numbers of every type, $count of no documents is no document",
    async fn({ coll }) {
      const c = coll("typed_sums");
      await c.insertMany([
        { _id: 1, n: new Long(5) },
        { _id: 2, n: new Long(7) },
        { _id: 3, n: 1 },
        { _id: 4, n: "9" },
      ]);
      const [sum] = await c.aggregate([{ $group: { _id: null, s: { $sum: "$n" } } }]);
      assert.equal(Number(sum.s), 13);
      assert.deepEqual(await c.aggregate([{ $match: { _id: 99 } }, { $count: "k" }]), []);
    },
  },
  {
    name: "aggregate: sums of decimals are exact decimals",
    needs: ["decimal-sums"],
    async fn({ coll }) {
      const c = coll("decimal_sums");
      await c.insertMany([
        { _id: 1, p: Decimal128.fromString("0.10") },
        { _id: 2, p: Decimal128.fromString("0.20") },
        { _id: 3, p: Decimal128.fromString("1.5") },
      ]);
      const [sum] = await c.aggregate([{ $group: { _id: null, s: { $sum: "$p" } } }]);
      assert.ok(sum.s instanceof Decimal128, `${sum.s}`);
      assert.equal(String(sum.s), "1.80");
    },
  },
  {
    name: "aggregate: $avg, $min and $max over decimals and longs",
    needs: ["$avg"],
    async fn({ coll }) {
      const c = coll("typed_group");
      await c.insertMany([
        { _id: 1, p: Decimal128.fromString("1.5"), n: new Long(5) },
        { _id: 2, p: Decimal128.fromString("2.25"), n: Long.fromNumber(-7) },
        { _id: 3, n: null },
      ]);
      const [out] = await c.aggregate([
        { $group: { _id: null, a: { $avg: "$p" }, mn: { $min: "$n" }, mx: { $max: "$n" } } },
      ]);
      assert.equal(String(out.a), "1.875");
      assert.equal(Number(out.mn), -7);
      assert.equal(Number(out.mx), 5);
    },
  },
  {
    name:
      "aggregate: $round half to even, $trunc, $toString of an ObjectId, $sum of one operand, case",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("expressions");
      const id = new ObjectId("6650c2f1a2b3c4d5e6f70809");
      await c.insertMany([{ _id: id, x: 2.5, y: 35, d: Decimal128.fromString("1.005") }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          r: { $round: "$x" },
          r1: { $round: ["$y", -1] },
          t: { $trunc: [-1.29, 1] },
          rd: { $round: ["$d", 2] },
          s: { $toString: "$_id" },
          q: { $sum: "$x" },
          a: { $add: ["$d", 1] },
        },
      }]);
      assert.equal(out.r, 2);
      assert.equal(out.r1, 40);
      assert.equal(out.t, -1.2);
      assert.equal(String(out.rd), "1.00");
      assert.equal(out.s, "6650c2f1a2b3c4d5e6f70809");
      assert.equal(out.q, 2.5);
      assert.equal(String(out.a), "2.005");
      const [cased] = await c.aggregate([{
        $project: {
          _id: 0,
          up: { $toUpper: "ó-ab" },
          low: { $toLower: "$missing" },
          n: { $toUpper: "$y" },
          types: [{ $type: "$_id" }, { $type: "$x" }, { $type: "$y" }, { $type: "$missing" }],
        },
      }]);
      assert.deepEqual(cased, {
        up: "ó-AB",
        low: "",
        n: "35",
        types: ["objectId", "double", "int", "missing"],
      });
      const [lists] = await c.aggregate([{
        $project: {
          _id: 0,
          m: { $mod: ["$d", 0.5] },
          mn: { $mod: ["$missing", 3] },
          s: { $split: ["a,b", null] },
          e: { $arrayElemAt: [[1, 2, 3], -1] },
        },
      }]);
      assert.deepEqual({ ...lists, m: String(lists.m) }, { m: "0.005", mn: null, s: null, e: 3 });
      const [converted] = await c.aggregate([{
        $project: {
          _id: 0,
          at: { $toDate: 1767225600000 },
          born: { $toDate: "$_id" },
          dec: { $toDecimal: "2.50" },
          yes: { $convert: { input: 0.5, to: "bool" } },
          whole: { $convert: { input: -1.9, to: "int" } },
          bad: { $convert: { input: true, to: "date", onError: "no" } },
        },
      }]);
      assert.deepEqual({ ...converted, dec: String(converted.dec) }, {
        at: new Date("2026-01-01T00:00:00Z"),
        born: id.getTimestamp(),
        dec: "2.50",
        yes: true,
        whole: -1,
        bad: "no",
      });
      for (
        const bad of [
          { $mod: [10, 0] },
          { $split: ["abc", ""] },
          { $size: "$missing" },
          { $switch: { branches: [{ case: { $eq: ["$x", 0] }, then: 1 }] } },
          { $switch: { branches: [] } },
          { $cond: { if: true, then: 1 } },
          { $ifNull: ["$x"] },
        ]
      ) {
        await assert.rejects(
          c.aggregate([{ $project: { v: bad } }]),
          InvalidQueryError,
          JSON.stringify(bad),
        );
      }
    },
  },
  {
    name: "aggregate: $project keeps _id first, kept fields in document order, computed ones after",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("project_order");
      await c.insertMany([{ _id: 1, z: 1, a: 2, m: 3 }]);
      const [kept] = await c.aggregate([{ $project: { m: 1, z: 1 } }]);
      assert.deepEqual(Object.keys(kept), ["_id", "z", "m"]);
      const [mixed] = await c.aggregate([{ $project: { y: { $add: ["$a", 1] }, m: 1, b: "$z" } }]);
      assert.deepEqual(Object.entries(mixed), [["_id", 1], ["m", 3], ["y", 3], ["b", 1]]);
    },
  },
  {
    name: "aggregate: date expressions read time zone names such as UTC and Etc/GMT-2",
    needs: ["date-operators"],
    async fn({ coll }) {
      const c = coll("zones");
      await c.insertMany([{ _id: 1, at: new Date(Date.UTC(2026, 6, 4, 22, 30)) }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          utc: { $dateToString: { format: "%Y-%m-%d %H:%M", date: "$at", timezone: "UTC" } },
          plus2: { $dateToString: { format: "%d %H:%M", date: "$at", timezone: "Etc/GMT-2" } },
          ny: { $hour: { date: "$at", timezone: "America/New_York" } },
          none: { $dateToString: { date: "$at", timezone: null } },
        },
      }]);
      assert.deepEqual(out, { utc: "2026-07-04 22:30", plus2: "05 00:30", ny: 18, none: null });
    },
  },
  {
    name: "aggregate: $dateToString, $week and $isoWeekYear number days and weeks as MongoDB does",
    needs: ["date-operators"],
    async fn({ coll }) {
      const c = coll("date_format");
      const days = ["2021-01-01", "2021-01-03", "2020-12-31", "2024-12-30", "2023-01-01"];
      await c.insertMany(days.map((day, i) => ({ _id: i, at: new Date(`${day}T00:00:00Z`) })));
      const out = await c.aggregate([
        { $sort: { _id: 1 } },
        {
          $project: {
            _id: 0,
            d: { $dateToString: { date: "$at", format: "%G-W%V-%u %w %U %j %%" } },
            week: { $week: "$at" },
            isoYear: { $isoWeekYear: { date: "$at", timezone: "UTC" } },
          },
        },
      ]);
      assert.deepEqual(out.map((o) => [o.week, o.isoYear]), [
        [0, 2020],
        [1, 2020],
        [52, 2020],
        [52, 2025],
        [1, 2022],
      ]);
      assert.deepEqual(out.map((o) => o.d), [
        "2020-W53-5 6 00 001 %",
        "2020-W53-7 1 01 003 %",
        "2020-W53-4 5 52 366 %",
        "2025-W01-1 2 52 365 %",
        "2022-W52-7 1 01 001 %",
      ]);
    },
  },
  {
    name: "aggregate: $dateToString writes offsets, ObjectId times and onNull as MongoDB does",
    needs: ["date-operators"],
    async fn({ coll }) {
      const c = coll("date_offsets");
      await c.insertMany([{
        _id: 1,
        at: new Date("2021-06-01T12:00:00Z"),
        id: new ObjectId("5f0000000000000000000000"),
      }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          india: { $dateToString: { date: "$at", format: "%H:%M %z %Z", timezone: "+05:30" } },
          west: { $dateToString: { date: "$at", format: "%H:%M %z %Z", timezone: "-05:30" } },
          ny: { $dateToString: { date: "$at", format: "%H %z", timezone: "America/New_York" } },
          created: { $dateToString: { date: "$id", format: "%Y-%m-%d" } },
          none: { $dateToString: { date: "$missing", onNull: "no date" } },
          nothing: { $dateToString: { date: "$missing" } },
          unformatted: { $dateToString: { date: "$at", format: null } },
        },
      }]);
      assert.deepEqual(out, {
        india: "17:30 +0530 330",
        west: "06:30 -0530 -330",
        ny: "08 -0400",
        created: "2020-07-04",
        none: "no date",
        nothing: null,
        unformatted: null,
      });
    },
  },
  {
    name: "aggregate: $dateToString refuses an unknown specifier and a lone % at the end",
    needs: ["date-operators"],
    async fn({ coll }) {
      const c = coll("date_format_refused");
      await c.insertMany([{ _id: 1, at: new Date("2021-06-01T12:00:00Z") }]);
      for (const format of ["%Y %x", "100%"]) {
        await assert.rejects(
          c.aggregate([{ $project: { d: { $dateToString: { date: "$at", format } } } }]),
          format,
        );
      }
    },
  },
  {
    name: "aggregate: date part operators read ObjectIds, lists of one, nulls and old offsets",
    needs: ["date-operators"],
    async fn({ coll }) {
      const c = coll("date_parts_of");
      await c.insertMany([{
        _id: new ObjectId("5f0000000000000000000000"),
        at: new Date("2021-01-03T10:20:30.040Z"),
        // New York kept its local mean time (-04:56:02) until 1883.
        old: new Date("1850-01-01T12:00:00Z"),
      }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          created: { $year: "$_id" },
          listed: { $dayOfWeek: ["$at"] },
          missing: { $month: "$nothing" },
          noZone: { $hour: { date: "$at", timezone: "$nothing" } },
          kolkata: { $minute: { date: "$at", timezone: "Asia/Kolkata" } },
          lmt: {
            $concat: [
              { $toString: { $hour: { date: "$old", timezone: "America/New_York" } } },
              ":",
              { $toString: { $minute: { date: "$old", timezone: "America/New_York" } } },
              ":",
              { $toString: { $second: { date: "$old", timezone: "America/New_York" } } },
            ],
          },
        },
      }]);
      assert.deepEqual(out, {
        created: 2020,
        listed: 1,
        missing: null,
        noZone: null,
        kolkata: 50,
        lmt: "7:3:58",
      });
    },
  },
  {
    name: "aggregate: $dateAdd, $dateDiff and $dateTrunc count in the time zone given",
    needs: ["date-operators"],
    async fn({ coll }) {
      const c = coll("date_arithmetic");
      await c.insertMany([{
        _id: 1,
        jan31: new Date("2021-01-31T00:00:00Z"),
        // Midnight in New York on the day daylight saving time starts there.
        dst: new Date("2021-03-14T05:00:00Z"),
        late: new Date("2021-01-06T03:00:00Z"),
        fri: new Date("2021-01-01T23:00:00Z"),
        mon: new Date("2021-01-04T01:00:00Z"),
      }]);
      const ny = "America/New_York";
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          month: { $dateAdd: { startDate: "$jan31", unit: "month", amount: 1 } },
          back: { $dateSubtract: { startDate: "$jan31", unit: "quarter", amount: 1 } },
          day: { $dateAdd: { startDate: "$dst", unit: "day", amount: 1, timezone: ny } },
          hours: { $dateAdd: { startDate: "$dst", unit: "hour", amount: 24, timezone: ny } },
          days: { $dateDiff: { startDate: "$fri", endDate: "$mon", unit: "day" } },
          weeks: { $dateDiff: { startDate: "$fri", endDate: "$mon", unit: "week" } },
          mondays: {
            $dateDiff: { startDate: "$fri", endDate: "$mon", unit: "week", startOfWeek: "mon" },
          },
          nyDay: { $dateTrunc: { date: "$late", unit: "day", timezone: ny } },
          week: { $dateTrunc: { date: "$late", unit: "week" } },
          twoMonths: { $dateTrunc: { date: "$dst", unit: "month", binSize: 2 } },
          none: { $dateAdd: { startDate: "$missing", unit: "day", amount: 1 } },
        },
      }]);
      // A unit is one of MongoDB's own, never a name the lookup table inherits.
      await assert.rejects(c.aggregate([{
        $project: { v: { $dateAdd: { startDate: "$jan31", unit: "constructor", amount: 1 } } },
      }]));
      assert.deepEqual(out, {
        month: new Date("2021-02-28T00:00:00Z"),
        back: new Date("2020-10-31T00:00:00Z"),
        day: new Date("2021-03-15T04:00:00Z"),
        hours: new Date("2021-03-15T05:00:00Z"),
        days: 3,
        weeks: 1,
        mondays: 1,
        nyDay: new Date("2021-01-05T05:00:00Z"),
        week: new Date("2021-01-03T00:00:00Z"),
        twoMonths: new Date("2021-03-01T00:00:00Z"),
        none: null,
      });
    },
  },
  {
    name: "aggregate: $dateToParts and $dateFromParts read ISO week dates and carry overflows",
    needs: ["date-operators"],
    async fn({ coll }) {
      const c = coll("date_parts");
      await c.insertMany([{ _id: 1, at: new Date("2021-01-03T10:20:30.040Z") }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          iso: { $dateToParts: { date: "$at", iso8601: true } },
          oslo: { $dateToParts: { date: "$at", timezone: "Europe/Oslo" } },
          fromIso: { $dateFromParts: { isoWeekYear: 2020, isoWeek: 53, isoDayOfWeek: 7 } },
          carried: { $dateFromParts: { year: 2020, month: 14, day: 0, hour: 25 } },
          zoned: { $dateFromParts: { year: 2021, month: 7, day: 4, timezone: "America/New_York" } },
          epoch: { $dateFromParts: { year: 1970, millisecond: 1502095918551 } },
        },
      }]);
      assert.deepEqual(out, {
        iso: {
          isoWeekYear: 2020,
          isoWeek: 53,
          isoDayOfWeek: 7,
          hour: 10,
          minute: 20,
          second: 30,
          millisecond: 40,
        },
        oslo: { year: 2021, month: 1, day: 3, hour: 11, minute: 20, second: 30, millisecond: 40 },
        fromIso: new Date("2021-01-03T00:00:00Z"),
        carried: new Date("2021-02-01T01:00:00Z"),
        zoned: new Date("2021-07-04T04:00:00Z"),
        epoch: new Date(1502095918551),
      });
    },
  },
  {
    name:
      "aggregate: $dateFromString reads ISO 8601 and free texts, formats and zones as MongoDB does",
    needs: ["date-operators"],
    async fn({ coll }) {
      const c = coll("date_from_string");
      await c.insertMany([{ _id: 1 }]);
      const read = (args: Doc) => ({ $dateFromString: args });
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          day: read({ dateString: "2021-06-01" }),
          offset: read({ dateString: "2021-06-01T12:30:00.250+02:00" }),
          spaced: read({ dateString: "2021-06-01 12:30" }),
          zoned: read({ dateString: "2021-06-01T12:00", timezone: "America/New_York" }),
          formatted: read({ dateString: "15-Jun-2021 7:05", format: "%d-%b-%Y %H:%M" }),
          isoWeek: read({ dateString: "2020-W53-7", format: "%G-W%V-%u" }),
          rfc: read({ dateString: "Tue, 01 Jun 2021 12:00:00 GMT" }),
          named: read({ dateString: "June 1, 2021" }),
          us: read({ dateString: "6/1/21" }),
          spoken: read({ dateString: "July 4th, 2017 11am" }),
          gmt: read({ dateString: "2017-07-04 12:48:07 GMT+0545" }),
          utc: read({ dateString: "2021-06-01 12:00:00 UTC" }),
          bad: read({ dateString: "2021-02-30", onError: "not a date" }),
          // A long text is no date, and costs no pattern's time.
          long: read({ dateString: `1:11.${"1".repeat(200_000)} x`, onError: "too long" }),
          none: read({ dateString: "$missing", onNull: "no text" }),
        },
      }]);
      assert.deepEqual(out, {
        day: new Date("2021-06-01T00:00:00Z"),
        offset: new Date("2021-06-01T10:30:00.250Z"),
        spaced: new Date("2021-06-01T12:30:00Z"),
        zoned: new Date("2021-06-01T16:00:00Z"),
        formatted: new Date("2021-06-15T07:05:00Z"),
        isoWeek: new Date("2021-01-03T00:00:00Z"),
        rfc: new Date("2021-06-01T12:00:00Z"),
        named: new Date("2021-06-01T00:00:00Z"),
        us: new Date("2021-06-01T00:00:00Z"),
        spoken: new Date("2017-07-04T11:00:00Z"),
        gmt: new Date("2017-07-04T07:03:07Z"),
        utc: new Date("2021-06-01T12:00:00Z"),
        bad: "not a date",
        long: "too long",
        none: "no text",
      });
      for (const args of [{ dateString: "June" }, { dateString: "2021-06-01", format: "%Q" }]) {
        await assert.rejects(c.aggregate([{ $project: { d: read(args) } }]), JSON.stringify(args));
      }
    },
  },
  {
    name: "aggregate: math operators take numbers of every BSON type, as MongoDB does",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("math_types");
      await c.insertMany([{
        _id: 1,
        price: Decimal128.fromString("-1.5"),
        big: Long.fromString("-9007199254740993"),
        n: 100,
      }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          floor: { $floor: "$price" },
          ceil: { $ceil: "$price" },
          abs: { $abs: "$price" },
          bigAbs: { $abs: "$big" },
          log: { $log10: ["$n"] },
          pow: { $pow: [2, 10] },
          powNull: { $pow: [null, 2] },
          isNumber: [{ $isNumber: "$price" }, { $isNumber: "$big" }, { $isNumber: "x" }],
        },
      }]);
      assert.equal(String(out.floor), "-2");
      assert.equal(String(out.ceil), "-1");
      assert.equal(String(out.abs), "1.5");
      assert.equal(String(out.bigAbs), "9007199254740993");
      assert.deepEqual(
        [out.log, out.pow, out.powNull, out.isNumber],
        [2, 1024, null, [true, true, false]],
      );
      const stats = await c.aggregate([{
        $project: {
          _id: 0,
          ends: { $percentile: { input: [10, 5, 27], p: [0, 1], method: "approximate" } },
          median: { $median: { input: [3, 1, 2, 10], method: "approximate" } },
          none: { $percentile: { input: ["x"], p: [0.5], method: "approximate" } },
        },
      }]);
      assert.deepEqual(stats[0], { ends: [5, 27], median: 2, none: [null] });
      const grouped = await c.aggregate([{
        $group: { _id: null, m: { $median: { input: "$n", method: "approximate" } } },
      }]);
      assert.deepEqual(grouped, [{ _id: null, m: 100 }]);
      for (const expr of [{ $ln: 0 }, { $acos: 2 }, { $sin: Infinity }, { $sqrt: -1 }]) {
        await assert.rejects(c.aggregate([{ $project: { v: expr } }]), JSON.stringify(expr));
      }
      for (
        const expr of [
          { $median: { input: [1], method: "fancy" } },
          { $percentile: { input: [1], p: [], method: "approximate" } },
          { $median: { input: [1], p: [0.5], method: "approximate" } },
        ]
      ) {
        await assert.rejects(c.aggregate([{ $project: { v: expr } }]), JSON.stringify(expr));
      }
    },
  },
  {
    name: "aggregate: string and list operators count and compare as MongoDB does",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("strings_lists");
      await c.insertMany([{ _id: 1, s: "a∫∫b", empty: [], list: [1, 2, 3], one: [null] }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          bytes: { $indexOfBytes: ["$s", "b"] },
          points: { $indexOfCP: ["$s", "b"] },
          caseNumber: { $strcasecmp: ["1.5", 1.5] },
          caseAscii: { $strcasecmp: ["ó", "Ó"] },
          replaced: { $replaceAll: { input: "ab", find: "", replacement: "-" } },
          substrings: [
            { $substr: ["abcd", 2, -1] },
            { $substrBytes: ["ab", 0, 5] },
            { $substrBytes: [123, 0, 2] },
            { $substrCP: ["$s", 1, 2] },
          ],
          last: { $last: "$empty" },
          first: { $first: "$list" },
          joined: { $concatArrays: "$one" },
          past: { $indexOfArray: ["$list", 2, 3] },
          merged: { $mergeObjects: [{ a: 1 }, null, { b: 2 }] },
          constant: { $const: "$notAPath" },
        },
      }]);
      // No value: the field is left out.
      assert.deepEqual(out, {
        bytes: 7,
        points: 3,
        caseNumber: 0,
        caseAscii: 1,
        replaced: "-a-b-",
        substrings: ["cd", "ab", "12", "∫∫"],
        first: 1,
        joined: [null],
        past: -1,
        merged: { a: 1, b: 2 },
        constant: "$notAPath",
      });
      await assert.rejects(c.aggregate([{ $project: { m: { $mergeObjects: ["$s"] } } }]));
      const [pairs] = await c.aggregate([{
        $project: {
          _id: 0,
          o: { $arrayToObject: [[["a", 1], ["b", 2], ["a", 3]]] },
          kv: { $arrayToObject: [[{ k: "x", v: true }]] },
        },
      }]);
      assert.deepEqual(pairs, { o: { a: 3, b: 2 }, kv: { x: true } });
      // Set operators compare numbers across types; null gives null; $slice and $range take
      // numbers of any type; a $range of millions of numbers is refused.
      const [sets] = await c.aggregate([{
        $project: {
          _id: 0,
          union: { $setUnion: [[1, Long.fromNumber(1), 2], [2, 3]] },
          nullUnion: { $setUnion: ["$list", "$nothing"] },
          difference: { $setDifference: ["$list", [Long.fromNumber(2)]] },
          equal: { $setEquals: [[1, 2], [2, 1, 1]] },
          sliced: { $slice: ["$list", Long.fromNumber(2)] },
          nullSlice: { $slice: [null, 2] },
          ranged: { $range: [Long.fromNumber(0), 10, Decimal128.fromString("4")] },
        },
      }]);
      assert.deepEqual(sets, {
        union: [1, 2, 3],
        nullUnion: null,
        difference: [1, 3],
        equal: true,
        sliced: [1, 2],
        nullSlice: null,
        ranged: [0, 4, 8],
      });
      await assert.rejects(c.aggregate([{ $project: { r: { $range: [0, 2 ** 30] } } }]));
      // Variables are named as MongoDB names them; unknown arguments are refused.
      const [bound] = await c.aggregate([{
        $project: {
          _id: 0,
          doubled: { $map: { input: "$list", as: "n", in: { $multiply: ["$$n", 2] } } },
          big: { $filter: { input: "$list", as: "n", cond: { $gt: ["$$n", 1] } } },
          sum: { $let: { vars: { a: 1, b2: 2 }, in: { $add: ["$$a", "$$b2"] } } },
        },
      }]);
      assert.deepEqual(bound, { doubled: [2, 4, 6], big: [2, 3], sum: 3 });
      for (
        const expr of [
          { $let: { vars: { ROOT: 1 }, in: "$$ROOT" } },
          { $let: { vars: { FOO: 1 }, in: "$$FOO" } },
          { $map: { input: "$list", as: "n", in: "$$n", extra: 1 } },
          { $filter: { input: "$list", as: "$n", cond: true } },
        ]
      ) {
        await assert.rejects(c.aggregate([{ $project: { v: expr } }]), JSON.stringify(expr));
      }
      // Fields of any name, dots and dollars included, through $getField and $setField.
      const [fields] = await c.aggregate([{
        $project: {
          _id: 0,
          dotted: { $getField: { field: "a.b", input: { $literal: { "a.b": 1 } } } },
          dollar: {
            $setField: { field: { $literal: "$x" }, input: { $literal: {} }, value: 2 },
          },
          zipped: { $zip: { inputs: [[1, 2], ["a"]], useLongestLength: true, defaults: [0, "z"] } },
          trimmed: { $trim: { input: "  x  " } },
        },
      }]);
      assert.deepEqual(fields, {
        dotted: 1,
        dollar: { $x: 2 },
        zipped: [[1, "a"], [2, "z"]],
        trimmed: "x",
      });
      for (
        const expr of [
          { $getField: { field: "$a", input: {} } },
          { $setField: { field: "a", input: {}, value: 1, extra: 1 } },
          { $zip: { inputs: [] } },
          { $zip: { inputs: ["$list"], defaults: [1] } },
          { $trim: " x " },
          { $substrBytes: ["$s", 2, 1] },
          { $substrCP: ["$s", -1, 1] },
        ]
      ) {
        await assert.rejects(c.aggregate([{ $project: { v: expr } }]), JSON.stringify(expr));
      }
      // A key such as __proto__ is a field like any other, never the result's prototype.
      const [proto] = await c.aggregate([{
        $project: { _id: 0, p: { $arrayToObject: [[["__proto__", { polluted: 1 }], ["a", 1]]] } },
      }]);
      assert.deepEqual(Object.keys(proto.p as Doc), ["__proto__", "a"]);
      assert.equal((proto.p as Doc).polluted, undefined);
      for (const list of [[[321, 12]], [["key", "value", "extra"]], [{ k: null, v: 1 }]]) {
        await assert.rejects(
          c.aggregate([{ $project: { o: { $arrayToObject: [list] } } }]),
          JSON.stringify(list),
        );
      }
    },
  },
  {
    name: "aggregate: $sortArray, the n-operators and $reverseArray order lists as MongoDB does",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("ordered_lists");
      await c.insertMany([{
        _id: 1,
        mixed: [[1], 5, "a", null, { x: 1 }, 2],
        people: [{ n: "b", a: 2 }, { n: "c", a: [0, 9] }, 7, { n: "a", a: 1 }],
        list: [1, 2, 3],
      }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          up: { $sortArray: { input: "$mixed", sortBy: 1 } },
          down: { $sortArray: { input: "$mixed", sortBy: -1 } },
          byAge: { $sortArray: { input: "$people", sortBy: { a: 1 } } },
          none: { $sortArray: { input: "$nothing", sortBy: 1 } },
          least: { $minN: { n: 3, input: "$mixed" } },
          most: { $maxN: { n: 2, input: "$mixed" } },
          first: { $firstN: { n: Long.fromNumber(2), input: "$list" } },
          last: { $lastN: { n: 5, input: "$list" } },
          reversed: { $reverseArray: [[1, 2]] },
          reversedField: { $reverseArray: "$list" },
        },
      }]);
      // Lists come after documents in MongoDB's order; a member that is not a document has
      // none of the fields sorted on; the n-operators leave out nulls.
      assert.deepEqual(out, {
        up: [null, 2, 5, "a", { x: 1 }, [1]],
        down: [[1], { x: 1 }, "a", 5, 2, null],
        byAge: [7, { n: "c", a: [0, 9] }, { n: "a", a: 1 }, { n: "b", a: 2 }],
        none: null,
        least: [2, 5, "a"],
        most: [[1], { x: 1 }],
        first: [1, 2],
        last: [1, 2, 3],
        reversed: [2, 1],
        reversedField: [3, 2, 1],
      });
      for (
        const expr of [
          { $sortArray: { input: "$list", sortBy: 2 } },
          { $sortArray: { input: "$list", sortBy: 1, extra: 1 } },
          { $sortArray: { input: "$list", sortBy: { $nope: 1 } } },
          { $sortArray: { input: 5, sortBy: 1 } },
          { $firstN: { n: 2, input: "$nothing" } },
          { $lastN: { n: 0, input: "$list" } },
          { $minN: { n: 1.5, input: "$list" } },
          { $maxN: { n: 1, input: "$list", extra: 1 } },
          { $reverseArray: [1, 2] },
          { $reverseArray: 5 },
        ]
      ) {
        await assert.rejects(c.aggregate([{ $project: { v: expr } }]), JSON.stringify(expr));
      }
    },
  },
  {
    name: "aggregate: $push leaves out missing values, $addToSet keeps one of each value",
    needs: ["$avg"],
    async fn({ coll }) {
      const c = coll("collecting");
      await c.insertMany([
        { _id: 1, v: 1 },
        { _id: 2 },
        { _id: 3, v: null },
        { _id: 4, v: Long.fromNumber(1) },
        { _id: 5, v: { a: 1, b: 2 } },
        { _id: 6, v: { b: 2, a: 1 } },
      ]);
      const [out] = await c.aggregate([{ $sort: { _id: 1 } }, {
        $group: { _id: null, pushed: { $push: "$v" }, set: { $addToSet: "$v" } },
      }]);
      const pushed = out.pushed as unknown[];
      assert.equal(pushed.length, 5);
      assert.deepEqual(pushed.slice(0, 2), [1, null]);
      // In no set order: numbers are equal across their types, documents differ by the order
      // of their fields.
      const set = out.set as unknown[];
      const docs = set.filter((v) => v !== null && typeof v === "object" && "a" in v);
      assert.equal(set.length, 4, JSON.stringify(set));
      assert.ok(set.includes(null));
      assert.deepEqual(docs.map((d) => Object.keys(d as Doc).join()).sort(), ["a,b", "b,a"]);
    },
  },
  {
    name: "aggregate: $minN, $maxN, $firstN and $lastN in $group, in MongoDB's order",
    needs: ["$avg"],
    async fn({ coll }) {
      const c = coll("group_n");
      await c.insertMany([
        { _id: 1, g: 1, v: [1] },
        { _id: 2, g: 1, v: 5 },
        { _id: 3, g: 1, v: "a" },
        { _id: 4, g: 1, v: null },
        { _id: 5, g: 1, v: { x: 1 } },
        { _id: 6, g: 1 },
      ]);
      const [out] = await c.aggregate([{ $sort: { _id: 1 } }, {
        $group: {
          _id: "$g",
          least: { $minN: { n: 3, input: "$v" } },
          most: { $maxN: { n: Long.fromNumber(2), input: "$v" } },
          first: { $firstN: { n: 2, input: "$v" } },
          last: { $lastN: { n: 2, input: "$v" } },
        },
      }]);
      // Nulls and missing values are left out of $minN and $maxN, kept (as null) by the others.
      assert.deepEqual(out, {
        _id: 1,
        least: [5, "a", { x: 1 }],
        most: [[1], { x: 1 }],
        first: [[1], 5],
        last: [{ x: 1 }, null],
      });
      await assert.rejects(
        c.aggregate([{ $group: { _id: null, t: { $minN: { n: 0, input: "$v" } } } }]),
      );
    },
  },
  {
    name: "aggregate: $bsonSize and $binarySize count bytes as MongoDB does",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("sizes");
      await c.insertMany([{ _id: 1, o: { a: 1 }, s: "é" }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          doc: { $bsonSize: "$o" },
          none: { $bsonSize: "$nothing" },
          text: { $binarySize: "$s" },
          nullText: { $binarySize: null },
        },
      }]);
      assert.deepEqual(out, { doc: 12, none: null, text: 2, nullText: null });
      for (const expr of [{ $bsonSize: "$s" }, { $binarySize: 5 }, { $bsonSize: ["$o", "$o"] }]) {
        await assert.rejects(c.aggregate([{ $project: { v: expr } }]), JSON.stringify(expr));
      }
    },
  },
  {
    name: "find and $match: a $comment is a note that matches every document",
    needs: ["$comment"],
    async fn({ coll }) {
      const c = coll("comments");
      await c.insertMany([{ _id: 1, a: 1 }, { _id: 2, a: 2 }]);
      assert.deepEqual(ids(await c.find({ $comment: "by a", a: 1 })), [1]);
      const either = await c.find({ $or: [{ a: 1 }, { $comment: "all" }] }, { sort: { _id: 1 } });
      assert.deepEqual(ids(either), [1, 2]);
      const matched = await c.aggregate([{ $match: { $comment: { why: "a test" }, a: 2 } }]);
      assert.deepEqual(ids(matched), [2]);
      await assert.rejects(c.find({ a: { $comment: "not here" } }));
    },
  },
  {
    name: "aggregate: $setWindowFields ranks, sums over windows and shifts",
    needs: ["$setWindowFields"],
    async fn({ coll }) {
      const c = coll("windows");
      await c.insertMany([
        { _id: 1, g: "a", v: 3, t: 1 },
        { _id: 2, g: "a", v: 1, t: 2 },
        { _id: 3, g: "a", v: 3, t: 3 },
        { _id: 4, g: "b", v: 7, t: 1 },
      ]);
      const out = await c.aggregate([
        {
          $setWindowFields: {
            partitionBy: "$g",
            sortBy: { t: 1 },
            output: {
              running: { $sum: "$v", window: { documents: ["unbounded", "current"] } },
              before: { $shift: { output: "$v", by: -1, default: 0 } },
            },
          },
        },
        {
          $setWindowFields: {
            partitionBy: "$g",
            sortBy: { v: -1 },
            output: { rank: { $rank: {} }, dense: { $denseRank: {} } },
          },
        },
        { $sort: { _id: 1 } },
        { $project: { running: 1, before: 1, rank: 1, dense: 1 } },
      ]);
      assert.deepEqual(out, [
        { _id: 1, running: 3, before: 0, rank: 1, dense: 1 },
        { _id: 2, running: 4, before: 3, rank: 3, dense: 2 },
        { _id: 3, running: 7, before: 1, rank: 1, dense: 1 },
        { _id: 4, running: 7, before: 0, rank: 1, dense: 1 },
      ]);
    },
  },
  {
    name: "aggregate: $limit takes a whole number above 0",
    needs: ["$limit-checks"],
    async fn({ coll }) {
      const c = coll("limit_stage");
      await c.insertMany([{ _id: 1 }, { _id: 2 }]);
      assert.deepEqual(ids(await c.aggregate([{ $sort: { _id: 1 } }, { $limit: 1.0 }])), [1]);
      for (const value of [0, -1, 1.5, "2"]) {
        await assert.rejects(c.aggregate([{ $limit: value }]), JSON.stringify(value));
      }
    },
  },
  {
    name: "aggregate: $bucket and $bucketAuto write each bucket's _id first",
    needs: ["$bucket"],
    async fn({ coll }) {
      const c = coll("bucket_order");
      await c.insertMany([{ _id: 1, v: 1 }, { _id: 2, v: 5 }, { _id: 3, v: 50 }]);
      const buckets = await c.aggregate([{
        $bucket: { groupBy: "$v", boundaries: [0, 10], default: "big", output: { n: { $sum: 1 } } },
      }]);
      assert.deepEqual(buckets, [{ _id: 0, n: 2 }, { _id: "big", n: 1 }]);
      assert.deepEqual(buckets.map((b) => Object.keys(b)), [["_id", "n"], ["_id", "n"]]);
      const auto = await c.aggregate([{ $bucketAuto: { groupBy: "$v", buckets: 1 } }]);
      assert.deepEqual(auto.map((b) => Object.keys(b)), [["_id", "count"]]);
    },
  },
  {
    name: "aggregate: $sort takes fields sorted by 1 or -1 of any numeric type",
    async fn({ coll }) {
      const c = coll("sort_stage");
      await c.insertMany([{ _id: 1, a: 2 }, { _id: 2, a: 1 }]);
      const down = await c.aggregate([{ $sort: { a: Long.fromNumber(-1) } }]);
      assert.deepEqual(ids(down), [1, 2]);
      for (const spec of [{ a: 2 }, { a: 0 }, { a: "x" }, {}]) {
        await assert.rejects(c.aggregate([{ $sort: spec }]), JSON.stringify(spec));
      }
    },
  },
  {
    name: "aggregate: comparison expressions order values of every type as MongoDB does",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("comparison_expressions");
      await c.insertMany([
        { _id: 1, a: 5, n: Long.fromNumber(1), o: { x: 1, y: 2 } },
        { _id: 2, a: null },
        { _id: 3 },
      ]);
      const out = await c.aggregate([{ $sort: { _id: 1 } }, {
        $project: {
          _id: 0,
          set: { $gt: ["$a", null] },
          isNull: { $eq: ["$a", null] },
          missing: { $eq: ["$a", "$nothing"] },
          typed: [{ $gt: ["hello", 5] }, { $lt: [[1, 2], [1, 3]] }, { $cmp: [5, []] }],
          longOne: { $eq: ["$n", 1] },
          order: { $eq: ["$o", { y: 2, x: 1 }] },
        },
      }]);
      assert.deepEqual(out.map((o) => [o.set, o.isNull, o.missing]), [
        [true, false, false],
        [false, true, false],
        [false, false, true],
      ]);
      assert.deepEqual(out[0].typed, [true, true, -1]);
      assert.deepEqual([out[0].longOne, out[0].order], [true, false]);
    },
  },
  {
    name: "aggregate: $regexFind and $regexFindAll count code points and check their arguments",
    needs: ["$project-expressions"],
    async fn({ coll }) {
      const c = coll("regex_expressions");
      await c.insertMany([{ _id: 1, text: "𝒳a𝒳b", bs: "bbbb", n: 5 }]);
      const [out] = await c.aggregate([{
        $project: {
          _id: 0,
          at: { $regexFind: { input: "$text", regex: "b" } },
          empties: { $size: { $regexFindAll: { input: "$bs", regex: "()" } } },
          extended: { $regexMatch: { input: "foo", regex: "F o o # a comment", options: "ix" } },
          noInput: { $regexFind: { input: "$missing", regex: "a" } },
        },
      }]);
      assert.deepEqual(out, {
        at: { match: "b", idx: 3, captures: [] },
        empties: 4,
        extended: true,
        noInput: null,
      });
      for (
        const spec of [
          { input: "$n", regex: "a" },
          { input: "$text", regex: "a", options: "q" },
          { input: "$text", regex: "a", extra: 1 },
          { regex: "[a-c" },
        ]
      ) {
        await assert.rejects(
          c.aggregate([{ $project: { v: { $regexMatch: spec } } }]),
          JSON.stringify(spec),
        );
      }
    },
  },
  {
    name: "aggregate: $group keys equal as MongoDB compares them (decimal scale, missing as null)",
    needs: ["decimal-scale"],
    async fn({ coll }) {
      const c = coll("group_keys");
      await c.insertMany([
        { _id: 1, p: Decimal128.fromString("10.50"), x: null },
        { _id: 2, p: Decimal128.fromString("10.5"), y: null },
        { _id: 3, p: Decimal128.fromString("2"), x: null, y: null },
      ]);
      const prices = await c.aggregate([
        { $group: { _id: "$p", n: { $sum: 1 } } },
        { $sort: { n: -1 } },
      ]);
      assert.deepEqual(prices.map((g) => [Number(String(g._id)), g.n]), [[10.5, 2], [2, 1]]);
      const pairs = await c.aggregate([{ $group: { _id: ["$x", "$y"], n: { $sum: 1 } } }]);
      assert.deepEqual(pairs, [{ _id: [null, null], n: 3 }]);
    },
  },
  {
    name: "aggregate: a $group key document leaves a missing field out: not the key with null",
    needs: ["group-key-documents"],
    async fn({ coll }) {
      const c = coll("group_doc_keys");
      await c.insertMany([{ _id: 1, a: 1 }, { _id: 2, a: 1, b: null }, { _id: 3, a: 1 }]);
      const out = await c.aggregate([
        { $group: { _id: { a: "$a", b: "$b" }, n: { $sum: 1 } } },
        { $sort: { n: 1 } },
      ]);
      assert.deepEqual(out, [{ _id: { a: 1, b: null }, n: 1 }, { _id: { a: 1 }, n: 2 }]);
    },
  },
  {
    name: "a dotted path does not enter an array held in an array",
    needs: ["nested-array-paths"],
    async fn({ coll }) {
      const c = coll("nested_paths");
      await c.insertMany([{ _id: 1, a: [[{ b: 7 }]] }, { _id: 2, a: [{ b: 7 }] }]);
      for (const condition of [{ $gt: 5 }, { $gte: 7 }, { $lt: 8 }, { $lte: 7 }]) {
        await findsAloneAndInOr(c, "a.b", condition, [2]);
      }
      await findsAloneAndInOr(c, "a.b", { $exists: true }, [2]);
      await findsAloneAndInOr(c, "a.b", { $exists: false }, [1]);
    },
  },
  {
    name: "NaN: equal to NaN alone, ordered against no number, alone and in arrays",
    needs: ["nan-ranges"],
    async fn({ coll }) {
      const c = coll("nan");
      await c.insertMany([
        { _id: 1, n: 1 },
        { _id: 2, n: NaN },
        { _id: 3, n: -Infinity },
        { _id: 4, n: "x" },
        { _id: 5, n: [1, NaN] },
        { _id: 6, n: [NaN] },
        { _id: 7 },
      ]);
      const both = (condition: Record<string, unknown>, expected: number[]) =>
        findsAloneAndInOr(c, "n", condition, expected);
      await both({ $lte: NaN }, [2, 5, 6]);
      await both({ $gte: NaN }, [2, 5, 6]);
      await both({ $lt: NaN }, []);
      await both({ $gt: NaN }, []);
      await both({ $eq: NaN }, [2, 5, 6]);
      await both({ $lte: 1 }, [1, 3, 5]);
      await both({ $gte: 1 }, [1, 5]);
      await both({ $lt: 1 }, [3]);
      await both({ $gt: -Infinity }, [1, 5]);
    },
  },
  {
    name: "Decimal128 equality compares numbers, not their written scale",
    needs: ["decimal-scale"],
    async fn({ coll }) {
      const c = coll("decimal_scale");
      await c.insertMany([{ _id: 1, price: Decimal128.fromString("12.50") }]);
      assert.equal((await c.find({ price: Decimal128.fromString("12.5") })).length, 1);
      assert.equal(
        (await c.find({ "price": { $in: [Decimal128.fromString("12.500")] } })).length,
        1,
      );
    },
  },
  {
    name: "files: put, stat, read, ranges, delete",
    async fn({ store }) {
      const files = store.files;
      const data = new Uint8Array(300_000); // spans several GridFS chunks
      for (let i = 0; i < data.length; i++) data[i] = (i * 7 + 3) & 0xff;
      const stored = await files.put(data, {
        filename: "pic.bin",
        contentType: "image/png",
        metadata: { owner: "ann" },
      });
      try {
        assert.ok(stored.id instanceof ObjectId);
        assert.equal(stored.length, data.length);
        assert.equal(stored.filename, "pic.bin");
        assert.equal(stored.contentType, "image/png");
        assert.ok(stored.uploadDate instanceof Date);
        const stat = await files.stat(stored.id);
        assert.ok(stat);
        assert.ok(stat.id.equals(stored.id));
        assert.equal(stat.length, data.length);
        assert.equal(stat.contentType, "image/png");
        assert.deepEqual(stat.metadata, { owner: "ann" });
        assert.deepEqual(await files.read(stored.id), data);
        assert.deepEqual(await files.read(stored.id, { start: 0, end: 0 }), data.slice(0, 1));
        assert.deepEqual(await files.read(stored.id, { start: 10, end: 19 }), data.slice(10, 20));
        const across = await files.read(stored.id, { start: 261_000, end: 262_500 });
        assert.deepEqual(across, data.slice(261_000, 262_501));
        const tail = await files.read(stored.id, { start: 299_990, end: 299_999 });
        assert.deepEqual(tail, data.slice(299_990));
      } finally {
        await files.delete(stored.id);
      }
      assert.equal(await files.stat(stored.id), null);
      assert.equal(await files.read(stored.id), null);
      await files.delete(stored.id);
      assert.equal(await files.stat(new ObjectId()), null);

      const empty = await files.put(new Uint8Array(0), {
        filename: "e",
        contentType: "text/plain",
      });
      assert.equal(empty.length, 0);
      assert.deepEqual(await files.read(empty.id), new Uint8Array(0));
      await files.delete(empty.id);
    },
  },
  {
    name: "files: putStream stores as bytes arrive, stream reads ranges, count",
    async fn({ store }) {
      const files = store.files;
      const before = await files.count();
      const data = new Uint8Array(600_000); // several chunks, pieces not chunk-aligned
      for (let i = 0; i < data.length; i++) data[i] = (i * 13 + 5) & 0xff;
      async function* pieces() {
        for (let at = 0; at < data.length; at += 70_001) yield data.slice(at, at + 70_001);
      }
      const stored = await files.putStream(pieces(), { filename: "s.bin", contentType: "x/y" });
      assert.equal(stored.length, data.length);
      assert.equal(await files.count(), before + 1);
      assert.deepEqual(await files.read(stored.id), data);
      const read = async (range?: { start: number; end: number }) =>
        new Uint8Array(await new Response(await files.stream(stored.id, range)).arrayBuffer());
      assert.deepEqual(await read(), data);
      assert.deepEqual(await read({ start: 261_000, end: 530_000 }), data.slice(261_000, 530_001));
      assert.deepEqual(await read({ start: 599_999, end: 900_000 }), data.slice(599_999));
      assert.equal(await files.stream(new ObjectId()), null);
      await files.delete(stored.id);
      assert.equal(await files.count(), before);
    },
  },
  {
    name: "files: a putStream whose source fails leaves nothing and rethrows its error",
    async fn({ store }) {
      const files = store.files;
      const before = await files.count();
      const refused = new Error("source refused");
      async function* failing() {
        yield new Uint8Array(300_000);
        yield new Uint8Array(10);
        throw refused;
      }
      await assert.rejects(
        files.putStream(failing(), { filename: "f", contentType: "x/y" }),
        (error) => error === refused,
      );
      assert.equal(await files.count(), before);
    },
  },
  {
    name: "drop removes documents; dropping a missing collection is fine",
    needs: ["drop"],
    async fn({ coll }) {
      const c = coll("drop");
      await seedPeople(c);
      await c.drop();
      assert.equal(await c.count({}), 0);
      await c.drop();
      await coll("never_created").drop();
    },
  },
  {
    name: "collectionNames lists created collections",
    needs: ["listCollections"],
    async fn({ store, coll }) {
      const c = coll("names");
      await c.insertMany([{ _id: 1 }]);
      assert.ok((await store.collectionNames()).includes(c.name));
    },
  },
  {
    name: "alongside documents are inserted only with a write that changed something",
    async fn({ coll }) {
      const c = coll("main");
      const log = coll("log");
      const along = (tag: string) => ({ collection: log.name, docs: [{ _id: tag }] });
      await c.insertMany([{ _id: 1, v: 1 }], { alongside: along("insert") });
      assert.equal(
        (await c.replaceOne({ _id: 1 }, { v: 2 }, { alongside: along("replace") })).matched,
        1,
      );
      assert.equal(
        (await c.replaceOne({ _id: 9 }, { v: 2 }, { alongside: along("miss") })).matched,
        0,
      );
      assert.equal(await c.deleteOne({ _id: 9 }, { alongside: along("miss-delete") }), 0);
      await assertDuplicate(c.insertMany([{ _id: 1 }], { alongside: along("dup") }), "_id");
      await c.insertMany([{ _id: 2 }, { _id: 3 }]);
      assert.equal(await c.deleteMany({ _id: { $in: [2, 3] } }, { alongside: along("many") }), 2);
      assert.equal(await c.deleteOne({ _id: 1 }, { alongside: along("delete") }), 1);
      const logged = (await log.find({}, { sort: { _id: 1 } })).map((d) => d._id);
      assert.deepEqual(logged, ["delete", "insert", "many", "replace"]);
      assert.equal(await c.count({}), 0);
    },
  },
  {
    name: "alongside documents for two collections go with the write, and only with it",
    async fn({ coll }) {
      const c = coll("main2");
      const log = coll("log2");
      const copies = coll("copies2");
      const along = (tag: string) => [
        { collection: log.name, docs: [{ _id: tag }] },
        { collection: copies.name, docs: [{ _id: tag }, { _id: `${tag}-2` }] },
      ];
      await c.insertMany([{ _id: 1, v: 1 }], { alongside: along("insert") });
      assert.equal(
        (await c.replaceOne({ _id: 1 }, { v: 2 }, { alongside: along("replace") })).matched,
        1,
      );
      assert.equal(
        (await c.replaceOne({ _id: 9 }, { v: 2 }, { alongside: along("miss") })).matched,
        0,
      );
      await assertDuplicate(c.insertMany([{ _id: 1 }], { alongside: along("dup") }), "_id");
      assert.equal(await c.deleteOne({ _id: 1 }, { alongside: along("delete") }), 1);
      const ids = async (x: typeof c) => (await x.find({}, { sort: { _id: 1 } })).map((d) => d._id);
      assert.deepEqual(await ids(log), ["delete", "insert", "replace"]);
      assert.deepEqual(await ids(copies), [
        "delete",
        "delete-2",
        "insert",
        "insert-2",
        "replace",
        "replace-2",
      ]);
    },
  },
  {
    name: "geo: $near from a GeoJSON point orders by meters, needs a 2dsphere index, counts",
    needs: ["geo"],
    async fn({ coll }) {
      const c = coll("near_geojson");
      const at = (lng: number, lat: number) => ({ type: "Point", coordinates: [lng, lat] });
      await c.insertMany([
        { _id: "london", loc: at(-0.1276, 51.5072) },
        { _id: "paris", loc: at(2.3522, 48.8566) },
        { _id: "berlin", loc: at(13.405, 52.52) },
        { _id: "versailles", loc: at(2.1301, 48.8049), kind: "castle" },
        { _id: "nowhere" },
      ]);
      const paris = at(2.3522, 48.8566);
      const near = { loc: { $near: { $geometry: paris, $maxDistance: 400_000 } } };
      // No geo index on the field: refused, the find and the count alike.
      await assert.rejects(c.find(near), /unable to find index for \$geoNear query/);
      await assert.rejects(c.count(near), /unable to find index for \$geoNear query/);
      await c.createIndex({ keys: { loc: "2dsphere" }, name: "loc_2dsphere" });
      assert.deepEqual(ids(await c.find(near)), ["paris", "versailles", "london"]);
      assert.equal(await c.count(near), 3);
      assert.equal(await c.count(near, { skip: 1, limit: 1 }), 1);
      const sphere = { loc: { $nearSphere: { $geometry: paris, $minDistance: 1000 } } };
      assert.deepEqual(ids(await c.find(sphere)), ["versailles", "london", "berlin"]);
      assert.equal(await c.count(sphere), 3);
      // In a top-level $and, beside other conditions: the rest of the filter still applies.
      const and = { $and: [near, { kind: "castle" }] };
      assert.deepEqual(ids(await c.find(and)), ["versailles"]);
      assert.equal(await c.count(and), 1);
      // A sort replaces the order by distance.
      assert.deepEqual(ids(await c.find(near, { sort: { _id: 1 } })), [
        "london",
        "paris",
        "versailles",
      ]);
    },
  },
  {
    name: "geo: $near measures to the nearest point of a stored line or polygon, 0 inside",
    needs: ["geo"],
    async fn({ coll }) {
      const c = coll("near_shapes");
      const at = (lng: number, lat: number) => ({ type: "Point", coordinates: [lng, lat] });
      const square = (x: number, y: number, size: number) => ({
        type: "Polygon",
        coordinates: [[[x, y], [x + size, y], [x + size, y + size], [x, y + size], [x, y]]],
      });
      await c.insertMany([
        { _id: "far square", loc: square(10, -1, 2) },
        { _id: "line", loc: { type: "LineString", coordinates: [[5, 5], [5, -5]] } },
        { _id: "point", loc: at(3, 0) },
        { _id: "around", loc: square(-1, -1, 2) },
      ]);
      await c.createIndex({ keys: { loc: "2dsphere" }, name: "loc_2dsphere" });
      const near = { $geometry: at(0, 0), $maxDistance: 900_000 };
      // Meters: the point 3 degrees away (333 km), the line's nearest point 5 (556 km), the
      // far square's nearest edge 10 (1,113 km, beyond the bound); inside the square, 0.
      assert.deepEqual(ids(await c.find({ loc: { $near: near } })), ["around", "point", "line"]);
      assert.equal(await c.count({ loc: { $near: near } }), 3);
      const measured = await c.aggregate([
        { $geoNear: { near: at(0, 0), distanceField: "d", spherical: true } },
        { $project: { d: 1 } },
      ]);
      const km = Object.fromEntries(measured.map((d) => [d._id, (d.d as number) / 1000]));
      assert.equal(km.around, 0);
      assert.ok(Math.abs(km.line - 556.6) < 1, String(km.line));
      assert.ok(Math.abs(km["far square"] - 1113.2) < 1, String(km["far square"]));
    },
  },
  {
    name: "geo: a legacy $near measures the plane's units (2d index), $nearSphere radians",
    needs: ["geo"],
    async fn({ coll }) {
      const c = coll("near_legacy");
      await c.insertMany([
        { _id: 1, p: [0, 0] },
        { _id: 2, p: [3, 4] },
        { _id: 3, p: { x: 0, y: 6 } },
        { _id: 4, p: [1, 0] },
      ]);
      const flat = { p: { $near: [0, 0], $maxDistance: 5.5 } };
      // A legacy $near needs a 2d index: a 2dsphere one does not serve it.
      await c.createIndex({ keys: { p: "2dsphere" }, name: "p_2dsphere" });
      await assert.rejects(c.find(flat), /unable to find index for \$geoNear query/);
      // $nearSphere from a legacy pair is served by a 2dsphere index, in radians.
      const oneDegree = Math.PI / 180;
      const sphere = { p: { $nearSphere: [0, 0], $maxDistance: 4.5 * oneDegree } };
      assert.deepEqual(ids(await c.find(sphere)), [1, 4]);
      const planar = coll("near_planar");
      await planar.insertMany([
        { _id: 1, p: [0, 0] },
        { _id: 2, p: [3, 4] },
        { _id: 3, p: { x: 0, y: 6 } },
        { _id: 4, p: [1, 0] },
      ]);
      await planar.createIndex({ keys: { p: "2d" }, name: "p_2d" });
      assert.deepEqual(ids(await planar.find(flat)), [1, 4, 2]);
      assert.equal(await planar.count(flat), 3);
      assert.deepEqual(ids(await planar.find({ p: { $near: [0, 0] } })), [1, 4, 2, 3]);
      assert.deepEqual(
        ids(await planar.find({ p: { $nearSphere: [0, 0], $maxDistance: 4.5 * oneDegree } })),
        [1, 4],
      );
    },
  },
  {
    name: "geo: a misplaced, second or malformed $near is refused",
    needs: ["geo"],
    async fn({ coll }) {
      const c = coll("near_refused");
      await c.insertMany([{ _id: 1, p: [0, 0], q: [1, 1] }]);
      await c.createIndex({ keys: { p: "2d" }, name: "p_2d" });
      await c.createIndex({ keys: { q: "2d" }, name: "q_2d" });
      const refusals: Array<[Filter, RegExp]> = [
        [{ $or: [{ p: { $near: [0, 0] } }, { _id: 2 }] }, /geoNear must be top-level expr/],
        [{ $nor: [{ p: { $near: [0, 0] } }] }, /geoNear must be top-level expr/],
        [{ p: { $near: [0, 0] }, q: { $near: [1, 1] } }, /Too many geoNear expressions/],
        [{ p: { $near: [0, 0], $maxDistance: -1 } }, /must be non-negative/],
        [{ p: { $near: [0, 0], $maxDistance: "far" } }, /\$maxDistance must be a number/],
        [{ p: { $near: [0, 0], $exists: true } }, /invalid argument in geo near query/],
        [
          { p: { $near: { $geometry: { type: "Point", coordinates: [0, 0] } }, $maxDistance: 1 } },
          /geo near accepts just one argument/,
        ],
      ];
      for (const [filter, reason] of refusals) {
        await assert.rejects(c.find(filter), reason, JSON.stringify(filter));
      }
    },
  },
  {
    name: "aggregate: $geoNear writes distances in its query's units, nearest first",
    needs: ["geo"],
    async fn({ coll }) {
      const c = coll("geo_near");
      const at = (lng: number, lat: number) => ({ type: "Point", coordinates: [lng, lat] });
      await c.insertMany([
        { _id: "london", loc: at(-0.1276, 51.5072), spot: [3, 4] },
        { _id: "paris", loc: at(2.3522, 48.8566), spot: [0, 0], open: true },
        { _id: "berlin", loc: at(13.405, 52.52), spot: [0, 6], open: true },
        { _id: "versailles", loc: at(2.1301, 48.8049), spot: [1, 0], open: true },
      ]);
      await c.createIndex({ keys: { loc: "2dsphere" }, name: "loc_2dsphere" });
      const out = await c.aggregate([
        {
          $geoNear: {
            near: at(2.3522, 48.8566),
            distanceField: "dist.km",
            distanceMultiplier: 0.001,
            spherical: true,
            maxDistance: 900_000,
            query: { open: true },
            includeLocs: "where",
          },
        },
        { $project: { dist: 1, where: 1 } },
      ]);
      assert.deepEqual(ids(out), ["paris", "versailles", "berlin"]);
      const km = out.map((d) => (d.dist as { km: number }).km);
      assert.equal(km[0], 0);
      assert.ok(Math.abs(km[1] - 16.9) < 0.5, String(km[1]));
      assert.ok(Math.abs(km[2] - 878) < 5, String(km[2]));
      assert.deepEqual(out[2].where, at(13.405, 52.52));
      // The one geo index is the key when the stage names none; a 2d index serves legacy pairs
      // on the plane, where distances are the plane's units.
      const flat = coll("geo_near_flat");
      await flat.insertMany([
        { _id: 1, p: [0, 0] },
        { _id: 2, p: [3, 4] },
        { _id: 3, p: [0, 6] },
        { _id: 4, p: [1, 0] },
      ]);
      await flat.createIndex({ keys: { p: "2d" }, name: "p_2d" });
      const planar = await flat.aggregate([{ $geoNear: { near: [0, 0], distanceField: "d" } }]);
      assert.deepEqual(planar.map((d) => [d._id, d.d]), [[1, 0], [4, 1], [2, 5], [3, 6]]);
      const later = await flat.aggregate([
        { $geoNear: { near: [0, 0], distanceField: "d", minDistance: 2 } },
        { $match: { d: { $lt: 6 } } },
        { $count: "n" },
      ]);
      assert.deepEqual(later, [{ n: 1 }]);
    },
  },
  {
    name: "aggregate: $geoNear is refused without its index, misplaced or malformed",
    needs: ["geo"],
    async fn({ coll }) {
      const c = coll("geo_near_refused");
      await c.insertMany([{ _id: 1, p: [0, 0], q: [1, 1] }]);
      const stage = { $geoNear: { near: [0, 0], distanceField: "d" } };
      await assert.rejects(c.aggregate([stage]), /requires a 2d or 2dsphere index/);
      await c.createIndex({ keys: { p: "2d" }, name: "p_2d" });
      await c.createIndex({ keys: { q: "2d" }, name: "q_2d" });
      await assert.rejects(c.aggregate([stage]), /more than one 2d index/);
      const refusals: Array<[Doc[], RegExp]> = [
        [[{ $match: {} }, { $geoNear: { ...stage.$geoNear, key: "p" } }], /first stage/],
        [[{ $geoNear: { near: [0, 0], key: "p" } }], /'distanceField' option as a String/],
        [[{ $geoNear: { distanceField: "d", key: "p" } }], /'near' option/],
        [[{ $geoNear: { ...stage.$geoNear, key: "p", limit: 5 } }], /no longer supports/],
        [[{ $geoNear: { ...stage.$geoNear, key: "p", maxDistance: -1 } }], /nonnegative/],
        // A GeoJSON point needs a 2dsphere index: the 2d index on `p` does not serve it.
        [
          [{
            $geoNear: {
              near: { type: "Point", coordinates: [0, 0] },
              distanceField: "d",
              key: "p",
            },
          }],
          /unable to find index for \$geoNear query/,
        ],
      ];
      for (const [pipeline, reason] of refusals) {
        await assert.rejects(c.aggregate(pipeline), reason, JSON.stringify(pipeline));
      }
    },
  },
  {
    name: "geo: $geoIntersects and $geoWithin test stored lines and polygons, not only points",
    needs: ["geo"],
    async fn({ coll }) {
      const c = coll("geo_shapes");
      const square = (x: number, y: number, size: number) => ({
        type: "Polygon",
        coordinates: [[[x, y], [x + size, y], [x + size, y + size], [x, y + size], [x, y]]],
      });
      await c.insertMany([
        { _id: "big", area: square(0, 0, 10) },
        { _id: "small", area: square(2, 2, 2) },
        { _id: "far", area: square(20, 20, 2) },
        {
          _id: "holed",
          area: {
            type: "Polygon",
            coordinates: [
              [[30, 0], [40, 0], [40, 10], [30, 10], [30, 0]],
              [[33, 3], [37, 3], [37, 7], [33, 7], [33, 3]],
            ],
          },
        },
        { _id: "road", area: { type: "LineString", coordinates: [[-5, 5], [5, 5]] } },
        { _id: "spot", area: { type: "Point", coordinates: [3, 3] } },
        {
          _id: "mixed",
          area: {
            type: "GeometryCollection",
            geometries: [{ type: "Point", coordinates: [50, 50] }, square(8, 8, 1)],
          },
        },
      ]);
      await c.createIndex({ keys: { area: "2dsphere" }, name: "area_2dsphere" });
      const intersecting = async (geometry: unknown) =>
        ids(
          await c.find({ area: { $geoIntersects: { $geometry: geometry } } }, { sort: { _id: 1 } }),
        );
      // Which areas hold the point (3, 3): the regions around it and the point itself.
      assert.deepEqual(await intersecting({ type: "Point", coordinates: [3, 3] }), [
        "big",
        "small",
        "spot",
      ]);
      // The hole of a polygon is not part of it.
      assert.deepEqual(await intersecting({ type: "Point", coordinates: [35, 5] }), []);
      assert.deepEqual(await intersecting({ type: "Point", coordinates: [31, 5] }), ["holed"]);
      // A line crossing the big square's edge and the road.
      assert.deepEqual(
        await intersecting({ type: "LineString", coordinates: [[-1, 4], [-1, 6]] }),
        ["road"],
      );
      assert.deepEqual(
        await intersecting({
          type: "Polygon",
          coordinates: [[[7, 7], [9, 7], [9, 9], [7, 9], [7, 7]]],
        }),
        ["big", "mixed"],
      );
      // Wholly within the square (0, 0)-(11, 11): the small square, the point, and the big
      // square itself; the road leaves it, and a collection counts all of its parts.
      const within = await c.find(
        { area: { $geoWithin: { $geometry: square(-0.5, -0.5, 11) } } },
        { sort: { _id: 1 } },
      );
      assert.deepEqual(ids(within), ["big", "small", "spot"]);
      assert.equal(
        await c.count({ area: { $geoWithin: { $centerSphere: [[3, 3], (2 / 180) * Math.PI] } } }),
        2,
      );
    },
  },
  {
    name: "indexes: a sparse unique index leaves out the documents lacking its field",
    async fn({ coll }) {
      const c = coll("sparse_unique");
      await c.createIndex({ keys: { code: 1 }, name: "code_1", unique: true, sparse: true });
      await c.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3, code: null }]);
      // A null is a value: a sparse index holds it.
      await assert.rejects(c.insertMany([{ _id: 4, code: null }]), DuplicateKeyError);
      await c.insertMany([{ _id: 5, code: "a" }]);
      await assert.rejects(c.insertMany([{ _id: 6, code: "a" }]), DuplicateKeyError);
      assert.deepEqual(ids(await c.find({}, { sort: { _id: 1 } })), [1, 2, 3, 5]);
      // Not sparse: a missing field is indexed as null, so two documents lacking it clash.
      const plain = coll("plain_unique");
      await plain.createIndex({ keys: { code: 1 }, name: "code_1", unique: true });
      await plain.insertMany([{ _id: 1 }]);
      await assert.rejects(plain.insertMany([{ _id: 2 }]), DuplicateKeyError);
    },
  },
  {
    name: "indexes: a TTL index deletes the documents whose date is past it",
    needs: ["ttl"],
    async fn({ store, coll }) {
      const c = coll("ttl");
      const now = Date.now();
      const old = new Date(now - 3_600_000);
      await c.createIndex({ keys: { seen: 1 }, name: "seen_ttl", expireAfterSeconds: 600 });
      await c.insertMany([
        { _id: 1, seen: old },
        { _id: 2, seen: new Date(now) },
        { _id: 3, seen: "yesterday" },
        { _id: 4 },
        { _id: 5, seen: [new Date(now), old] },
      ]);
      // MongoDB's TTL monitor runs once a minute; the embedded store's can be run at once.
      const expire = (store as { expire?: () => Promise<number> }).expire;
      if (expire) assert.equal(await expire.call(store), 2);
      const deadline = Date.now() + 150_000;
      while ((await c.count({ _id: 1 })) > 0) {
        assert.ok(Date.now() < deadline, "the expired document is still there after 150 s");
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      assert.deepEqual(ids(await c.find({}, { sort: { _id: 1 } })), [2, 3, 4]);
    },
  },
  {
    name: "aggregate: let variables are bound for the whole pipeline",
    needs: ["aggregate-let"],
    async fn({ coll }) {
      const c = coll("agg_let");
      await c.insertMany([{ _id: 1, a: 1 }, { _id: 2, a: 3 }, { _id: 3, a: 5 }]);
      const out = await c.aggregate([
        { $match: { $expr: { $gte: ["$a", "$$min"] } } },
        { $project: { _id: 1, over: { $subtract: ["$a", "$$min"] } } },
        { $sort: { _id: 1 } },
      ], { let: { min: { $add: [1, 2] } }, maxTimeMS: 60_000, comment: "conformance" });
      assert.deepEqual(out, [{ _id: 2, over: 0 }, { _id: 3, over: 2 }]);
      await assert.rejects(c.aggregate([{ $match: {} }], { let: { Min: 1 } }));
    },
  },
  {
    name: "text: terms stem and any one matches; stop words, negations and phrases",
    needs: ["$text"],
    async fn({ coll }) {
      const c = coll("text");
      await c.insertMany([
        { _id: 1, title: "Running shoes", body: "Great for runners" },
        { _id: 2, title: "Cooking", body: "Pasta recipes from the café" },
        { _id: 3, title: "The Who", body: "A band" },
        { _id: 4, title: "Shoe care", body: "Polish, don't scrub" },
        { _id: 5, title: "Zapatos", body: "corriendo rápido", language: "spanish" },
      ]);
      await c.createIndex({ keys: { title: "text", body: "text" }, name: "words" });
      const found = async (search: Doc) =>
        ids(await c.find({ $text: search }, { sort: { _id: 1 } }));
      // "running" and "run" stem alike; "runners" stems to "runner".
      assert.deepEqual(await found({ $search: "run" }), [1]);
      assert.deepEqual(await found({ $search: "shoes pasta" }), [1, 2, 4]);
      assert.deepEqual(await found({ $search: "shoe -polish" }), [1]);
      assert.deepEqual(await found({ $search: '"pasta recipes"' }), [2]);
      assert.deepEqual(await found({ $search: '"recipes pasta"' }), []);
      assert.deepEqual(await found({ $search: 'shoe -"shoe care"' }), [1]);
      // Stop words alone find nothing; an apostrophe belongs to its word in English.
      assert.deepEqual(await found({ $search: "the who" }), []);
      assert.deepEqual(await found({ $search: "don't" }), []);
      // Case and diacritics are ignored unless asked for.
      assert.deepEqual(await found({ $search: "CAFE" }), [2]);
      assert.deepEqual(await found({ $search: "cafe", $diacriticSensitive: true }), []);
      assert.deepEqual(await found({ $search: "cooking", $caseSensitive: true }), []);
      // A document in its own language is stemmed in it.
      assert.deepEqual(await found({ $search: "corriendo", $language: "es" }), [5]);
      assert.equal(await c.count({ $text: { $search: "shoes" } }), 2);
      assert.equal(await c.count({ $text: { $search: "shoes" }, _id: { $gt: 1 } }), 1);
      // In an aggregation, the first `$match` searches.
      assert.deepEqual(
        await c.aggregate([
          { $match: { $text: { $search: "shoes" } } },
          { $project: { _id: 1 } },
          { $sort: { _id: 1 } },
        ]),
        [{ _id: 1 }, { _id: 4 }],
      );
    },
  },
  {
    name: "text: textScore weighs each term by field weight, frequency and length",
    needs: ["$text"],
    async fn({ coll }) {
      const c = coll("text_score");
      await c.insertMany([
        { _id: 1, title: "shoes", body: "shoe shoe" },
        { _id: 2, title: "Running shoes", body: "x" },
        { _id: 3, title: "shoe", body: "" },
      ]);
      await c.createIndex({
        keys: { title: "text", body: "text" },
        name: "words",
        options: { weights: { title: 3 } },
      });
      const scored = await c.aggregate([
        { $match: { $text: { $search: "shoes" } } },
        { $project: { _id: 1, score: { $meta: "textScore" } } },
        { $sort: { score: { $meta: "textScore" } } },
      ]);
      assert.deepEqual(ids(scored), [1, 3, 2]);
      const expected = [4.5, 3.3, 2.25];
      scored.forEach((d, i) => assert.ok(Math.abs((d.score as number) - expected[i]) < 1e-9));
    },
  },
  {
    name: "text: a search needs the text index and well-formed arguments",
    needs: ["$text"],
    async fn({ coll }) {
      const c = coll("text_refused");
      await c.insertMany([{ _id: 1, title: "a" }]);
      await assert.rejects(c.find({ $text: { $search: "a" } }), InvalidQueryError);
      await c.createIndex({ keys: { title: "text" }, name: "title_text" });
      for (
        const spec of [
          {},
          { $search: 5 },
          { $search: "a", $language: "klingon" },
          { $search: "a", $caseSensitive: "yes" },
        ]
      ) {
        await assert.rejects(c.find({ $text: spec }), InvalidQueryError, JSON.stringify(spec));
      }
    },
  },
  {
    name: "ping, kind",
    async fn({ store }) {
      await store.ping();
      assert.equal(typeof store.kind, "string");
    },
  },
];

/** Every gap name some conformance case needs (to check gap lists against). */
export function conformanceGaps(): Set<string> {
  return new Set(CASES.flatMap((c) => c.needs ?? []));
}

/**
 * Registers the conformance cases for one store backend.
 *
 * @param label the store, the prefix of every test name (`"mongo"`); it decides the sanitizers.
 * @param open opens a fresh store; the case closes it.
 * @param gaps features the backend lacks: cases needing them are ignored, gap named.
 */
export function storeConformance(
  label: StoreKind,
  open: () => Promise<Store>,
  gaps: Set<string> = new Set(),
): void {
  for (const c of CASES) {
    const missing = (c.needs ?? []).filter((g) => gaps.has(g));
    Deno.test({
      ...skipUnless(`${label} store: ${c.name}`, missing.map(jongodbGap).join(", ")),
      sanitizeResources: SANITIZED[label],
      sanitizeOps: SANITIZED[label],
      async fn() {
        const store = await open();
        const created: Collection[] = [];
        const coll = (base: string) => {
          const col = store.collection(uniqueName(base));
          created.push(col);
          return col;
        };
        try {
          await c.fn({ store, coll });
        } finally {
          for (const col of created) await col.drop().catch(() => {});
          await store.close();
        }
      },
    });
  }
}
