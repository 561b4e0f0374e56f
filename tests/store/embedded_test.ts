import type { CollectionState } from "../../src/store/embedded/state.ts";
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openEmbeddedStore } from "../../src/store/embedded/mod.ts";
import { Binary, Decimal128, Long, ObjectId } from "../../src/doc/bson.ts";
import { DuplicateKeyError, InvalidQueryError } from "../../src/store/store.ts";
import { inTempDir, withStore } from "../support/embedded.ts";

const oid = (n: number) => new ObjectId(n.toString(16).padStart(24, "0"));

Deno.test("embedded: CRUD and _id lookups", () =>
  withStore(async (store) => {
    const c = store.collection("people");
    await c.insertMany([{ _id: oid(1), name: "a", age: 30 }, { _id: oid(2), name: "b", age: 20 }]);
    assert.equal((await c.findOne({ _id: oid(2) }))?.name, "b");
    assert.equal(await c.findOne({ _id: oid(3) }), null);
    assert.equal(await c.findOne({ _id: oid(1), name: "x" }), null);
    assert.deepEqual((await c.find({ name: "a" })).map((d) => d.age), [30]);
    assert.equal(await c.count({}), 2);
    assert.equal(await c.count({ age: { $gt: 25 } }), 1);
    assert.equal(await c.count({}, { skip: 1 }), 1);
    assert.equal(await c.count({}, { limit: 1 }), 1);
    // Results are copies.
    const d = await c.findOne({ _id: oid(1) });
    d!.name = "mutated";
    assert.equal((await c.findOne({ _id: oid(1) }))?.name, "a");
    assert.deepEqual(await c.replaceOne({ _id: oid(1) }, { name: "z" }), { matched: 1 });
    const replaced = await c.findOne({ _id: oid(1) });
    assert.deepEqual(replaced, { _id: oid(1), name: "z" });
    assert.equal(await c.deleteOne({ _id: oid(1) }), 1);
    assert.equal(await c.deleteMany({}), 1);
    assert.equal(await c.count({}), 0);
    assert.deepEqual(await store.collectionNames(), ["people"]);
    await c.drop();
    assert.deepEqual(await store.collectionNames(), []);
    await store.ping();
  }));

Deno.test("embedded: filters on ObjectId and Date, sort, skip, limit, projection", () =>
  withStore(async (store) => {
    const c = store.collection("events");
    const docs = [5, 3, 9, 1, 7].map((n) => ({
      _id: oid(n),
      n,
      at: new Date(Date.UTC(2024, 0, n)),
      owner: oid(n % 2),
      tags: n > 4 ? ["big", "x"] : ["small"],
      nested: { v: 10 - n, hidden: true },
    }));
    await c.insertMany(docs);
    const after = await c.find({ at: { $gte: new Date(Date.UTC(2024, 0, 5)) } }, {
      sort: { n: 1 },
    });
    assert.deepEqual(after.map((d) => d.n), [5, 7, 9]);
    assert.ok(after[0].at instanceof Date);
    assert.ok(after[0]._id instanceof ObjectId);
    assert.deepEqual((await c.find({ owner: oid(0) })).length, 0);
    assert.deepEqual(
      (await c.find({ _id: { $gt: oid(4) } }, { sort: { _id: -1 } })).map((d) => d.n),
      [
        9,
        7,
        5,
      ],
    );
    assert.deepEqual((await c.find({ tags: "big" }, { sort: { n: 1 } })).map((d) => d.n), [
      5,
      7,
      9,
    ]);
    assert.deepEqual(
      (await c.find({}, { sort: { "nested.v": 1 }, skip: 1, limit: 2 })).map((d) => d.n),
      [7, 5],
    );
    const projected = await c.find({ n: 1 }, { projection: { n: 1, "nested.v": 1 } });
    assert.deepEqual(projected, [{ _id: oid(1), n: 1, nested: { v: 9 } }]);
    const excluded = await c.find({ n: 1 }, { projection: { nested: 0, tags: 0, at: 0 } });
    assert.deepEqual(excluded, [{ _id: oid(1), n: 1, owner: oid(1) }]);
    assert.deepEqual(await c.distinct("tags"), ["big", "small", "x"]);
  }));

Deno.test("embedded: MongoDB cross-type ordering and code-point string order", () =>
  withStore(async (store) => {
    const c = store.collection("mixed");
    const values: unknown[] = [
      new Date(0),
      true,
      oid(5),
      "b",
      "\u{1F600}",
      "\uFFFD",
      3,
      null,
      { a: 1 },
      Decimal128.fromString("2.5"),
    ];
    await c.insertMany(values.map((v, i) => ({ _id: i, v })));
    const sorted = (await c.find({}, { sort: { v: 1 } })).map((d) => d._id);
    // null < numbers (2.5 < 3) < strings by code point < object < ObjectId < bool < date
    assert.deepEqual(sorted, [7, 9, 6, 3, 5, 4, 8, 2, 1, 0]);
    const agg = await c.aggregate([{ $sort: { v: -1 } }, { $project: { _id: 1 } }]);
    assert.deepEqual(agg.map((d) => d._id), [...sorted].reverse());
  }));

Deno.test("embedded: update operators, replace keeps _id, upsert", () =>
  withStore(async (store) => {
    const c = store.collection("items");
    await c.insertMany([{ _id: "a", n: 1, list: [1, 2, 3], tags: ["x"] }, { _id: "b", n: 5 }]);
    assert.deepEqual(
      await c.updateOne({ _id: "a" }, {
        $set: { "sub.deep": true },
        $inc: { n: 2 },
        $push: { list: 4 },
        $pull: { tags: "x" },
        $addToSet: { set: "y" },
      }),
      { matched: 1 },
    );
    assert.deepEqual(await c.findOne({ _id: "a" }), {
      _id: "a",
      n: 3,
      list: [1, 2, 3, 4],
      tags: [],
      sub: { deep: true },
      set: ["y"],
    });
    await c.updateOne({ _id: "a" }, { $unset: { sub: "" } });
    assert.equal((await c.findOne({ _id: "a" }))?.sub, undefined);
    assert.equal(await c.updateMany({ n: { $gte: 3 } }, { $set: { big: true } }), 2);
    assert.equal(await c.count({ big: true }), 2);
    assert.deepEqual(await c.updateOne({ _id: "zz" }, { $set: { q: 1 } }), { matched: 0 });
    assert.equal(await c.count({}), 2);
    // Upsert builds from the filter's equality fields.
    await c.updateOne({ _id: "u", kind: "k", n: { $gt: 1 } }, {
      $set: { v: 1 },
      $setOnInsert: { created: true },
    }, { upsert: true });
    assert.deepEqual(await c.findOne({ _id: "u" }), { _id: "u", kind: "k", v: 1, created: true });
    await c.updateOne({ _id: "u" }, { $set: { v: 2 }, $setOnInsert: { created: false } }, {
      upsert: true,
    });
    assert.deepEqual(await c.findOne({ _id: "u" }), { _id: "u", kind: "k", v: 2, created: true });
    await c.updateOne({ email: "e@x" }, { $set: { v: 3 } }, { upsert: true });
    const generated = await c.findOne({ email: "e@x" });
    assert.ok(generated?._id instanceof ObjectId);
    await c.replaceOne({ _id: "r" }, { x: 1 }, { upsert: true });
    assert.deepEqual(await c.findOne({ _id: "r" }), { _id: "r", x: 1 });
    await assert.rejects(() => c.replaceOne({ _id: "r" }, { _id: "other", x: 2 }));
    // Positional update.
    await c.insertMany([{ _id: "p", rows: [{ k: 1, v: 0 }, { k: 2, v: 0 }] }]);
    await c.updateOne({ _id: "p", "rows.k": 2 }, { $set: { "rows.$.v": 9 } });
    assert.deepEqual((await c.findOne({ _id: "p" }))?.rows, [{ k: 1, v: 0 }, { k: 2, v: 9 }]);
  }));

Deno.test("embedded: _id and unique indexes, partial filters, all-or-nothing insertMany", () =>
  withStore(async (store) => {
    const c = store.collection("users");
    await c.createIndex({ keys: { email: 1 }, unique: true });
    await c.createIndex({ keys: { email: 1 }, unique: true }); // idempotent
    await c.insertMany([{ _id: 1, email: "a" }, { _id: 2, email: "b" }]);
    await assert.rejects(() => c.insertMany([{ _id: 1, email: "new" }]), DuplicateKeyError);
    const err = await c.insertMany([{ _id: 3, email: "c" }, { _id: 4, email: "a" }]).catch((e) =>
      e
    );
    assert.ok(err instanceof DuplicateKeyError);
    assert.deepEqual(err.fields, ["email"]);
    assert.equal(await c.count({}), 2, "nothing of the failed batch is stored");
    // Duplicates within a batch.
    await assert.rejects(
      () => c.insertMany([{ _id: 5, email: "d" }, { _id: 6, email: "d" }]),
      DuplicateKeyError,
    );
    await assert.rejects(() => c.insertMany([{ _id: 7 }, { _id: 7 }]), DuplicateKeyError);
    // Missing field counts as null: only one document may lack it.
    await c.insertMany([{ _id: 8 }]);
    await assert.rejects(() => c.insertMany([{ _id: 9 }]), DuplicateKeyError);
    assert.equal(await c.count({}), 3);
    // Updates and replaces are checked; a document may keep its own key.
    await assert.rejects(
      () => c.updateOne({ _id: 2 }, { $set: { email: "a" } }),
      DuplicateKeyError,
    );
    await assert.rejects(() => c.replaceOne({ _id: 2 }, { email: "a" }), DuplicateKeyError);
    await assert.rejects(
      () => c.updateOne({ _id: 99 }, { $set: { email: "a" } }, { upsert: true }),
      DuplicateKeyError,
    );
    await c.updateOne({ _id: 2 }, { $set: { email: "b", x: 1 } });
    await assert.rejects(() => c.updateMany({}, { $set: { email: "same" } }), DuplicateKeyError);
    assert.equal((await c.findOne({ _id: 1 }))?.email, "a");
    // Freed keys can be reused.
    await c.updateOne({ _id: 1 }, { $set: { email: "a2" } });
    await c.insertMany([{ _id: 10, email: "a" }]);
    // Creating a unique index over duplicates fails.
    await c.insertMany([{ _id: 11, n: 1, email: "n1" }, { _id: 12, n: 1, email: "n2" }]);
    await assert.rejects(() => c.createIndex({ keys: { n: 1 }, unique: true }), DuplicateKeyError);

    const p = store.collection("soft");
    await p.createIndex({
      keys: { sku: 1 },
      unique: true,
      partialFilterExpression: { _deleted: false },
    });
    await p.insertMany([{ _id: 1, sku: "s", _deleted: false }]);
    await assert.rejects(
      () => p.insertMany([{ _id: 2, sku: "s", _deleted: false }]),
      DuplicateKeyError,
    );
    await p.updateOne({ _id: 1 }, { $set: { _deleted: true } });
    await p.insertMany([{ _id: 2, sku: "s", _deleted: false }]);
    await p.insertMany([{ _id: 3, sku: "s", _deleted: true }]);
    await assert.rejects(
      () => p.updateOne({ _id: 1 }, { $set: { _deleted: false } }),
      DuplicateKeyError,
    );
  }));

Deno.test("embedded: aggregation with $lookup, $group, $out and $merge", () =>
  withStore(async (store) => {
    const people = store.collection("people");
    const orders = store.collection("orders");
    await people.insertMany([{ _id: oid(1), name: "ann" }, { _id: oid(2), name: "bob" }]);
    await orders.insertMany([
      { _id: 1, owner: oid(1), total: 10 },
      { _id: 2, owner: oid(1), total: 5 },
      { _id: 3, owner: oid(2), total: 7 },
    ]);
    const joined = await people.aggregate([
      { $lookup: { from: "orders", localField: "_id", foreignField: "owner", as: "orders" } },
      { $project: { name: 1, count: { $size: "$orders" } } },
      { $sort: { name: 1 } },
    ]);
    assert.deepEqual(joined, [{ _id: oid(1), name: "ann", count: 2 }, {
      _id: oid(2),
      name: "bob",
      count: 1,
    }]);
    const grouped = await orders.aggregate([
      { $group: { _id: "$owner", sum: { $sum: "$total" }, avg: { $avg: "$total" } } },
      { $sort: { sum: -1 } },
    ]);
    assert.deepEqual(grouped, [{ _id: oid(1), sum: 15, avg: 7.5 }, {
      _id: oid(2),
      sum: 7,
      avg: 7,
    }]);
    await orders.aggregate([{ $match: { total: { $gt: 6 } } }, { $out: "big" }]);
    assert.deepEqual(
      (await store.collection("big").find({}, { sort: { _id: 1 } })).map((d) => d._id),
      [
        1,
        3,
      ],
    );
    await orders.aggregate([{ $project: { total: 1, merged: { $literal: true } } }, {
      $merge: "big",
    }]);
    assert.equal(await store.collection("big").count({ merged: true }), 3);
  }));

Deno.test("embedded: types and indexes survive close and reopen", () =>
  inTempDir(async (dir) => {
    const id = new ObjectId();
    const doc = {
      _id: id,
      when: new Date("2024-05-06T07:08:09.123Z"),
      price: Decimal128.fromString("12.50"),
      bytes: new Binary(new Uint8Array([1, 2, 3])),
      big: 2 ** 40,
      frac: 0.1,
      nested: { list: [1, "two", { three: oid(3) }] },
    };
    let store = await openEmbeddedStore(dir);
    await store.collection("t").insertMany([doc]);
    await store.collection("t").createIndex({ keys: { k: 1 }, unique: true });
    await store.collection("t").updateOne({ _id: id }, { $set: { k: "key" } });
    await store.close();
    store = await openEmbeddedStore(dir);
    const back = await store.collection("t").findOne({ _id: id });
    assert.ok(back);
    assert.ok(back._id instanceof ObjectId && back._id.equals(id));
    assert.ok(back.when instanceof Date);
    assert.equal((back.when as Date).toISOString(), "2024-05-06T07:08:09.123Z");
    assert.ok(back.price instanceof Decimal128);
    assert.equal(String(back.price), "12.50");
    assert.ok(back.bytes instanceof Binary);
    assert.deepEqual([...(back.bytes as Binary).buffer], [1, 2, 3]);
    assert.equal(back.big, 2 ** 40);
    assert.equal(back.frac, 0.1);
    assert.ok((back.nested as { list: [0, 1, { three: ObjectId }] }).list[2].three.equals(oid(3)));
    await assert.rejects(
      () => store.collection("t").insertMany([{ _id: 2, k: "key" }]),
      DuplicateKeyError,
    );
    await store.close();
  }));

Deno.test("embedded: files with byte ranges", () =>
  withStore(async (store) => {
    const bytes = new TextEncoder().encode("hello, embedded world");
    const stored = await store.files.put(bytes, {
      filename: "h.txt",
      contentType: "text/plain",
      metadata: { by: oid(1) },
    });
    assert.equal(stored.length, bytes.length);
    const stat = await store.files.stat(stored.id);
    assert.equal(stat?.filename, "h.txt");
    assert.equal(stat?.contentType, "text/plain");
    assert.equal(stat?.uploadDate.getTime(), stored.uploadDate.getTime());
    assert.ok((stat?.metadata?.by as ObjectId).equals(oid(1)));
    assert.deepEqual(await store.files.read(stored.id), bytes);
    assert.equal(
      new TextDecoder().decode((await store.files.read(stored.id, { start: 7, end: 14 }))!),
      "embedded",
    );
    assert.equal((await store.files.read(stored.id, { start: 0, end: 0 }))?.length, 1);
    await store.files.delete(stored.id);
    assert.equal(await store.files.stat(stored.id), null);
    assert.equal(await store.files.read(stored.id), null);
  }));

Deno.test("embedded: a second opener of the data directory is refused", () =>
  withStore(async (_store, dir) => {
    await assert.rejects(() => openEmbeddedStore(dir), /is in use by another process \(pid \d+\)/);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `import { openEmbeddedStore } from ${
          JSON.stringify(new URL("../../src/store/embedded/mod.ts", import.meta.url).href)
        };
         try { await openEmbeddedStore(${JSON.stringify(dir)}); console.log("opened"); }
         catch (e) { console.log(e.message); }`,
      ],
      stdout: "piped",
      stderr: "piped",
      env: { DENO_NO_UPDATE_CHECK: "1" },
    });
    const out = new TextDecoder().decode((await child.output()).stdout).trim();
    assert.equal(out, `data directory ${dir} is in use by another process (pid ${Deno.pid})`);
  }));

Deno.test("embedded: every acknowledged write survives kill -9", async () => {
  await killedWriter(200, 0);
});

Deno.test("embedded: every acknowledged write survives kill -9 once the WAL has started over", async () => {
  // 20 KB documents: 600 of them write some 12 MB to the WAL, which is checkpointed and
  // written again from its beginning every 4 MiB (over older frames the file still holds).
  const wal = await killedWriter(600, 20_000);
  assert.ok(
    wal < 8 * 1024 * 1024,
    `the WAL was checkpointed and written again from its start (${wal} bytes)`,
  );
});

/**
 * Runs tests/store/embedded_writer.ts (documents of `padding` characters), kills it with
 * SIGKILL once it has acknowledged `count` writes, and checks that each acknowledged write
 * is stored. Returns the size the WAL file had when the writer was killed.
 */
async function killedWriter(count: number, padding: number): Promise<number> {
  const dir = await Deno.makeTempDir({ prefix: "embedded_durable_" });
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("./embedded_writer.ts", import.meta.url).pathname,
        dir,
        String(padding),
      ],
      stdout: "piped",
      stderr: "null",
      env: { DENO_NO_UPDATE_CHECK: "1" },
    }).spawn();
    const acked: string[] = [];
    let buffer = "";
    const decoder = new TextDecoder();
    const reader = child.stdout.getReader();
    while (acked.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      acked.push(...lines);
    }
    child.kill("SIGKILL");
    const wal = (await Deno.stat(`${dir}/store.sqlite-wal`)).size;
    // Lines acknowledged after our last read are acknowledged too.
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
    }
    acked.push(...buffer.split("\n").filter((l) => l.length === 24));
    const status = await child.status;
    assert.equal(status.signal, "SIGKILL");
    assert.ok(acked.length >= count);
    const store = await openEmbeddedStore(dir);
    try {
      const c = store.collection("durable");
      for (const hex of acked) {
        assert.ok(await c.findOne({ _id: new ObjectId(hex) }), `acknowledged ${hex} was lost`);
      }
    } finally {
      await store.close();
    }
    return wal;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("embedded: the simple-filter fast path agrees with mingo", async () => {
  const { compileSimple } = await import("../../src/doc/match/fastmatch.ts");
  const { Query } = await import("mingo");
  const values: unknown[] = [
    1,
    2,
    5,
    "a",
    "b",
    true,
    false,
    new Date(5),
    new Date(9),
    oid(1),
    oid(2),
  ];
  const docs: Record<string, unknown>[] = [];
  for (let i = 0; i < 200; i++) {
    const v = values[i % values.length];
    const w = values[(i * 7) % values.length];
    docs.push({ _id: i, a: i % 3 === 0 ? [v, w] : v, ...(i % 5 === 0 ? {} : { b: w }) });
  }
  const ops = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"];
  const filters: Record<string, unknown>[] = [{ a: { $exists: false } }, { b: { $exists: true } }];
  for (const x of values) {
    filters.push({ a: x }, { b: x });
    for (const op of ops) filters.push({ a: { [op]: x } }, { b: { [op]: x }, a: { $ne: 2 } });
    filters.push({ a: { $in: [x, 5] } }, { b: { $nin: [x, "a"] } });
    filters.push(
      { $and: [{ a: x }, { b: { $ne: true } }] },
      { b: { $exists: true }, $and: [{ a: { $gte: x } }, { $and: [{ b: { $nin: [x] } }] }] },
    );
  }
  for (const refused of [{ $and: [] }, { $and: [{ a: 1 }, { "a.b": 1 }] }, { $and: {} }]) {
    assert.equal(compileSimple(refused), null, `left to mingo: ${JSON.stringify(refused)}`);
  }
  for (const filter of filters) {
    const fast = compileSimple(filter);
    assert.ok(fast, `fast path expected for ${JSON.stringify(filter)}`);
    const q = new Query(filter);
    const expected = docs.filter((d) => q.test(d)).map((d) => d._id);
    assert.deepEqual(docs.filter(fast).map((d) => d._id), expected, JSON.stringify(filter));
  }
});

Deno.test("embedded: geo queries on GeoJSON points", () =>
  withStore(async (store) => {
    const c = store.collection("places");
    const at = (lng: number, lat: number) => ({ type: "Point", coordinates: [lng, lat] });
    await c.insertMany([
      { _id: "paris", loc: at(2.3522, 48.8566) },
      { _id: "london", loc: at(-0.1276, 51.5072) },
      { _id: "berlin", loc: at(13.405, 52.52) },
      { _id: "versailles", loc: at(2.1301, 48.8049) },
      { _id: "nowhere" },
    ]);
    await c.createIndex({ keys: { loc: "2dsphere" }, name: "loc_2dsphere" });
    const ids = (docs: Record<string, unknown>[]) => docs.map((d) => d._id);
    const paris = { type: "Point", coordinates: [2.3522, 48.8566] };
    assert.deepEqual(
      ids(await c.find({ loc: { $near: { $geometry: paris, $maxDistance: 400_000 } } })),
      ["paris", "versailles", "london"],
    );
    assert.deepEqual(
      ids(await c.find({ loc: { $nearSphere: { $geometry: paris, $minDistance: 1000 } } })),
      ["versailles", "london", "berlin"],
    );
    assert.deepEqual(
      ids(await c.find({ loc: { $geoWithin: { $box: [[0, 45], [5, 50]] } } })),
      ["paris", "versailles"],
    );
    const square = [[[-1, 50], [14, 50], [14, 53], [-1, 53], [-1, 50]]];
    assert.deepEqual(
      ids(
        await c.find({
          loc: { $geoWithin: { $geometry: { type: "Polygon", coordinates: square } } },
        }),
      ),
      ["london", "berlin"],
    );
    assert.deepEqual(
      ids(await c.find({ loc: { $geoWithin: { $centerSphere: [[2.35, 48.85], 50 / 6378.1] } } })),
      ["paris", "versailles"],
    );
    assert.equal(
      await c.count({
        loc: { $geoIntersects: { $geometry: { type: "Polygon", coordinates: square } } },
      }),
      2,
    );
  }));

Deno.test("embedded: aggregation and projection never modify stored documents", () =>
  withStore(async (store) => {
    const c = store.collection("x");
    const original = { _id: 1, nested: { a: 1, b: 2 }, list: [{ v: 1 }], o: oid(9) };
    await c.insertMany([structuredClone({ ...original, o: null }), { _id: 2, nested: { a: 5 } }]);
    await c.updateOne({ _id: 1 }, { $set: { o: oid(9) } });
    await c.aggregate([{ $addFields: { "nested.x": 1 } }]);
    await c.aggregate([{ $match: { _id: 1 } }, { $unwind: "$list" }, { $set: { "list.w": 2 } }]);
    await c.aggregate([{ $project: { "nested.a": 0 } }]);
    await store.collection("y").aggregate([{ $documents: [{ k: 1 }] }, {
      $lookup: { from: "x", pipeline: [{ $set: { "nested.z": 1 } }], as: "xs" },
    }]).catch(() => []);
    await c.find({}, { projection: { "nested.a": 0 } });
    assert.deepEqual(await c.findOne({ _id: 1 }), original);
    const matched = await c.aggregate([{ $match: { "nested.a": 5 } }, { $project: { _id: 1 } }]);
    assert.deepEqual(matched, [{ _id: 2 }]);
  }));

Deno.test("embedded: createIndex with changed options replaces the index, also after reopen", () =>
  inTempDir(async (dir) => {
    let store = await openEmbeddedStore(dir);
    let c = store.collection("ix");
    await c.createIndex({ keys: { tag: 1 } });
    await c.insertMany([{ _id: 1, tag: "x" }, { _id: 2, tag: "y" }]);
    await c.createIndex({ keys: { tag: 1 }, unique: true });
    await assert.rejects(() => c.insertMany([{ _id: 3, tag: "x" }]), DuplicateKeyError);
    await c.createIndex({
      keys: { tag: 1 },
      unique: true,
      partialFilterExpression: { live: true },
    });
    await c.insertMany([{ _id: 3, tag: "x" }]);
    await store.close();
    store = await openEmbeddedStore(dir);
    c = store.collection("ix");
    await c.insertMany([{ _id: 4, tag: "y", live: true }]);
    await assert.rejects(() => c.insertMany([{ _id: 5, tag: "y", live: true }]), DuplicateKeyError);
    // A unique redefinition the data breaks fails and keeps the old index.
    await assert.rejects(
      () => c.createIndex({ keys: { tag: 1 }, unique: true }),
      DuplicateKeyError,
    );
    await c.insertMany([{ _id: 6, tag: "y" }]);
    await store.close();
  }));

Deno.test("embedded files: bytes are kept in chunks; files stored before chunking still read", async () => {
  const { DatabaseSync } = await import("node:sqlite");
  const dir = await Deno.makeTempDir({ prefix: "restsvc-files-" });
  try {
    const data = new Uint8Array(1_000_000).map((_, i) => (i * 7) & 0xff);
    let store = await openEmbeddedStore(dir);
    const stored = await store.files.put(data, { filename: "a.bin", contentType: "x/y" });
    await store.close();
    const db = new DatabaseSync(`${dir}/store.sqlite`);
    const key = stored.id.toHexString();
    const count = db.prepare("SELECT count(*) AS n FROM file_chunks WHERE file_id = ?").get(key);
    assert.equal((count as { n: number }).n, Math.ceil(1_000_000 / (255 * 1024)));
    // A file written by an earlier version: its bytes in files.data, no chunks.
    const legacy = new ObjectId();
    db.prepare(
      "INSERT INTO files (id, filename, content_type, length, upload_date, metadata, data) " +
        "VALUES (?, 'old.txt', 'text/plain', 5, 0, NULL, ?)",
    ).run(legacy.toHexString(), new TextEncoder().encode("hello"));
    db.close();
    store = await openEmbeddedStore(dir);
    try {
      assert.deepEqual(await store.files.read(stored.id), data);
      const across = await store.files.read(stored.id, { start: 261_000, end: 523_000 });
      assert.deepEqual(across, data.slice(261_000, 523_001));
      assert.equal(new TextDecoder().decode((await store.files.read(legacy))!), "hello");
      assert.equal(
        new TextDecoder().decode((await store.files.read(legacy, { start: 1, end: 3 }))!),
        "ell",
      );
      await store.files.delete(stored.id);
      assert.equal(await store.files.read(stored.id), null);
    } finally {
      await store.close();
    }
    const after = new DatabaseSync(`${dir}/store.sqlite`);
    const left = after.prepare("SELECT count(*) AS n FROM file_chunks WHERE file_id = ?").get(key);
    assert.equal((left as { n: number }).n, 0);
    after.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("embedded: chunks of an upload a crash interrupted are removed at the next open", async () => {
  const dir = await Deno.makeTempDir({ prefix: "eve_embedded_" });
  try {
    let store = await openEmbeddedStore(dir);
    const kept = await store.files.put(new Uint8Array(300_000).fill(1), {
      filename: "kept",
      contentType: "x/y",
    });
    await store.close();
    // What a process killed mid-upload leaves: chunk rows with no file row.
    const db = new DatabaseSync(`${dir}/store.sqlite`);
    db.prepare("INSERT INTO file_chunks (file_id, n, data) VALUES (?, ?, ?)")
      .run(new ObjectId().toHexString(), 0, new Uint8Array(10));
    const chunks = () =>
      (db.prepare("SELECT count(*) AS n FROM file_chunks").get() as { n: number }).n;
    assert.equal(chunks(), 3);
    db.close();
    store = await openEmbeddedStore(dir);
    assert.equal(await store.files.count(), 1);
    assert.equal((await store.files.read(kept.id))?.byteLength, 300_000);
    await store.close();
    const after = new DatabaseSync(`${dir}/store.sqlite`);
    assert.equal(
      (after.prepare("SELECT count(*) AS n FROM file_chunks").get() as { n: number }).n,
      2,
    );
    after.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("embedded: after reopen, lazily built indexes, id keys and shared dates answer as before", () =>
  inTempDir(async (dir) => {
    const hex = "6b04200131e3a22f2d23a7ff";
    const when = new Date("2024-05-06T07:08:09Z");
    // Values whose index keys must stay apart: a string spelling another type's key.
    const docs = [
      { _id: ObjectId.createFromHexString(hex), k: "o" + hex, n: 1, at: when, up: when },
      { _id: "o" + hex, k: ObjectId.createFromHexString(hex), n: "1", at: when, up: when },
      { _id: 7, k: "\u0001n1", n: true, at: when, up: new Date(0) },
      { _id: "\u0001s", k: 1, n: -0, at: when, up: when },
    ];
    let store = await openEmbeddedStore(dir);
    let c = store.collection("lazy");
    await c.createIndex({ keys: { k: 1 }, unique: true });
    await c.createIndex({ keys: { n: 1 } });
    await c.insertMany(docs.map((d) => ({ ...d })));
    const before = [
      await c.find({ n: 1 }),
      await c.find({ n: "1" }),
      await c.find({ n: 0 }),
      await c.find({ k: "o" + hex }),
      await c.find({ k: { $in: [1, "\u0001n1"] } }),
      await c.find({}, { sort: { n: -1 } }),
    ];
    await store.close();
    store = await openEmbeddedStore(dir);
    c = store.collection("lazy");
    // A plain read first (no index built), then the indexed ones.
    assert.equal((await c.find({}, { limit: 1 })).length, 1);
    assert.equal(
      String((await c.findOne({ _id: ObjectId.createFromHexString(hex) }))?.k),
      "o" + hex,
    );
    assert.equal((await c.findOne({ _id: "o" + hex }))?.n, "1");
    const after = [
      await c.find({ n: 1 }),
      await c.find({ n: "1" }),
      await c.find({ n: 0 }),
      await c.find({ k: "o" + hex }),
      await c.find({ k: { $in: [1, "\u0001n1"] } }),
      await c.find({}, { sort: { n: -1 } }),
    ];
    assert.deepEqual(after, before);
    await assert.rejects(() => c.insertMany([{ _id: 8, k: 1 }]), DuplicateKeyError);
    await c.insertMany([{ _id: 9, k: "1" }]);
    // Equal dates read back are separate objects: editing one leaves the other alone.
    const back = (await c.findOne({ _id: 7 }))!;
    (back.at as Date).setTime(0);
    const again = (await c.findOne({ _id: "\u0001s" }))!;
    assert.equal((again.at as Date).getTime(), when.getTime());
    assert.equal((again.up as Date).getTime(), when.getTime());
    await store.close();
  }));

Deno.test("embedded: natural order survives reopen over many load batches", () =>
  inTempDir(async (dir) => {
    // Ids in no sorted order, written in several groups, some replaced and some deleted.
    const ids = Array.from({ length: 4500 }, (_, i) => `k${(i * 7919) % 4500}`);
    let store = await openEmbeddedStore(dir);
    let c = store.collection("order");
    for (let i = 0; i < ids.length; i += 400) {
      await c.insertMany(ids.slice(i, i + 400).map((_id, n) => ({ _id, n: i + n })));
    }
    await c.replaceOne({ _id: ids[3] }, { n: -1 });
    await c.deleteOne({ _id: ids[700] });
    const before = (await c.find({})).map((d) => d._id);
    assert.equal(before.length, 4499);
    await store.close();
    store = await openEmbeddedStore(dir);
    c = store.collection("order");
    assert.deepEqual((await c.find({})).map((d) => d._id), before);
    await store.close();
  }));

Deno.test("embedded: documents loaded as text read, change and leave as decoded ones", () =>
  inTempDir(async (dir) => {
    // Three load batches; a string id holding U+0001 (the load's separator) in the second.
    const ids = Array.from({ length: 4500 }, (_, i) => i === 2500 ? `a\u0001${i}` : `d${i}`);
    let store = await openEmbeddedStore(dir);
    let c = store.collection("lazy");
    await c.insertMany(ids.map((_id, n) => ({ _id, n, at: new Date(1e12 + (n >> 4)) })));
    await c.createIndex({ keys: { n: 1 }, name: "n_1" });
    await store.close();
    store = await openEmbeddedStore(dir);
    c = store.collection("lazy");
    // One read by key, then a change and a deletion of documents never read.
    const one = await c.findOne({ _id: ids[1005] });
    assert.equal(one?.n, 1005);
    assert.ok(one?.at instanceof Date);
    assert.equal((await c.updateOne({ _id: ids[4100] }, { $set: { n: -1 } })).matched, 1);
    assert.equal(await c.deleteOne({ _id: ids[300] }), 1);
    assert.equal(await c.count({}), 4499);
    // Building the index decodes the rest a batch at a time, past the written ones.
    assert.deepEqual(
      (await c.find({ n: { $gte: 4098 } }, { sort: { n: 1 }, limit: 3 })).map((d) => d._id),
      [ids[4098], ids[4099], ids[4101]],
    );
    const all = await c.find({});
    assert.deepEqual(
      all.map((d) => d._id),
      ids.filter((_, i) => i !== 300),
    );
    assert.deepEqual(all.map((d) => d.n).slice(4098, 4101), [4099, -1, 4101]);
    assert.equal((await c.find({ n: { $gte: 4490 } }, { sort: { n: -1 } })).length, 10);
    assert.equal((await c.find({ n: 300 })).length, 0);
    assert.equal((await c.findOne({ _id: ids[2500] }))?.n, 2500);
    assert.deepEqual((await c.find({ _id: ids[4005] }))[0].at, new Date(1e12 + (4005 >> 4)));
    await store.close();
  }));

Deno.test("embedded: a reopened collection decodes its documents and builds its indexes in the background", () =>
  inTempDir(async (dir) => {
    let store = await openEmbeddedStore(dir);
    let c = store.collection("warm");
    await c.insertMany(Array.from({ length: 9000 }, (_, n) => ({ _id: `w${n}`, n })));
    await c.createIndex({ keys: { n: 1 }, name: "n_1", unique: true });
    await store.close();
    store = await openEmbeddedStore(dir);
    c = store.collection("warm");
    assert.equal((await c.findOne({ _id: "w7" }))?.n, 7);
    const state = (store as unknown as { state(name: string): CollectionState }).state("warm");
    // Loaded as keys: nothing but the one document read is decoded yet.
    assert.equal(state.warmed, false);
    assert.ok(state.docs.undecoded >= 8000, `undecoded: ${state.docs.undecoded}`);
    // No request asks for more; the collection warms by itself within the deadline.
    const deadline = Date.now() + 10_000;
    while (!state.warmed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(state.warmed, true);
    assert.equal(state.docs.undecoded, 0);
    // The index built in the background holds: a duplicate is refused.
    await assert.rejects(() => c.insertMany([{ _id: "dup", n: 5 }]), DuplicateKeyError);
    await store.close();
  }));

Deno.test("embedded: a stored unique index the documents break fails every use after reopen", () =>
  inTempDir(async (dir) => {
    let store = await openEmbeddedStore(dir);
    await store.collection("broken").insertMany([{ _id: 1, k: "x" }, { _id: 2, k: "x" }]);
    await store.close();
    // A damaged file: the index definition without the data honouring it.
    const db = new DatabaseSync(`${dir}/store.sqlite`);
    db.prepare("INSERT INTO indexes (coll, name, spec) VALUES (?, ?, ?)").run(
      "broken",
      "k_1",
      JSON.stringify({ keys: { k: 1 }, unique: true, name: "k_1" }),
    );
    db.close();
    store = await openEmbeddedStore(dir);
    const c = store.collection("broken");
    for (let i = 0; i < 2; i++) {
      await assert.rejects(() => c.insertMany([{ _id: 10 + i, k: "y" }]), DuplicateKeyError);
    }
    assert.equal(await c.count({}), 2);
    await store.close();
  }));

Deno.test("embedded: documents of every id kind are found, updated and deleted after reopen", () =>
  inTempDir(async (dir) => {
    const ids: unknown[] = [
      new ObjectId(),
      "plain",
      "",
      7,
      2.5,
      -0,
      Decimal128.fromString("1.10"),
      { a: 1, b: [2] },
      new Date("2024-01-02T03:04:05Z"),
      true,
      // A 64-bit integer comes back as one, within 32 bits and beyond.
      Long.fromNumber(5),
      Long.fromString("9007199254740993"),
    ];
    let store = await openEmbeddedStore(dir);
    await store.collection("ids").insertMany(ids.map((_id, n) => ({ _id, n })));
    await store.close();
    store = await openEmbeddedStore(dir);
    let c = store.collection("ids");
    for (const [n, _id] of ids.entries()) {
      assert.equal((await c.findOne({ _id }))?.n, n, `find ${String(_id)}`);
      const res = await c.updateOne({ _id }, { $set: { n: n + 100 } });
      assert.equal(res.matched, 1, `update ${String(_id)}`);
    }
    assert.equal(await c.deleteOne({ _id: ids[7] }), 1);
    await store.close();
    store = await openEmbeddedStore(dir);
    c = store.collection("ids");
    const back = await c.find({});
    assert.deepEqual(back.map((d) => d.n), [100, 101, 102, 103, 104, 105, 106, 108, 109, 110, 111]);
    assert.ok(back.at(-2)!._id instanceof Long);
    assert.ok(back.at(-1)!._id instanceof Long);
    assert.equal(String(back.at(-1)!._id), "9007199254740993");
    await store.close();
  }));

Deno.test("embedded: equality through a unique index's map answers as a scan, also after it is dropped", () =>
  withStore(async (store) => {
    const docs = [
      { _id: 1, k: "a" },
      { _id: 2, k: 1 },
      { _id: 3, k: ["b", 2] },
      { _id: 4, k: Decimal128.fromString("3") },
      { _id: 5 },
      { _id: 6, k: null },
      { _id: 7, k: new Date(0) },
      { _id: 8, k: -0 },
      { _id: 9, k: { x: 1 } },
    ];
    const indexed = store.collection("indexed");
    const plain = store.collection("plain");
    await indexed.createIndex({
      keys: { k: 1 },
      unique: true,
      name: "k_unique",
      partialFilterExpression: { k: { $exists: true } },
    });
    await indexed.createIndex({ keys: { k: -1 }, name: "k_desc" });
    await indexed.insertMany(docs.map((d) => ({ ...d })));
    await plain.insertMany(docs.map((d) => ({ ...d })));
    const filters = [
      { k: "a" },
      { k: 1.0 },
      { k: "b" },
      { k: 2 },
      { k: 3 },
      { k: new Date(0) },
      { k: 0 },
      { k: { $in: ["a", 3, 0, "zz"] } },
      { k: "missing" },
    ];
    const same = async (stage: string) => {
      for (const filter of filters) {
        const [a, b] = [await indexed.find(filter), await plain.find(filter)];
        assert.deepEqual(
          a.map((d) => d._id),
          b.map((d) => d._id),
          `${stage} ${JSON.stringify(filter)}`,
        );
      }
    };
    await same("unique index");
    await indexed.updateOne({ _id: 1 }, { $set: { k: "c" } });
    await plain.updateOne({ _id: 1 }, { $set: { k: "c" } });
    filters.push({ k: "c" });
    await same("after an update");
    // Redefined as a plain index (the unique one is dropped; `k_desc` still wants the field).
    await indexed.createIndex({ keys: { k: 1 }, name: "k_unique" });
    await indexed.insertMany([{ _id: 10, k: "a" }, { _id: 11, k: "a" }]);
    await plain.insertMany([{ _id: 10, k: "a" }, { _id: 11, k: "a" }]);
    await same("unique index replaced");
  }));

Deno.test("embedded: a shared read copies the top level only; a plain read, or a projection the engine runs, copies all", () =>
  withStore(async (store) => {
    const c = store.collection("shared");
    await c.insertMany([{ _id: 1, a: { b: 1 }, list: [1], n: 1 }]);
    const [first] = await c.find({}, { shared: true });
    const [second] = await c.find({}, { shared: true });
    first.n = 2; // the top level is the reader's own
    assert.equal((await c.findOne({ _id: 1 }))?.n, 1);
    assert.equal(first.a, second.a, "nested values are shared");
    const [deep] = await c.find({});
    assert.notEqual(deep.a, first.a);
    // A dotted projection runs in the query engine, which may edit what it is given.
    const [dotted] = await c.find({}, { shared: true, projection: { "a.b": 1 } });
    assert.notEqual(dotted.a, first.a, "the engine's projection copies before it edits");
    assert.deepEqual(dotted, { _id: 1, a: { b: 1 } });
    // Top-level fields are picked without editing anything: shared as a shared read is.
    const [picked] = await c.find({}, { shared: true, projection: { a: 1 } });
    assert.equal(picked.a, first.a, "a top-level projection shares like a shared read");
    assert.deepEqual(picked, { a: { b: 1 }, _id: 1 });
    const [own] = await c.find({}, { projection: { a: 1, list: 1 } });
    assert.notEqual(own.a, first.a, "a plain projected read copies all");
    assert.notEqual(own.list, first.list);
    assert.deepEqual((await c.findOne({ _id: 1 }))?.a, { b: 1 });
  }));

Deno.test("embedded: 64-bit integers read back as stored; a database of an earlier version keeps its reading", async () => {
  const dir = await Deno.makeTempDir({ prefix: "embedded_test_" });
  const values = {
    _id: 1,
    small: Long.fromNumber(-7),
    big: Long.fromString("-9223372036854775808"),
    plain: 2 ** 40,
    list: [Long.fromString("5000000000"), 5000000000],
  };
  try {
    let store = await openEmbeddedStore(dir);
    await store.collection("n").insertMany([values]);
    await store.close();
    const db = new DatabaseSync(`${dir}/store.sqlite`);
    assert.equal(db.prepare("PRAGMA user_version").get()?.user_version, 1);
    db.close();
    store = await openEmbeddedStore(dir);
    const back = (await store.collection("n").findOne({ _id: 1 }))!;
    await store.close();
    assert.ok(back.small instanceof Long && back.small.toNumber() === -7);
    assert.ok(back.big instanceof Long && String(back.big) === "-9223372036854775808");
    assert.equal(back.plain, 2 ** 40);
    const [long, plain] = back.list as unknown[];
    assert.ok(long instanceof Long && String(long) === "5000000000");
    assert.equal(plain, 5000000000);

    // As an earlier version left it: no format mark, fully canonical text, where a large
    // plain number and a Long were both written as $numberLong.
    const old = new DatabaseSync(`${dir}/store.sqlite`);
    old.exec("PRAGMA user_version = 0");
    old.prepare("UPDATE docs SET body = ? WHERE coll = 'n'").run(
      '{"_id":{"$numberInt":"1"},"small":{"$numberLong":"-7"},"plain":{"$numberLong":"1099511627776"}}',
    );
    old.close();
    store = await openEmbeddedStore(dir);
    const legacy = (await store.collection("n").findOne({ _id: 1 }))!;
    await store.close();
    assert.ok(legacy.small instanceof Long);
    assert.equal(legacy.plain, 2 ** 40);
    const after = new DatabaseSync(`${dir}/store.sqlite`);
    assert.equal(after.prepare("PRAGMA user_version").get()?.user_version, 0);
    after.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("embedded: a range with both bounds of one side counts by the tighter one", () =>
  withStore(async (store) => {
    const c = store.collection("ranges");
    await c.insertMany(Array.from({ length: 300 }, (_, n) => ({ _id: n, n })));
    await c.createIndex({ keys: { n: 1 }, unique: true });
    const cases: Array<[Record<string, number>, number]> = [
      [{ $lte: 100, $lt: 1 }, 1],
      [{ $lt: 1, $lte: 100 }, 1],
      [{ $gte: 5, $gt: 100 }, 199],
      [{ $gt: 12, $gte: 12, $lt: 20, $lte: 20 }, 7],
      [{ $gte: 12, $gt: 11 }, 288],
      [{ $lt: 20, $lte: 20 }, 20],
    ];
    for (const [range, expected] of cases) {
      assert.equal(await c.count({ n: range }), expected, JSON.stringify(range));
      assert.equal((await c.find({ n: range })).length, expected, JSON.stringify(range));
    }
  }));

Deno.test("embedded: before a reopened collection's indexes are built, equality on a string searches the stored texts", () =>
  inTempDir(async (dir) => {
    const docs: Array<Record<string, unknown>> = Array.from({ length: 6000 }, (_, n) => ({
      _id: n,
      email: `u${n}@x.org`,
      city: n % 4 === 0 ? "Lyon" : `c${n % 7}`,
      n,
    }));
    docs[10].email = ["alias@x.org", "u10@x.org"];
    // The text of another document's value, deeper: found by the search, refused by the filter.
    docs[11].other = { email: "u5@x.org" };
    docs[12].email = 'q"uote\\ \u2028 é 😀';
    let store = await openEmbeddedStore(dir);
    let c = store.collection("early");
    await c.insertMany(docs);
    await c.createIndex({ keys: { email: 1 }, name: "email_1", unique: true });
    await c.createIndex({ keys: { n: 1 }, name: "n_1" });
    let state!: CollectionState;
    const reopen = async () => {
      await store.close();
      store = await openEmbeddedStore(dir);
      c = store.collection("early");
      state = (store as unknown as { state(name: string): CollectionState }).state("early");
      // Nothing builds the indexes but the reads below.
      state.stopWarming();
    };
    const ids = async (filter: Record<string, unknown>) => (await c.find(filter)).map((d) => d._id);
    const cases: Array<[Record<string, unknown>, unknown[]]> = [
      [{ email: "u10@x.org" }, [10]],
      [{ email: "alias@x.org" }, [10]],
      [{ email: "u5@x.org" }, [5]],
      [{ email: 'q"uote\\ \u2028 é 😀' }, [12]],
      [{ $and: [{ email: "u77@x.org" }, { n: 77 }] }, [77]],
      [{ email: "u78@x.org", n: 1 }, []],
      [{ email: { $eq: "u5999@x.org" } }, [5999]],
      [{ email: "nobody" }, []],
    ];
    for (const [filter, expected] of cases) {
      await reopen();
      assert.deepEqual(await ids(filter), expected, JSON.stringify(filter));
      assert.equal(await c.count({ email: "u99@x.org" }), 1);
      // An `_id` read needs no index either.
      assert.equal((await c.findOne({ _id: 4321 }))?.n, 4321);
      assert.equal(state.indexesPending, true);
      assert.ok(state.docs.undecoded > 5900, `undecoded: ${state.docs.undecoded}`);
      // Past two searches, a read builds the indexes.
      assert.deepEqual(await ids({ email: "u3@x.org" }), [3]);
      assert.equal(state.indexesPending, false);
    }
    await reopen();
    // More matches than a search may hand over: the indexes are built and answer.
    assert.equal((await ids({ city: "Lyon" })).length, 1500);
    assert.equal(state.indexesPending, false);
    for (const [filter, expected] of cases) {
      assert.deepEqual(await ids(filter), expected, JSON.stringify(filter));
    }
    await assert.rejects(
      () => c.insertMany([{ _id: "dup", email: "u1@x.org" }]),
      DuplicateKeyError,
    );
    await store.close();
  }));

Deno.test("embedded: indexes rebuilt after reopen from the stored rows hold as the ones built from documents", () =>
  inTempDir(async (dir) => {
    for (const plain of [true, false]) await rebuilt(dir, plain);
  }));

/**
 * Indexes of every kind over a reopened collection: built from the rows, or, with an index
 * on a field SQLite's paths do not take as it is (`plain` false), from the documents.
 */
async function rebuilt(dir: string, plain: boolean) {
  const at = (n: number) => new Date(1e12 + n * 1000);
  let store = await openEmbeddedStore(dir);
  const name = plain ? "rebuilt" : "rebuilt_e";
  let c = store.collection(name);
  await c.insertMany(Array.from({ length: 7000 }, (_, n) => ({
    _id: oid(n + 1),
    ...(n % 3 === 0 ? {} : { code: `k${n}` }),
    a: n % 50,
    b: { c: Math.floor(n / 50) },
    at: at(n % 100),
    ref: oid(n % 10 + 1),
    "é": `v${n}`,
  })));
  await c.createIndex({
    keys: { code: 1 },
    name: "code_1",
    unique: true,
    partialFilterExpression: { code: { $exists: true } },
  });
  await c.createIndex({ keys: { a: 1, "b.c": 1 }, name: "a_b", unique: true });
  await c.createIndex({ keys: { at: 1 }, name: "at_1" });
  await c.createIndex({ keys: { ref: 1 }, name: "ref_1" });
  // A field SQLite's paths do not take as it is: built from the documents instead.
  if (!plain) await c.createIndex({ keys: { "é": 1 }, name: "e_1", unique: true });
  const reads = async () => [
    (await c.find({ at: at(7) })).length,
    (await c.find({ ref: oid(3) })).length,
    (await c.find({ at: { $gte: at(98) } }, { sort: { at: -1 }, limit: 3 })).map((d) => d.a),
    await c.count({ code: "k5" }),
    await c.count({ code: { $exists: false } }),
    (await c.find({ a: 7, "b.c": 3 })).map((d) => d._id),
  ];
  const before = await reads();
  await store.close();
  store = await openEmbeddedStore(dir);
  c = store.collection(name);
  const state = (store as unknown as { state(name: string): CollectionState }).state(name);
  state.stopWarming();
  // A write asks for the unique indexes: they are built for it.
  await assert.rejects(() => c.insertMany([{ _id: 1, code: "k5" }]), DuplicateKeyError);
  assert.equal(state.indexesPending, false);
  // Built from the rows, no document was decoded for it.
  assert.equal(state.docs.undecoded > 6900, plain, `undecoded: ${state.docs.undecoded}`);
  await assert.rejects(() => c.insertMany([{ _id: 2, a: 7, b: { c: 3 } }]), DuplicateKeyError);
  if (!plain) {
    await assert.rejects(() => c.insertMany([{ _id: 3, "é": "v9" }]), DuplicateKeyError);
  }
  // Documents without the partial index's field do not collide.
  await c.insertMany([{ _id: 4, a: 1000, "é": 4 }, { _id: 5, a: 1001, "é": 5 }]);
  await c.deleteMany({ _id: { $in: [4, 5] } });
  assert.deepEqual(await reads(), before);
  await store.close();
}

Deno.test("embedded: a write and one row alongside in each of two collections are one statement's rows, all or none", () =>
  inTempDir(async (dir) => {
    let store = await openEmbeddedStore(dir);
    const c = store.collection("written");
    const log = store.collection("written_log");
    const copies = store.collection("written_copies");
    // The collections exist: each write below is one three-row statement.
    await c.insertMany([{ _id: "a", v: 1 }]);
    await log.insertMany([{ _id: "first" }]);
    await copies.insertMany([{ _id: "first" }]);
    const along = (entry: string, copy: string) => [
      { collection: log.name, docs: [{ _id: entry }] },
      { collection: copies.name, docs: [{ _id: copy }] },
    ];
    await c.insertMany([{ _id: "b", v: 1 }], { alongside: along("post-b", "copy-b") });
    await c.replaceOne({ _id: "a" }, { _id: "a", v: 2 }, { alongside: along("edit-a", "copy-a") });
    // A copy whose id is taken fails the whole write: no row changes.
    await assert.rejects(
      c.replaceOne({ _id: "b" }, { v: 9 }, { alongside: along("edit-b", "first") }),
      DuplicateKeyError,
    );
    await assert.rejects(
      c.insertMany([{ _id: "c" }], { alongside: along("post-c", "copy-a") }),
      DuplicateKeyError,
    );
    const expected = {
      written: [{ _id: "a", v: 2 }, { _id: "b", v: 1 }],
      written_log: ["first", "post-b", "edit-a"],
      written_copies: ["first", "copy-b", "copy-a"],
    };
    const read = async () => ({
      written: await store.collection("written").find({}),
      written_log: (await store.collection("written_log").find({})).map((d) => d._id),
      written_copies: (await store.collection("written_copies").find({})).map((d) => d._id),
    });
    assert.deepEqual(await read(), expected);
    await store.close();
    store = await openEmbeddedStore(dir);
    assert.deepEqual(await read(), expected);
    await store.close();
  }));

Deno.test("embedded: an edit and its alongside entry are stored together, in place, after reopen", () =>
  inTempDir(async (dir) => {
    let store = await openEmbeddedStore(dir);
    let c = store.collection("edited");
    const log = store.collection("edited_log");
    await c.insertMany([{ _id: "a", v: 1 }, { _id: "b", v: 1 }, { _id: "c", v: 1 }]);
    await log.insertMany([{ _id: "first" }]);
    // The edit keeps its place in natural order; its entry is a new row.
    const replaced = await c.replaceOne({ _id: "a" }, { _id: "a", v: 2 }, {
      alongside: { collection: log.name, docs: [{ _id: "edit-a" }] },
    });
    assert.deepEqual(replaced, { matched: 1 });
    // An entry whose id is taken fails the whole write: neither row changes.
    await assert.rejects(
      c.replaceOne({ _id: "b" }, { v: 9 }, {
        alongside: { collection: log.name, docs: [{ _id: "first" }] },
      }),
      DuplicateKeyError,
    );
    const docs = [{ _id: "a", v: 2 }, { _id: "b", v: 1 }, { _id: "c", v: 1 }];
    assert.deepEqual(await c.find({}), docs);
    await store.close();
    store = await openEmbeddedStore(dir);
    c = store.collection("edited");
    assert.deepEqual(await c.find({}), docs);
    assert.deepEqual(
      (await store.collection("edited_log").find({})).map((d) => d._id),
      ["first", "edit-a"],
    );
    await store.close();
  }));

Deno.test("embedded: pages of an indexed equality, narrow or wide, come in natural order as a scan's", () =>
  withStore(async (store) => {
    const statuses = ["new", "paid", "shipped", "cancelled"];
    // Inserted in an order no `_id` sort gives, so natural order is the insertion order alone.
    const docs = Array.from({ length: 400 }, (_, n) => ({
      _id: (n * 7919) % 400,
      status: n % 40 === 0 ? "rare" : statuses[n % 4],
      total: n % 25,
    }));
    const indexed = store.collection("indexed");
    const plain = store.collection("plain");
    await indexed.createIndex({ keys: { status: 1, total: 1 }, name: "status_1_total_1" });
    await indexed.insertMany(docs.map((d) => ({ ...d })));
    await plain.insertMany(docs.map((d) => ({ ...d })));
    // Moved between values: its place in natural order stays where it was inserted.
    for (const c of [indexed, plain]) {
      await c.updateOne({ _id: docs[5]._id }, { $set: { status: "rare" } });
      await c.updateOne({ _id: docs[6]._id }, { $set: { status: "new" } });
    }
    const filters = [
      { status: "rare" }, // 11 of 400: from the index
      { status: "new" }, // about a quarter: scanned
      { status: { $in: ["new", "paid"] } }, // half
      { status: { $in: ["new", "rare"] }, total: { $lt: 10 } },
      { status: "none" },
    ];
    for (const filter of filters) {
      for (const [skip, limit] of [[0, 25], [3, 5], [100, 25], [0, 0]]) {
        const [a, b] = [
          await indexed.find(filter, { skip, limit }),
          await plain.find(filter, { skip, limit }),
        ];
        assert.deepEqual(
          a.map((d) => d._id),
          b.map((d) => d._id),
          `${JSON.stringify(filter)} skip ${skip} limit ${limit}`,
        );
      }
      assert.equal(await indexed.count(filter), await plain.count(filter), JSON.stringify(filter));
      // Sorted reads break ties in natural order.
      const sort = { total: -1 } as const;
      assert.deepEqual(
        (await indexed.find(filter, { sort, limit: 30 })).map((d) => d._id),
        (await plain.find(filter, { sort, limit: 30 })).map((d) => d._id),
        `${JSON.stringify(filter)} sorted`,
      );
    }
  }));

Deno.test("embedded: NaN sorts before every other number, as in MongoDB, whatever the insertion order", () =>
  withStore(async (store) => {
    const values = [3, NaN, -Infinity, null, 0, NaN, -1, "a", 2.5];
    const expected = [null, NaN, NaN, -Infinity, -1, 0, 2.5, 3, "a"];
    for (const [name, order] of [["forward", values], ["backward", [...values].reverse()]]) {
      const c = store.collection(`nan_${name}`);
      await c.insertMany((order as unknown[]).map((v, i) => ({ _id: i, v })));
      // A short page (kept in one pass) and a deep one (sorted whole).
      for (const limit of [5, 2000]) {
        const up = (await c.find({}, { sort: { v: 1 }, limit })).map((d) => d.v);
        assert.deepEqual(up, expected.slice(0, limit), `${name} ascending, limit ${limit}`);
        const down = (await c.find({}, { sort: { v: -1 }, limit })).map((d) => d.v);
        assert.deepEqual(down, [...expected].reverse().slice(0, limit), `${name} descending`);
      }
    }
  }));

Deno.test("embedded: $text needs a text index, stands at the top, first in a pipeline", () =>
  withStore(async (store) => {
    const c = store.collection("notes");
    await c.insertMany([{ _id: 1, title: "running shoes" }]);
    const refused = (pattern: RegExp) => (err: unknown) =>
      err instanceof InvalidQueryError && pattern.test(err.reason ?? "");
    await assert.rejects(c.find({ $text: { $search: "run" } }), refused(/text index required/));
    await assert.rejects(c.count({ $text: { $search: "run" } }), refused(/text index required/));
    await c.createIndex({ keys: { title: "text" }, name: "title_text" });
    assert.equal(await c.count({ $and: [{ $text: { $search: "run" } }, { _id: 1 }] }), 1);
    await assert.rejects(
      c.find({ $or: [{ $text: { $search: "run" } }, { _id: 2 }] }),
      refused(/at the top of a filter/),
    );
    await assert.rejects(
      c.find({ $text: { $search: "run" }, $and: [{ $text: { $search: "shoe" } }] }),
      refused(/Too many text expressions/),
    );
    // In an aggregation, in its first `$match` only.
    assert.deepEqual(await c.aggregate([{ $match: { $text: { $search: "run" } } }]), [
      { _id: 1, title: "running shoes" },
    ]);
    await assert.rejects(
      c.aggregate([{ $sort: { _id: 1 } }, { $match: { $text: { $search: "run" } } }]),
      refused(/only allowed as the first pipeline stage/),
    );
  }));
