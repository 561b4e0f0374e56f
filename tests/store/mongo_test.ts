/**
 * The MongoDB store: the conformance suite against `MONGO_URI` when set (no skips), else
 * against a jongodb emulator started for this file (its gaps skipped); plus unit tests of
 * the paths an emulator cannot reach (bulk write errors, index conflicts, connection errors).
 */
import assert from "node:assert/strict";
import { MongoCollection } from "../../src/store/mongo/collection.ts";
import { duplicateFields, fieldsFromMessage } from "../../src/store/mongo/errors.ts";
import { openMongoStore } from "../../src/store/mongo/mod.ts";
import { databaseFromUri, redactUri, resolveTarget } from "../../src/store/mongo/uri.ts";
import { DuplicateKeyError, StoreError } from "../../src/store/store.ts";
import { JONGODB_GAPS, sharedMongoTarget } from "../support/jongodb.ts";
import { conformanceGaps, storeConformance } from "./conformance.ts";
import type { Json } from "../support/client.ts";

const target = await sharedMongoTarget();
const gaps = target.emulator ? new Set(JONGODB_GAPS.keys()) : new Set<string>();

storeConformance("mongo", () => openMongoStore({ uri: target.uri }), gaps);

Deno.test("mongo store: every gap the conformance suite names is a known jongodb gap", () => {
  for (const gap of conformanceGaps()) assert.ok(JONGODB_GAPS.has(gap), gap);
});

Deno.test("mongo store: uses the database named in the URI, else dbName, else eve", () => {
  assert.equal(resolveTarget({}).dbName, "eve");
  assert.equal(resolveTarget({}).uri, "mongodb://localhost:27017/");
  assert.equal(resolveTarget({ uri: "mongodb://h:1/shop?x=1" }).dbName, "shop");
  assert.equal(resolveTarget({ uri: "mongodb://h:1/?x=1" }).dbName, "eve");
  assert.equal(resolveTarget({ uri: "mongodb://h:1/shop", dbName: "other" }).dbName, "other");
  assert.equal(databaseFromUri("mongodb+srv://u:p@cluster.example/db%20x"), "db x");
  assert.equal(databaseFromUri("mongodb://a:1,b:2"), undefined);
});

Deno.test("mongo store: builds the URI from parts with encoded credentials", () => {
  const t = resolveTarget({
    host: "db.local",
    port: 27018,
    username: "us er",
    password: "p@ss:/word",
    authSource: "admin",
    dbName: "api",
  });
  assert.equal(t.uri, "mongodb://us%20er:p%40ss%3A%2Fword@db.local:27018/?authSource=admin");
  assert.equal(t.dbName, "api");
  assert.equal(t.redacted, "mongodb://us%20er:***@db.local:27018/?authSource=admin");
  assert.equal(redactUri("mongodb://u:secret@h/db"), "mongodb://u:***@h/db");
  assert.equal(redactUri("mongodb://h/db"), "mongodb://h/db");
  assert.throws(() => resolveTarget({ port: 70000 }), RangeError);
});

Deno.test({
  name: "mongo store: connection failure is a StoreError without the password",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    for (
      const options of [
        { host: "127.0.0.1", port, username: "app", password: "Sup3r-S3cret" },
        { uri: `mongodb://app:Sup3r-S3cret@127.0.0.1:${port}/x` },
      ]
    ) {
      await assert.rejects(
        openMongoStore({ ...options, options: { serverSelectionTimeoutMS: 300 } }),
        (err: unknown) => {
          assert.ok(err instanceof StoreError);
          assert.match(err.message, /cannot connect to MongoDB at mongodb:\/\/app:\*\*\*@127/);
          assert.ok(!err.message.includes("Sup3r-S3cret"), err.message);
          return true;
        },
      );
    }
  },
});

Deno.test("mongo store: duplicate key fields from keyPattern or the message", () => {
  assert.deepEqual(duplicateFields({ code: 11000, keyPattern: { a: 1, b: -1 } }), ["a", "b"]);
  assert.deepEqual(duplicateFields({ code: 11000, keyValue: { email: "x" } }), ["email"]);
  const msg = (index: string, key: string) =>
    `E11000 duplicate key error collection: db.c index: ${index} dup key: ${key}`;
  assert.deepEqual(fieldsFromMessage(msg("first_name_1", '{ first_name: "x" }')), ["first_name"]);
  assert.deepEqual(fieldsFromMessage(msg("a_1_b.c_-1", "{ : 1, : 2 }")), ["a", "b.c"]);
  assert.deepEqual(fieldsFromMessage(msg("_id_", "{ _id: 1 }")), ["_id"]);
  assert.deepEqual(fieldsFromMessage(msg("custom", '{ sku: "s", live: true }')), ["sku", "live"]);
  assert.deepEqual(fieldsFromMessage("something else"), []);
  assert.deepEqual(
    duplicateFields({ code: 11000, writeErrors: [{ code: 11000, errmsg: msg("sku_1", "{}") }] }),
    ["sku"],
  );
});

/** A stand-in for a driver collection, recording calls. */
function fakeDriver(overrides: Record<string, (...args: Json[]) => unknown>) {
  const calls: [string, unknown[]][] = [];
  const handler: ProxyHandler<Record<string, unknown>> = {
    get(_t, prop: string) {
      if (prop === "collectionName") return "fake";
      return (...args: unknown[]) => {
        calls.push([prop, args]);
        const fn = overrides[prop];
        return fn ? fn(...args) : Promise.resolve({});
      };
    },
  };
  return { driver: new Proxy({}, handler) as Json, calls };
}

Deno.test("mongo store: insertMany deletes what an ordered insert stored before a write error", async () => {
  const { driver, calls } = fakeDriver({
    insertMany: () =>
      Promise.reject({
        code: 11000,
        writeErrors: [{ index: 2, code: 11000, errmsg: "E11000 index: code_1 dup key: { }" }],
        result: { insertedCount: 2 },
      }),
  });
  const c = new MongoCollection(driver);
  const docs = [{ _id: "a" }, { _id: "b" }, { _id: "c" }, { _id: "d" }];
  await assert.rejects(c.insertMany(docs), (e: unknown) => {
    assert.ok(e instanceof DuplicateKeyError);
    assert.deepEqual(e.fields, ["code"]);
    return true;
  });
  const deletes = calls.filter(([m]) => m === "deleteMany");
  assert.deepEqual(deletes.map(([, args]) => args[0]), [{ _id: { $in: ["a", "b"] } }]);
});

Deno.test("mongo store: insertMany never deletes after a failure that stored nothing", async () => {
  const { driver, calls } = fakeDriver({
    insertMany: () =>
      Promise.reject({
        code: 11000,
        errmsg: "E11000 index: _id_ dup key: { _id: 1 }",
        writeErrors: [],
        insertedIds: { 0: "a" },
        result: { insertedCount: 0 },
      }),
  });
  await assert.rejects(new MongoCollection(driver).insertMany([{ _id: "a" }]), DuplicateKeyError);
  assert.equal(calls.filter(([m]) => m === "deleteMany").length, 0);
});

Deno.test("mongo store: createIndex keeps an equivalent index and replaces a changed one", async () => {
  let fail = true;
  const existing = [{ name: "x_custom", key: { x: 1 }, unique: false }];
  const { driver, calls } = fakeDriver({
    createIndex: () => {
      if (fail) return Promise.reject({ code: 85, message: "Index already exists" });
      return Promise.resolve("x_1");
    },
    listIndexes: () => ({ toArray: () => Promise.resolve(existing) }),
    dropIndex: () => Promise.resolve({}),
  });
  const c = new MongoCollection(driver);
  await c.createIndex({ keys: { x: 1 } });
  assert.equal(calls.filter(([m]) => m === "dropIndex").length, 0);
  const recreate = c.createIndex({ keys: { x: 1 }, unique: true });
  fail = false;
  await recreate;
  assert.deepEqual(calls.filter(([m]) => m === "dropIndex").map(([, a]) => a[0]), ["x_custom"]);
  assert.deepEqual(calls.filter(([m]) => m === "createIndex").at(-1)?.[1], [{ x: 1 }, {
    unique: true,
  }]);
});

Deno.test("mongo store: createIndex sends every option, and compares them with the existing index", async () => {
  const existing = [{
    name: "seen_ttl",
    key: { seen: 1 },
    sparse: true,
    expireAfterSeconds: 600,
    collation: { locale: "fr", strength: 3, caseLevel: false },
  }];
  const { driver, calls } = fakeDriver({
    createIndex: () => Promise.reject({ code: 85, message: "Index already exists" }),
    listIndexes: () => ({ toArray: () => Promise.resolve(existing) }),
    dropIndex: () => Promise.resolve({}),
  });
  const c = new MongoCollection(driver);
  const spec = {
    keys: { seen: 1 as const },
    name: "seen_ttl",
    sparse: true,
    expireAfterSeconds: 600,
    options: { collation: { locale: "fr" } },
  };
  await c.createIndex(spec).catch(() => {});
  assert.deepEqual(calls.find(([m]) => m === "createIndex")?.[1], [{ seen: 1 }, {
    collation: { locale: "fr" },
    name: "seen_ttl",
    sparse: true,
    expireAfterSeconds: 600,
  }]);
  // The same options (the server's collation filled in): kept.
  assert.equal(calls.filter(([m]) => m === "dropIndex").length, 0);
  // Another TTL: the index is rebuilt.
  await c.createIndex({ ...spec, expireAfterSeconds: 60 }).catch(() => {});
  assert.deepEqual(calls.filter(([m]) => m === "dropIndex").map(([, a]) => a[0]), ["seen_ttl"]);
});

Deno.test("mongo store: aggregate passes its options, disk use allowed, the tighter time bound", async () => {
  const { driver, calls } = fakeDriver({
    aggregate: () => ({ toArray: () => Promise.resolve([]) }),
  });
  const ctx = { maxTimeMS: 5_000 } as unknown as ConstructorParameters<typeof MongoCollection>[2];
  const c = new MongoCollection(driver, undefined, ctx);
  await c.aggregate([{ $match: {} }], { let: { min: 2 }, collation: { locale: "fr" } });
  await c.aggregate([], { maxTimeMS: 100, allowDiskUse: false });
  await c.aggregate([], { maxTimeMS: 60_000 });
  const options = calls.filter(([m]) => m === "aggregate").map(([, a]) => a[1]);
  assert.deepEqual(options, [
    { allowDiskUse: true, let: { min: 2 }, collation: { locale: "fr" }, maxTimeMS: 5_000 },
    { allowDiskUse: false, maxTimeMS: 100 },
    { allowDiskUse: true, maxTimeMS: 5_000 },
  ]);
});

Deno.test("mongo store: drop ignores a missing namespace", async () => {
  const { driver } = fakeDriver({
    drop: () => Promise.reject({ code: 26, message: "ns not found" }),
  });
  await new MongoCollection(driver).drop();
});

Deno.test({
  name: "mongo store: alongside documents in a transaction when the deployment has them",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { MongoClient } = await import("mongodb");
    const client = new MongoClient(target.uri);
    await client.connect();
    try {
      const db = client.db(`tx_${Date.now().toString(36)}`);
      // Forced on: the emulator runs transactions though it reports a standalone server.
      const ctx = { client, db, transactions: true };
      const main = new MongoCollection(db.collection("main"), undefined, ctx);
      const along = (tag: string) => ({ collection: "log", docs: [{ _id: tag }] });
      await main.insertMany([{ _id: 1 }], { alongside: along("insert") });
      await assert.rejects(
        main.insertMany([{ _id: 2 }, { _id: 1 }], { alongside: along("dup") }),
        DuplicateKeyError,
      );
      assert.equal(
        (await main.replaceOne({ _id: 1 }, { v: 1 }, { alongside: along("replace") })).matched,
        1,
      );
      assert.equal(await main.deleteOne({ _id: 5 }, { alongside: along("miss") }), 0);
      assert.equal(await main.deleteOne({ _id: 1 }, { alongside: along("delete") }), 1);
      const logged = (await db.collection("log").find({}).toArray()).map((d) => d._id).sort();
      assert.deepEqual(logged, ["delete", "insert", "replace"]);
      assert.deepEqual(
        await db.collection("main").find({}).toArray(),
        [],
        "the failed batch left nothing",
      );
      await db.dropDatabase().catch(() => {});
    } finally {
      await client.close();
    }
  },
});

Deno.test("mongo store: MONGO_WRITE_CONCERN reaches the driver", async () => {
  const { openStore } = await import("../../src/store/open.ts");
  const { checkSettings } = await import("../../src/settings/check.ts");
  const { settings } = checkSettings({
    MONGO_URI: target.uri,
    MONGO_WRITE_CONCERN: { w: 1, j: true },
  });
  const store = await openStore(settings, false);
  try {
    // The driver's database handle carries the concern every write uses.
    const db = (store as unknown as { db: { writeConcern?: { w?: unknown; journal?: unknown } } })
      .db;
    assert.equal(db.writeConcern?.w, 1);
    assert.equal(db.writeConcern?.journal, true);
  } finally {
    await store.close();
  }
});

Deno.test("mongo store: writes carry the write concern, reads carry none", async () => {
  const { openStore } = await import("../../src/store/open.ts");
  const { checkSettings } = await import("../../src/settings/check.ts");
  const { settings } = checkSettings({
    MONGO_URI: target.uri,
    MONGO_WRITE_CONCERN: { w: 1, j: true },
    MONGO_OPTIONS: { monitorCommands: true },
  });
  const name = `concerns_${crypto.randomUUID().slice(0, 8)}`;
  const own = `${name}_own`;
  const store = await openStore(settings, false, { [own]: { w: 1, j: false } });
  const seen: Array<{ name: string; collection: unknown; writeConcern: unknown }> = [];
  const client = (store as unknown as {
    client: { on(event: string, listener: (e: CommandEvent) => void): void };
  }).client;
  client.on("commandStarted", (e) => {
    const command = e.command as Record<string, unknown>;
    seen.push({
      name: e.commandName,
      collection: command[e.commandName],
      writeConcern: command.writeConcern,
    });
  });
  try {
    for (const collectionName of [name, own]) {
      const c = store.collection(collectionName);
      await c.insertMany([{ _id: "a", n: 1 }, { _id: "b", n: 2 }]);
      assert.equal((await c.findOne({ _id: "a" }))?.n, 1);
      assert.equal((await c.find({ n: { $gt: 0 } }, { sort: { n: 1 } })).length, 2);
      assert.equal(await c.count({}), 2);
      assert.deepEqual((await c.distinct("n")).sort(), [1, 2]);
      await c.deleteMany({});
    }
    const of = (collection: string, command: string) =>
      seen.filter((s) => s.collection === collection && s.name === command);
    for (const command of ["insert", "delete"]) {
      assert.deepEqual(of(name, command).map((s) => s.writeConcern), [{ w: 1, j: true }]);
      assert.deepEqual(of(own, command).map((s) => s.writeConcern), [{ w: 1, j: false }]);
    }
    for (const collection of [name, own]) {
      // The driver handle reads go through has no concern to drop from each read's options.
      const reader = (store.collection(collection) as unknown as {
        reader: { writeConcern?: unknown };
      }).reader;
      assert.equal(reader.writeConcern, undefined);
      const reads = ["find", "aggregate", "distinct"].flatMap((command) => of(collection, command));
      // findOne and find, the count's aggregation, distinct.
      assert.equal(reads.length, 4);
      for (const read of reads) assert.equal(read.writeConcern, undefined, read.name);
    }
  } finally {
    await store.close();
  }
});

Deno.test("mongo store: a single-item read is one find command with the URI's read concern", async () => {
  const { openStore } = await import("../../src/store/open.ts");
  const { checkSettings } = await import("../../src/settings/check.ts");
  const uri = new URL(target.uri);
  uri.searchParams.set("readConcernLevel", "local");
  const { settings } = checkSettings({
    MONGO_URI: uri.href,
    MONGO_OPTIONS: { monitorCommands: true },
  });
  const name = `single_${crypto.randomUUID().slice(0, 8)}`;
  const store = await openStore(settings, false);
  const seen: Array<Record<string, unknown>> = [];
  const client = (store as unknown as {
    client: { on(event: string, listener: (e: CommandEvent) => void): void };
  }).client;
  try {
    const c = store.collection(name);
    await c.insertMany([{ _id: "a", n: 1, m: 1 }, { _id: "b", n: 2, m: 2 }]);
    client.on("commandStarted", (e) => {
      if (e.commandName === "find") seen.push(e.command as Record<string, unknown>);
    });
    // The emulator ignores projections (a gap listed in tests/support/jongodb.ts): the command
    // is checked for it below.
    const first = await c.findOne({ n: { $gt: 0 } }, { sort: { n: -1 }, projection: { n: 1 } });
    assert.equal(first?._id, "b");
    assert.deepEqual(await c.findOne({ _id: "a" }, { skip: 0 }), { _id: "a", n: 1, m: 1 });
    assert.equal(await c.findOne({ _id: "c" }), null);
    assert.equal(seen.length, 3);
    for (const command of seen) {
      assert.equal(command.find, name);
      assert.equal(command.limit, 1);
      assert.equal(command.singleBatch, true);
      assert.deepEqual(command.readConcern, { level: "local" });
    }
    assert.deepEqual(seen[0].sort, { n: -1 });
    assert.deepEqual(seen[0].projection, { n: 1 });
  } finally {
    await store.close();
  }
});

interface CommandEvent {
  commandName: string;
  command: unknown;
}
