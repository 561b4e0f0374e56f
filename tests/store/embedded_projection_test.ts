/**
 * The embedded store's own top-level projections and primary-key reads answer exactly what
 * the query engine answers: field order included, on random documents and projections.
 */
import assert from "node:assert/strict";
import { Query } from "mingo/query";
import { compileTopLevel } from "../../src/store/embedded/project.ts";
import { withStore } from "../support/embedded.ts";
import { engineOptions } from "../../src/doc/match/engine.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import type { Doc, Projection } from "../../src/store/store.ts";

/** A small deterministic generator (the same cases every run). */
function random(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

const FIELDS = ["_id", "a", "b", "c", "_etag", "nested", "list", "missing"];

function doc(rand: () => number, n: number): Doc {
  const out: Doc = {};
  // Fields in varying order, `_id` not always first.
  const order = [...FIELDS.slice(0, 7)].sort(() => rand() - 0.5);
  if (!order.includes("_id")) order.unshift("_id");
  for (const f of order) {
    if (f !== "_id" && rand() < 0.2) continue;
    out[f] = f === "_id"
      ? n
      : f === "nested"
      ? { x: n, y: [1, { z: 2 }] }
      : f === "list"
      ? [n, "s", { k: 1 }]
      : rand() < 0.5
      ? `v${n}`
      : n * 1.5;
  }
  return out;
}

function projection(rand: () => number): Projection {
  const out: Projection = {};
  const flag = rand() < 0.5 ? 1 : 0;
  for (const f of FIELDS) {
    if (rand() < 0.4) out[f] = f === "_id" && rand() < 0.5 ? (rand() < 0.5 ? 0 : 1) : flag;
  }
  return out;
}

Deno.test("embedded projection: top-level projections match the engine's, order included", () => {
  const rand = random(7);
  let compared = 0;
  for (let i = 0; i < 2000; i++) {
    const d = doc(rand, i);
    const p = projection(rand);
    if (Object.keys(p).length === 0) continue;
    let expected: Doc | Error;
    try {
      expected = new Query({}, engineOptions()).find<Doc>([structuredClone(d)], p).all()[0];
    } catch (err) {
      expected = err as Error;
    }
    const compiled = compileTopLevel(p);
    if (!compiled) {
      // Only mixed inclusions and exclusions are left to the engine among these: it
      // refuses them (an included `_id` with excluded fields too).
      const flags = Object.values(p);
      assert.ok(flags.includes(0) && flags.includes(1), JSON.stringify(p));
      assert.ok(expected instanceof Error, `engine accepted ${JSON.stringify(p)}`);
      continue;
    }
    assert.ok(!(expected instanceof Error), `engine refused ${JSON.stringify(p)}`);
    for (const shared of [true, false]) {
      const got = compiled(d, { shared });
      assert.equal(JSON.stringify(got), JSON.stringify(expected), JSON.stringify({ d, p }));
      if (!shared && got.nested !== undefined) assert.notEqual(got.nested, d.nested);
    }
    compared++;
  }
  assert.ok(compared > 1000, `only ${compared} cases compared`);
});

Deno.test("embedded projection: dotted, positional and operator projections go to the engine", () => {
  for (const p of [{ "a.b": 1 }, { "list.$": 1 }, { a: { $slice: 1 } }, { a: 1, b: 0 }]) {
    assert.equal(compileTopLevel(p as unknown as Projection), null, JSON.stringify(p));
  }
});

Deno.test("embedded projection: _id in an $and or an $in reads by key and keeps the full filter", () =>
  withStore(async (store) => {
    const c = store.collection("things");
    const ids = [new ObjectId(), new ObjectId(), new ObjectId()];
    await c.insertMany(ids.map((_id, n) => ({ _id, n, gone: n === 1 })));
    const live = { gone: { $ne: true } };
    assert.equal((await c.findOne({ $and: [{ _id: ids[0] }, live] }))?.n, 0);
    assert.equal(await c.findOne({ $and: [{ _id: ids[1] }, live] }), null);
    assert.equal(await c.findOne({ $and: [{ _id: new ObjectId() }, live] }), null);
    const many = await c.find({ _id: { $in: [ids[2], ids[0], new ObjectId()] } });
    assert.deepEqual(many.map((d) => d.n), [0, 2], "natural order");
    assert.equal(await c.count({ $and: [{ _id: { $in: ids } }, live] }), 2);
    const sorted = await c.find({ _id: { $in: ids } }, { sort: { n: -1 } });
    assert.deepEqual(sorted.map((d) => d.n), [2, 1, 0]);
    // `_id` equality on a string never finds an ObjectId.
    assert.equal(await c.findOne({ $and: [{ _id: ids[0].toHexString() }, live] }), null);
  }));
