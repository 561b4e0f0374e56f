/** QUERY_TIMEOUT_MS at the store level: maxTimeMS on every MongoDB read, code 50 translated. */
import assert from "node:assert/strict";
import { MongoServerError } from "mongodb";
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

Deno.test("mongo store: no maxTimeMS when QUERY_TIMEOUT_MS is 0", async () => {
  const { driver, seen } = recordingDriver();
  await new MongoCollection(driver, undefined, { maxTimeMS: 0 } as MongoContext).find({});
  assert.equal((seen.find as Json).maxTimeMS, undefined);
});

Deno.test("mongo store: MaxTimeMSExpired becomes QueryTimeoutError", () => {
  const err = new MongoServerError({ code: 50, errmsg: "operation exceeded time limit" });
  assert.ok(translateError(err) instanceof QueryTimeoutError);
});
