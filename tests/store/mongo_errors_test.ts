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
