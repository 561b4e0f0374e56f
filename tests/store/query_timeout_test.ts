/** QUERY_TIMEOUT_MS at the store level: maxTimeMS on every MongoDB read, code 50 translated. */
import assert from "node:assert/strict";
import { BSONRegExp, MongoServerError, ObjectId } from "mongodb";
import { MongoCollection, type MongoContext } from "../../src/store/mongo/collection.ts";
import { translateError } from "../../src/store/mongo/errors.ts";
import { QueryTimeoutError } from "../../src/store/store.ts";
import type { Json } from "../support/client.ts";

/** A driver collection recording the options of each call. */
function recordingDriver() {
  const seen: Record<string, unknown> = {};
  const cursor = { toArray: () => Promise.resolve([]) };
  const driver = {
    collectionName: "people",
    find: (_f: unknown, o: unknown) => (seen.find = o, cursor),
    findOne: (_f: unknown, o: unknown) => (seen.findOne = o, Promise.resolve(null)),
    countDocuments: (_f: unknown, o: unknown) => (seen.count = o, Promise.resolve(0)),
    aggregate: (_p: unknown, o: unknown) => (seen.aggregate = o, cursor),
    distinct: (_k: unknown, _f: unknown, o: unknown) => (seen.distinct = o, Promise.resolve([])),
  };
  return { driver: driver as Json, seen };
}

Deno.test("mongo store: every read and aggregation carries maxTimeMS", async () => {
  const { driver, seen } = recordingDriver();
  const c = new MongoCollection(driver, undefined, { maxTimeMS: 1234 } as MongoContext);
  await c.find({}, { limit: 3 });
  await c.findOne({ a: 1 });
  await c.count({});
  await c.aggregate([{ $match: {} }]);
  await c.distinct("a");
  for (const call of ["find", "findOne", "count", "aggregate", "distinct"]) {
    assert.equal((seen[call] as Json)?.maxTimeMS, 1234, call);
  }
});

Deno.test("mongo store: a lookup of one _id without code carries no maxTimeMS", async () => {
  const { driver, seen } = recordingDriver();
  const c = new MongoCollection(driver, undefined, { maxTimeMS: 1234 } as MongoContext);
  const bound = async (filter: Json) => {
    await c.findOne(filter);
    return (seen.findOne as Json).maxTimeMS;
  };
  const id = new ObjectId();
  // One document at most, through the _id index: no bound needed.
  assert.equal(await bound({ _id: id }), undefined);
  assert.equal(await bound({ _id: "a-string-id" }), undefined);
  assert.equal(await bound({ _id: id, _deleted: { $ne: true } }), undefined);
  assert.equal(await bound({ $and: [{ _id: id }, { owner: "ann" }] }), undefined);
  // Operators on _id, no _id, or code anywhere keep the bound.
  assert.equal(await bound({ _id: { $in: [id, new ObjectId()] } }), 1234);
  assert.equal(await bound({ _id: { $gt: id } }), 1234);
  assert.equal(await bound({ email: "ann@example.com" }), 1234);
  assert.equal(await bound({ _id: id, $where: "sleep(100) || true" }), 1234);
  assert.equal(await bound({ _id: id, $or: [{ $expr: { $gt: ["$a", 1] } }] }), 1234);
  assert.equal(await bound({ $and: [{ _id: id }, { $where: "true" }] }), 1234);
  assert.equal(await bound({ _id: id, name: { $regex: "^(a+)+$" } }), 1234);
  assert.equal(await bound({ _id: id, name: /^(a+)+$/ }), 1234);
  assert.equal(await bound({ _id: id, name: new BSONRegExp("^(a+)+$") }), 1234);
  let deep: Json = { a: 1 };
  for (let i = 0; i < 40; i++) deep = { $and: [deep] };
  assert.equal(await bound({ _id: id, $or: [deep] }), 1234);
});

Deno.test("mongo store: no maxTimeMS when QUERY_TIMEOUT_MS is 0", async () => {
  const { driver, seen } = recordingDriver();
  await new MongoCollection(driver, undefined, { maxTimeMS: 0 } as MongoContext).find({});
  assert.equal((seen.find as Json).maxTimeMS, undefined);
});

Deno.test("mongo store: MaxTimeMSExpired becomes QueryTimeoutError", () => {
  const err = new MongoServerError({ code: 50, errmsg: "operation exceeded time limit" });
  assert.ok(translateError(err) instanceof QueryTimeoutError);
});
