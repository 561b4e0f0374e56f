/**
 * Generated queries on the embedded store (seeded; FUZZ_SEED, FUZZ_REQUESTS): a collection
 * with indexes (equality, unique, ranges, sorted views) answers every filter, sort, skip and
 * limit exactly as the same documents without indexes do, and the matching documents are
 * the ones the query engine alone (without the store's direct matcher) selects.
 */
import assert from "node:assert/strict";
import { openEmbeddedStore } from "../../src/store/embedded/mod.ts";
import { engineMatcher, engineOptions } from "../../src/doc/match/engine.ts";
import type { Collection, Doc, Filter, Sort } from "../../src/store/store.ts";
import { fuzzSeed, pick, random } from "../support/random.ts";

/** Values of mixed types, as documents written outside the API may hold. */
const VALUES: unknown[] = [
  0,
  1,
  2,
  2.5,
  -1,
  10,
  100,
  "",
  "a",
  "b",
  "10",
  "B",
  null,
  true,
  false,
  new Date(0),
  new Date(86_400_000),
  [],
  [1],
  [1, 2],
  ["a", "b"],
  [[1]],
  { x: 1 },
  { x: 2 },
];

function documents(rnd: () => number, count: number): Doc[] {
  return Array.from({ length: count }, (_, n) => {
    const doc: Doc = { _id: n, n };
    for (const field of ["a", "b", "c"]) if (rnd() < 0.85) doc[field] = pick(rnd, VALUES);
    if (rnd() < 0.5) doc.d = { e: pick(rnd, VALUES), f: pick(rnd, VALUES) };
    if (rnd() < 0.5) {
      doc.tags = Array.from({ length: Math.floor(rnd() * 3) }, () => pick(rnd, ["x", "y", "z", 1]));
    }
    return doc;
  });
}

const FIELDS = ["a", "b", "c", "d.e", "d.f", "tags", "n", "_id", "d", "missing"];
const OPS = [
  "$eq",
  "$ne",
  "$gt",
  "$gte",
  "$lt",
  "$lte",
  "$in",
  "$nin",
  "$exists",
  "$size",
  "$all",
  "$not",
];

function condition(rnd: () => number, depth: number): unknown {
  if (rnd() < 0.35) return pick(rnd, VALUES);
  const op = pick(rnd, OPS);
  switch (op) {
    case "$in":
    case "$nin":
    case "$all":
      return { [op]: [pick(rnd, VALUES), pick(rnd, VALUES)] };
    case "$exists":
      return { $exists: rnd() < 0.5 };
    case "$size":
      return { $size: Math.floor(rnd() * 3) };
    case "$not":
      return depth > 0 ? { $not: { $gt: pick(rnd, VALUES) } } : { $ne: pick(rnd, VALUES) };
    default: {
      const range: Doc = { [op]: pick(rnd, VALUES) };
      // Two bounds on one field, as a range query has.
      if (rnd() < 0.3) range[pick(rnd, ["$lt", "$lte"])] = pick(rnd, VALUES);
      return range;
    }
  }
}

function filter(rnd: () => number, depth = 2): Filter {
  const out: Filter = {};
  const r = rnd();
  if (depth > 0 && r < 0.15) {
    return {
      [pick(rnd, ["$and", "$or", "$nor"])]: [filter(rnd, depth - 1), filter(rnd, depth - 1)],
    };
  }
  const fields = 1 + Math.floor(rnd() * 2);
  for (let i = 0; i < fields; i++) out[pick(rnd, FIELDS)] = condition(rnd, depth);
  return out;
}

function sortSpec(rnd: () => number): Sort | undefined {
  if (rnd() < 0.4) return undefined;
  const sort: Sort = {};
  sort[pick(rnd, ["a", "b", "c", "d.e"])] = rnd() < 0.5 ? 1 : -1;
  sort.n = 1; // a total order: ties broken the same way on both collections
  return sort;
}

/** One random write, made the same on every collection: insert, update or delete. */
async function sameWrite(rnd: () => number, collections: Collection[], n: number) {
  const r = rnd();
  const field = pick(rnd, ["a", "b", "c", "d.e", "tags"]);
  const value = pick(rnd, VALUES);
  const target = { n: Math.floor(rnd() * n) };
  const some = filter(rnd, 0);
  for (const c of collections) {
    if (r < 0.3) await c.insertMany([{ _id: n, n, a: value, b: pick(random(n), VALUES) }]);
    else if (r < 0.6) await c.updateOne(target, { $set: { [field]: value } });
    else if (r < 0.75) await c.updateMany(some, { $unset: { [field]: "" } }).catch(() => 0);
    else if (r < 0.9) await c.deleteOne(target);
    else await c.replaceOne(target, { n: target.n, a: value });
  }
}

Deno.test("embedded store: indexes change no answer to generated queries", async () => {
  const dir = await Deno.makeTempDir({ prefix: "embedded_fuzz_" });
  const store = await openEmbeddedStore(dir);
  try {
    const seed = fuzzSeed();
    const rnd = random(seed);
    const docs = documents(rnd, 300);
    const plain = store.collection("plain");
    const indexed = store.collection("indexed");
    await plain.insertMany(structuredClone(docs));
    await indexed.insertMany(structuredClone(docs));
    const specs: Array<Record<string, 1 | -1>> = [
      { a: 1 },
      { b: -1 },
      { "d.e": 1 },
      { tags: 1 },
      { c: 1, a: 1 },
    ];
    for (const keys of specs) await indexed.createIndex({ keys });
    await indexed.createIndex({ keys: { n: 1 }, unique: true });
    const options = engineOptions();
    const rounds = Number(Deno.env.get("FUZZ_REQUESTS") ?? 600);
    let reference = docs;
    let next = docs.length;
    for (let i = 0; i < rounds; i++) {
      // Writes between queries keep the indexes (maps, sorted views) moving.
      if (i % 10 === 9) {
        await sameWrite(rnd, [plain, indexed], next++);
        reference = await plain.find({});
      }
      const f = filter(rnd);
      const sort = sortSpec(rnd);
      const skip = rnd() < 0.3 ? Math.floor(rnd() * 20) : undefined;
      const limit = rnd() < 0.5 ? 1 + Math.floor(rnd() * 30) : undefined;
      const where = `query ${i} (seed ${seed}): ${JSON.stringify({ f, sort, skip, limit })}`;
      let expected: number[];
      try {
        const test = engineMatcher(f, options);
        expected = reference.filter((d) => test(d)).map((d) => d.n as number);
      } catch {
        // The engine refuses the filter: both collections must refuse it too.
        await assert.rejects(plain.find(f), where);
        await assert.rejects(indexed.find(f), where);
        continue;
      }
      const ns = (list: Doc[]) => list.map((d) => d.n as number);
      const all = ns(await plain.find(f));
      assert.deepEqual([...all].sort((x, y) => x - y), [...expected].sort((x, y) => x - y), where);
      assert.deepEqual(ns(await indexed.find(f, { sort })).length, expected.length, where);
      assert.deepEqual(
        ns(await indexed.find(f, { sort, skip, limit })),
        ns(await plain.find(f, { sort, skip, limit })),
        where,
      );
      assert.equal(await indexed.count(f), expected.length, where);
      assert.equal(
        await plain.count(f, { skip, limit }),
        await indexed.count(f, { skip, limit }),
        where,
      );
    }
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
