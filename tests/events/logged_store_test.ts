/** The logging store decorator: database exceptions are logged with context and rethrown. */
import assert from "node:assert/strict";
import { withLogContext } from "../../src/log.ts";
import { loggedStore, type StoreObservation } from "../../src/store/logged.ts";
import {
  type Collection,
  DuplicateKeyError,
  QueryTimeoutError,
  type Store,
} from "../../src/store/store.ts";
import { memoryLogger } from "./record.ts";
import { ObjectId } from "../../src/doc/bson.ts";

/** A store whose collections answer `find` with one document and fail everything else. */
function fakeStore(failure: () => Error): Store & { opened: string[] } {
  const opened: string[] = [];
  const fail = () => Promise.reject(failure());
  const collection = (name: string): Collection => {
    opened.push(name);
    return {
      name,
      find: () => Promise.resolve([{ _id: 1 }]),
      findOne: fail,
      count: fail,
      insertMany: fail,
      replaceOne: fail,
      updateOne: fail,
      updateMany: fail,
      deleteOne: fail,
      deleteMany: fail,
      aggregate: fail,
      distinct: fail,
      createIndex: fail,
      drop: fail,
    };
  };
  return {
    kind: "fake",
    opened,
    collection,
    files: {
      put: fail,
      putStream: fail,
      stat: fail,
      read: fail,
      stream: fail,
      delete: fail,
      count: fail,
    },
    collectionNames: fail,
    ping: fail,
    close: () => Promise.resolve(),
  };
}

Deno.test("results pass through untouched and nothing is logged", async () => {
  const { logger, records } = memoryLogger();
  const store = loggedStore(fakeStore(() => new Error("x")), logger);
  assert.equal(store.kind, "fake");
  assert.deepEqual(await store.collection("people").find({}), [{ _id: 1 }]);
  assert.deepEqual(records, []);
});

Deno.test("an exception is logged at error with its stack and rethrown as is", async () => {
  const { logger, records } = memoryLogger();
  const error = new Error("disk on fire");
  const store = loggedStore(fakeStore(() => error), logger);
  await assert.rejects(store.collection("people").insertMany([{ _id: 1 }]), (e) => e === error);
  assert.equal(records.length, 1);
  const [r] = records;
  assert.equal(r.level, "error");
  assert.equal(r.message, "database error in insertMany on people");
  assert.equal(r.operation, "insertMany");
  assert.equal(r.collection, "people");
  assert.match(String(r.error), /^Error: disk on fire\n\s+at /);
  assert.equal(r.clientip, undefined);
});

Deno.test("an operation that throws instead of rejecting is logged and answered as a rejection", async () => {
  const { logger, records } = memoryLogger();
  const error = new Error("thrown at once");
  const inner = fakeStore(() => error);
  const throwing: Store = {
    ...inner,
    collection: (name) => ({
      ...inner.collection(name),
      count: () => {
        throw error;
      },
    }),
  };
  const store = loggedStore(throwing, logger);
  let answer: Promise<number> | undefined;
  assert.doesNotThrow(() => answer = store.collection("people").count({}));
  await assert.rejects(answer!, (e) => e === error);
  assert.deepEqual(records.map((r) => [r.level, r.operation]), [["error", "count"]]);
});

Deno.test("a unique violation is logged at warn", async () => {
  const { logger, records } = memoryLogger();
  const store = loggedStore(fakeStore(() => new DuplicateKeyError(["email"])), logger);
  await assert.rejects(store.collection("people").replaceOne({}, {}), DuplicateKeyError);
  assert.deepEqual(records.map((r) => [r.level, r.operation]), [["warn", "replaceOne"]]);
});

Deno.test("records carry the request fields of the request being handled", async () => {
  const { logger, records } = memoryLogger();
  const store = loggedStore(fakeStore(() => new Error("nope")), logger);
  const fields = { clientip: "10.0.0.1", url: "http://h/people?where=x", method: "PATCH" };
  await withLogContext(fields, async () => {
    await assert.rejects(store.collection("people").count({}));
  });
  assert.equal(records.length, 1);
  assert.equal(records[0].clientip, "10.0.0.1");
  assert.equal(records[0].url, "http://h/people?where=x");
  assert.equal(records[0].method, "PATCH");
});

Deno.test("a request's view of the store labels its failures with the request's fields", async () => {
  const { logger, records } = memoryLogger();
  const store = loggedStore(fakeStore(() => new Error("nope")), logger);
  const fields = { requestid: "r-1", clientip: "10.0.0.2", url: "http://h/p", method: "GET" };
  const view = store.forRequest(fields);
  await assert.rejects(view.collection("people").findOne({}));
  await assert.rejects(view.files.stat(new ObjectId()));
  await assert.rejects(view.ping());
  // The shared store, outside any request and context, adds no request fields.
  await assert.rejects(store.collection("people").findOne({}));
  assert.deepEqual(
    records.map((r) => [r.operation, r.requestid, r.clientip, r.url, r.method]),
    [
      ["findOne", "r-1", "10.0.0.2", "http://h/p", "GET"],
      ["stat", "r-1", "10.0.0.2", "http://h/p", "GET"],
      ["ping", "r-1", "10.0.0.2", "http://h/p", "GET"],
      ["findOne", undefined, undefined, undefined, undefined],
    ],
  );
});

Deno.test("every operation is guarded: collections, files and the store itself", async () => {
  const { logger, records } = memoryLogger();
  const inner = fakeStore(() => new Error("down"));
  const store = loggedStore(inner, logger);
  const c = store.collection("c");
  assert.equal(store.collection("c"), c);
  assert.deepEqual(inner.opened, ["c"]);
  const attempts: Array<[string, () => Promise<unknown>]> = [
    ["findOne", () => c.findOne({})],
    ["count", () => c.count({})],
    ["updateOne", () => c.updateOne({}, {})],
    ["updateMany", () => c.updateMany({}, {})],
    ["deleteOne", () => c.deleteOne({})],
    ["deleteMany", () => c.deleteMany({})],
    ["aggregate", () => c.aggregate([])],
    ["distinct", () => c.distinct("x")],
    ["createIndex", () => c.createIndex({ keys: { x: 1 } })],
    ["drop", () => c.drop()],
    ["put", () => store.files.put(new Uint8Array(), { filename: "f", contentType: "t" })],
    ["collectionNames", () => store.collectionNames()],
    ["ping", () => store.ping()],
  ];
  for (const [, attempt] of attempts) await assert.rejects(attempt());
  assert.deepEqual(records.map((r) => r.operation), attempts.map(([name]) => name));
  assert.equal(records.at(-3)!.collection, "files");
  assert.equal(records.at(-1)!.collection, "store");
});

Deno.test("the observe hook hears every operation with its outcome and duration", async () => {
  const { logger } = memoryLogger();
  const seen: StoreObservation[] = [];
  const errors = [new DuplicateKeyError(["email"]), new QueryTimeoutError("slow")];
  let next = 0;
  const store = loggedStore(fakeStore(() => errors[next++] ?? new Error("down")), logger, {
    observe: (o) => seen.push(o),
  });
  const c = store.collection("people");
  await c.find({});
  await assert.rejects(c.insertMany([{ _id: 1 }]));
  await assert.rejects(c.count({}));
  await assert.rejects(store.ping());
  assert.deepEqual(seen.map((o) => [o.operation, o.collection, o.outcome]), [
    ["find", "people", "ok"],
    ["insertMany", "people", "duplicate_key"],
    ["count", "people", "timeout"],
    ["ping", "store", "error"],
  ]);
  assert.ok(seen.every((o) => o.seconds >= 0 && o.seconds < 5));
});
