/**
 * The MongoDB store counts a filter holding `$near` or `$nearSphere` with a `$geoNear` stage:
 * `countDocuments` runs a `$match`, where the server refuses both. Checked on a recording
 * stand-in for the driver's collection, since the emulator has no geo queries; the server's
 * own answer to these pipelines is covered by the conformance cases on a real MongoDB
 * (`MONGO_URI`).
 */
import assert from "node:assert/strict";
import type { Collection as DriverCollection, Document } from "mongodb";
import { MongoCollection } from "../../src/store/mongo/collection.ts";
import { InvalidQueryError } from "../../src/store/store.ts";

/** A driver collection recording the pipelines it is asked to run; each counts `n`. */
function recording(n: number) {
  const pipelines: Document[][] = [];
  const fake = {
    collectionName: "places",
    aggregate(pipeline: Document[]) {
      pipelines.push(pipeline);
      return { toArray: () => Promise.resolve(n > 0 ? [{ n }] : []) };
    },
    countDocuments() {
      throw new Error("countDocuments refuses $near");
    },
  };
  return { pipelines, coll: new MongoCollection(fake as unknown as DriverCollection<Document>) };
}

const point = { type: "Point", coordinates: [2.35, 48.85] };

Deno.test("mongo count: a GeoJSON $near is a $geoNear in meters with the rest as its query", async () => {
  const { pipelines, coll } = recording(3);
  const filter = {
    $and: [
      { loc: { $near: { $geometry: point, $maxDistance: 400_000, $minDistance: 10 } } },
      { _deleted: { $ne: true } },
    ],
  };
  assert.equal(await coll.count(filter), 3);
  assert.deepEqual(pipelines[0], [
    {
      $geoNear: {
        key: "loc",
        distanceField: "_near_distance",
        query: { $and: [{}, { _deleted: { $ne: true } }] },
        near: point,
        spherical: true,
        maxDistance: 400_000,
        minDistance: 10,
      },
    },
    { $count: "n" },
  ]);
});

Deno.test("mongo count: legacy pairs keep their units (plane for $near, radians for $nearSphere)", async () => {
  const { pipelines, coll } = recording(2);
  assert.equal(await coll.count({ p: { $near: [1, 2], $maxDistance: 5 }, kind: "shop" }), 2);
  assert.equal(await coll.count({ p: { $nearSphere: [1, 2], $minDistance: 0.01 } }), 2);
  assert.equal(await coll.count({ p: { $near: [1, 2, 7] } }, { skip: 5, limit: 10 }), 2);
  const stages = pipelines.map((p) => p[0].$geoNear);
  assert.deepEqual(stages[0], {
    key: "p",
    distanceField: "_near_distance",
    query: { kind: "shop" },
    near: [1, 2],
    spherical: false,
    maxDistance: 5,
  });
  assert.deepEqual(stages[1], {
    key: "p",
    distanceField: "_near_distance",
    query: {},
    near: [1, 2],
    spherical: true,
    minDistance: 0.01,
  });
  assert.deepEqual(stages[2].near, [1, 2]);
  assert.equal(stages[2].maxDistance, 7);
  assert.deepEqual(pipelines[2].slice(1), [{ $skip: 5 }, { $limit: 10 }, { $count: "n" }]);
});

Deno.test("mongo count: a client's keys inside $near never reach the $geoNear stage", async () => {
  const { pipelines, coll } = recording(1);
  await coll.count({
    $and: [
      { loc: { $near: { $geometry: point, query: {}, key: "other", distanceMultiplier: 9 } } },
      { owner: "ann" },
    ],
  });
  assert.deepEqual(pipelines[0][0].$geoNear, {
    key: "loc",
    distanceField: "_near_distance",
    query: { $and: [{}, { owner: "ann" }] },
    near: point,
    spherical: true,
  });
});

Deno.test("mongo count: no match counts 0; a misplaced $near is refused before the server", async () => {
  const { pipelines, coll } = recording(0);
  assert.equal(await coll.count({ p: { $nearSphere: { $geometry: point } } }), 0);
  await assert.rejects(
    coll.count({ $or: [{ p: { $near: [0, 0] } }, { q: 1 }] }),
    (err: unknown) =>
      err instanceof InvalidQueryError && /geoNear must be top-level expr/.test(err.message),
  );
  assert.equal(pipelines.length, 1);
});
