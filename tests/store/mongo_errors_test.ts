/**
 * MongoDB driver errors mapped by code and class (src/store/mongo/errors.ts), with errors
 * built as the driver builds them: the emulator cannot produce every code. And a bulk
 * insert whose clean-up fails is reported, naming the documents that may remain.
 */
import assert from "node:assert/strict";
import {
  BSON,
  type Collection as DriverCollection,
  type Document,
  MongoBulkWriteError,
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoWriteConcernError,
} from "mongodb";
import { classifyError, translateError } from "../../src/store/mongo/errors.ts";
import { MongoCollection } from "../../src/store/mongo/collection.ts";
import {
  DuplicateKeyError,
  InvalidQueryError,
  PartialWriteError,
  QueryTimeoutError,
  StoreError,
  WriteConcernError,
} from "../../src/store/store.ts";

const server = (fields: Record<string, unknown>) => new MongoServerError(fields);

Deno.test("mongo errors: a query the server refuses is a bad query with its reason", () => {
  const cases = [
    { code: 2, codeName: "BadValue", errmsg: "unknown operator: $foo" },
    {
      code: 291,
      codeName: "NoQueryExecutionPlans",
      errmsg: "error processing query: planner returned error :: caused by :: unable to " +
        "find index for $geoNear query",
    },
    { code: 27, codeName: "IndexNotFound", errmsg: "text index required for $text query" },
    { code: 9999999, codeName: "BadValue", errmsg: "a newer server's code, a known name" },
  ];
  for (const fields of cases) {
    const err = server(fields);
    assert.equal(classifyError(err), "bad-query", fields.errmsg);
    const mapped = translateError(err, "s3cret");
    assert.ok(mapped instanceof InvalidQueryError);
    assert.equal(mapped.reason, fields.errmsg);
  }
});

Deno.test("mongo errors: a query feature the server does not implement is a bad query", () => {
  const err = server({ code: 238, codeName: "NotImplemented", errmsg: "unsupported: $near" });
  assert.equal(classifyError(err), "bad-query");
  const translated = translateError(err);
  assert.ok(translated instanceof InvalidQueryError);
  assert.match(translated.message, /unsupported: \$near/);
});

Deno.test("mongo errors: a command the driver cannot encode is a bad query, not a failure", () => {
  let encoding: unknown;
  try {
    BSON.serialize({ sort: { "a\u0000b": 1 } }, { checkKeys: true });
  } catch (err) {
    encoding = err;
  }
  assert.ok(BSON.BSONError.isBSONError(encoding), "the driver's encoder refuses a NUL in a name");
  const translated = translateError(encoding, "s3cret");
  assert.ok(translated instanceof InvalidQueryError);
  assert.match(translated.message, /^MongoDB: cannot encode the request: /);
});

Deno.test("mongo errors: the reason is scrubbed of the password and bounded", () => {
  const err = server({ code: 2, errmsg: `bad value near s3cret ${"x".repeat(1000)}` });
  const mapped = translateError(err, "s3cret") as InvalidQueryError;
  assert.ok(!mapped.reason!.includes("s3cret"));
  assert.ok(mapped.reason!.length <= 303);
});

Deno.test("mongo errors: duplicate keys, time-outs, network and selection failures", () => {
  const dup = translateError(
    server({ code: 11000, keyPattern: { email: 1 }, errmsg: "E11000 duplicate key" }),
  );
  assert.ok(dup instanceof DuplicateKeyError);
  assert.deepEqual(dup.fields, ["email"]);
  assert.equal(
    classifyError(server({ code: 50, errmsg: "operation exceeded time limit" })),
    "timeout",
  );
  assert.ok(translateError(server({ code: 50, errmsg: "x" })) instanceof QueryTimeoutError);
  for (
    const err of [
      new MongoNetworkError("connection reset"),
      new MongoNetworkTimeoutError("socket timed out"),
      new MongoServerSelectionError("no primary", {} as never),
    ]
  ) {
    assert.equal(classifyError(err), "unavailable", err.message);
    assert.ok(translateError(err) instanceof StoreError);
  }
  // Any other server failure is the database's, not the client's.
  assert.equal(classifyError(server({ code: 13, errmsg: "unauthorized" })), "other");
  assert.ok(translateError(server({ code: 13, errmsg: "unauthorized" })) instanceof StoreError);
  // Errors that are not the driver's pass through.
  const plain = new TypeError("a bug");
  assert.equal(translateError(plain), plain);
});

/** A driver collection whose insert stores the first two documents, then fails. */
function failingCollection(cleanup: "works" | "fails") {
  const deleted: unknown[] = [];
  const fake = {
    collectionName: "people",
    insertMany() {
      const writeError = { code: 11000, index: 2, errmsg: "E11000 dup key: { _id: 3 }" };
      throw new MongoBulkWriteError(
        { message: "E11000", code: 11000, writeErrors: [writeError] } as never,
        { insertedCount: 2, insertedIds: {} } as never,
      );
    },
    deleteMany(filter: { _id: { $in: unknown[] } }) {
      if (cleanup === "fails") throw new MongoNetworkError("connection reset");
      deleted.push(...filter._id.$in);
      return Promise.resolve({ deletedCount: filter._id.$in.length });
    },
  };
  const collection = new MongoCollection(fake as unknown as DriverCollection<Document>);
  return { collection, deleted };
}

Deno.test("mongo insert: a partly stored batch is removed again", async () => {
  const { collection, deleted } = failingCollection("works");
  await assert.rejects(
    collection.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]),
    (e: unknown) => e instanceof DuplicateKeyError,
  );
  assert.deepEqual(deleted, [1, 2]);
});

Deno.test("mongo insert: a failed clean-up names the documents that may remain", async () => {
  const { collection } = failingCollection("fails");
  const error = await collection.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }])
    .then(() => null, (e: unknown) => e);
  assert.ok(error instanceof PartialWriteError, String(error));
  assert.deepEqual(error.remaining, [1, 2]);
  assert.ok(error.cause instanceof DuplicateKeyError, "the write's own error is kept");
  assert.ok(error.cleanup instanceof StoreError, "and the clean-up's");
  assert.match(error.message, /clean-up failed .*2 document\(s\) may remain/);
});

Deno.test("mongo errors: a write concern the deployment cannot satisfy is a WriteConcernError", () => {
  const single = new MongoWriteConcernError({
    ok: 1,
    n: 1,
    writeConcernError: {
      code: 100,
      codeName: "UnsatisfiableWriteConcern",
      errmsg: "Not enough data-bearing nodes",
    },
  });
  // A server may call an unsatisfiable `w` a BadValue inside its write concern error: still
  // the configuration's fault, not a bad query.
  const badValue = new MongoWriteConcernError({
    ok: 1,
    writeConcernError: {
      code: 2,
      codeName: "BadValue",
      errmsg: "cannot use 'w' > 1 on a standalone",
    },
  });
  const tags = server({
    code: 79,
    codeName: "UnknownReplWriteConcern",
    errmsg: "No write concern mode named 'dc-east' found",
  });
  const bulk = server({
    errmsg: "bulk",
    writeConcernErrors: [{ code: 100, errmsg: "Not enough data-bearing nodes" }],
  });
  for (const err of [single, badValue, tags, bulk]) {
    assert.equal(classifyError(err), "write-concern", String(err));
    const translated = translateError(err);
    assert.ok(translated instanceof WriteConcernError, String(err));
    assert.ok(translated instanceof StoreError);
  }
  // A plain BadValue stays a bad query.
  assert.equal(classifyError(server({ code: 2, codeName: "BadValue", errmsg: "x" })), "bad-query");
});

/**
 * A collection whose single-item reads go to a fake database: `command` fails with `error`
 * (or answers `doc`), the driver's own `findOne` answers `fallback` and counts its calls.
 */
function singleReads(
  options: { error?: unknown; doc?: Document; fallback?: Document; retryReads?: boolean },
) {
  const calls = { command: [] as Document[], findOne: 0 };
  const reads = {
    collectionName: "people",
    readConcern: { level: "majority" },
    readPreference: "secondaryPreferred",
    bsonOptions: {},
    findOne: () => {
      calls.findOne++;
      return Promise.resolve(options.fallback ?? null);
    },
  };
  const db = {
    command: (command: Document) => {
      calls.command.push(command);
      if (options.error) return Promise.reject(options.error);
      return Promise.resolve({ cursor: { firstBatch: options.doc ? [options.doc] : [] }, ok: 1 });
    },
  };
  const collection = new MongoCollection(
    reads as unknown as DriverCollection<Document>,
    "s3cret",
    {
      client: { options: { retryReads: options.retryReads ?? true } },
      reads,
      db,
    } as unknown as ConstructorParameters<typeof MongoCollection>[2],
  );
  return { collection, calls };
}

Deno.test("mongo findOne: one find command with the read handle's read concern", async () => {
  const { collection, calls } = singleReads({ doc: { _id: 1, n: 2 } });
  assert.deepEqual(await collection.findOne({ n: 2 }, { projection: { n: 1 }, sort: { n: -1 } }), {
    _id: 1,
    n: 2,
  });
  assert.deepEqual(calls.command, [{
    find: "people",
    filter: { n: 2 },
    limit: 1,
    singleBatch: true,
    batchSize: 1,
    sort: { n: -1 },
    projection: { n: 1 },
    readConcern: { level: "majority" },
  }]);
  assert.equal(calls.findOne, 0);
  assert.equal(await singleReads({}).collection.findOne({ _id: 1 }), null);
});

Deno.test("mongo findOne: a failure the driver retries goes through the driver's findOne", async () => {
  const retried = [
    new MongoNetworkError("connection reset"),
    server({ code: 11602, codeName: "InterruptedDueToReplStateChange", errmsg: "stepping down" }),
    server({ code: 13435, codeName: "NotPrimaryNoSecondaryOk", errmsg: "not primary" }),
    server({ errmsg: "node is recovering" }),
  ];
  for (const error of retried) {
    const { collection, calls } = singleReads({ error, fallback: { _id: 7 } });
    assert.deepEqual(await collection.findOne({ _id: 7 }), { _id: 7 }, error.message);
    assert.equal(calls.findOne, 1, error.message);
  }
});

Deno.test("mongo findOne: other failures, or retryReads off, are not read again", async () => {
  const refused = server({ code: 2, codeName: "BadValue", errmsg: "unknown operator: $foo" });
  const once = singleReads({ error: refused, fallback: { _id: 7 } });
  await assert.rejects(once.collection.findOne({ $foo: 1 }), InvalidQueryError);
  assert.equal(once.calls.findOne, 0);
  const timedOut = server({ code: 50, codeName: "MaxTimeMSExpired", errmsg: "time limit" });
  const slow = singleReads({ error: timedOut, fallback: { _id: 7 } });
  await assert.rejects(slow.collection.findOne({ n: 1 }), QueryTimeoutError);
  assert.equal(slow.calls.findOne, 0);
  const off = singleReads({
    error: new MongoNetworkError("connection reset"),
    fallback: { _id: 7 },
    retryReads: false,
  });
  await assert.rejects(off.collection.findOne({ _id: 7 }), StoreError);
  assert.equal(off.calls.findOne, 0);
});
