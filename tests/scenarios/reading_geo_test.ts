/**
 * Reading by distance: a `where` with `$near`/`$nearSphere` answers the nearest documents first
 * with their total, in MongoDB's units, and needs the geo index MongoDB needs, on both stores.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";

const at = (lng: number, lat: number) => ({ type: "Point", coordinates: [lng, lat] });

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    places: {
      schema: { name: { type: "string" }, loc: { type: "point" }, spot: { type: "list" } },
      mongo_indexes: { loc_2dsphere: [["loc", "2dsphere"]], spot_2d: [["spot", "2d"]] },
    },
  },
};

async function seed(api: Client): Promise<void> {
  const res = await api.post("places", [
    { name: "london", loc: at(-0.1276, 51.5072), spot: [3, 4] },
    { name: "paris", loc: at(2.3522, 48.8566), spot: [0, 0] },
    { name: "berlin", loc: at(13.405, 52.52), spot: [0, 6] },
    { name: "versailles", loc: at(2.1301, 48.8049), spot: [1, 0] },
  ]);
  assert.equal(res.status, 201, res.text);
}

async function near(api: Client, where: unknown) {
  return await api.get(`places?where=${encodeURIComponent(JSON.stringify(where))}`);
}

scenario("a $near where answers the nearest first, with its total", SETTINGS, async (api) => {
  await seed(api);
  const paris = at(2.3522, 48.8566);
  const res = await near(api, { loc: { $near: { $geometry: paris, $maxDistance: 400_000 } } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body._items.map((p: { name: string }) => p.name), [
    "paris",
    "versailles",
    "london",
  ]);
  assert.equal(res.body._meta.total, 3);
  // A page of one: the second nearest, the same total.
  const second = await api.get(
    `places?max_results=1&page=2&where=${
      encodeURIComponent(JSON.stringify({ loc: { $nearSphere: { $geometry: paris } } }))
    }`,
  );
  assert.equal(second.status, 200, second.text);
  assert.deepEqual(second.body._items.map((p: { name: string }) => p.name), ["versailles"]);
  assert.equal(second.body._meta.total, 4);
  // A legacy pair with $near measures the plane's units (on a 2d index).
  const flat = await near(api, { spot: { $near: [0, 0], $maxDistance: 5.5 } });
  assert.equal(flat.status, 200, flat.text);
  assert.deepEqual(flat.body._items.map((p: { name: string }) => p.name), [
    "paris",
    "versailles",
    "london",
  ]);
  assert.equal(flat.body._meta.total, 3);
}, { gaps: ["geo"] });

scenario("a $near without the geo index it needs, or misplaced, is answered 400", {
  ...SETTINGS,
  DOMAIN: { places: { schema: SETTINGS.DOMAIN.places.schema } },
}, async (api) => {
  await seed(api);
  const paris = at(2.3522, 48.8566);
  const unindexed = await near(api, { loc: { $near: { $geometry: paris } } });
  assert.equal(unindexed.status, 400, unindexed.text);
  assert.match(unindexed.body._error.message, /unable to find index for \$geoNear query/);
  const inOr = await near(api, { $or: [{ loc: { $near: { $geometry: paris } } }, { name: "x" }] });
  assert.equal(inOr.status, 400, inOr.text);
  assert.match(inOr.body._error.message, /geoNear must be top-level expr/);
}, { gaps: ["geo"] });

scenario("an aggregation endpoint's $geoNear answers distances from the client's point", {
  ...SETTINGS,
  DOMAIN: {
    ...SETTINGS.DOMAIN,
    nearby: {
      datasource: {
        source: "places",
        aggregation: {
          pipeline: [
            {
              $geoNear: {
                near: { type: "Point", coordinates: ["$lng", "$lat"] },
                distanceField: "km",
                distanceMultiplier: 0.001,
                spherical: true,
                maxDistance: "$within",
                key: "loc",
              },
            },
            { $project: { _id: 0, name: 1, km: { $round: ["$km", 0] } } },
          ],
        },
      },
    },
  },
}, async (api) => {
  await seed(api);
  const aggregate = encodeURIComponent(
    JSON.stringify({ $lng: 2.3522, $lat: 48.8566, $within: 400_000 }),
  );
  const res = await api.get(`nearby?aggregate=${aggregate}`);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body._items, [
    { name: "paris", km: 0 },
    { name: "versailles", km: 17 },
    { name: "london", km: 344 },
  ]);
  assert.equal(res.body._meta.total, 3);
}, { gaps: ["geo"] });

scenario("a $geoIntersects where finds the stored polygons holding a point", {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { regions: { schema: { name: { type: "string" }, area: { type: "polygon" } } } },
}, async (api) => {
  const square = (x: number, y: number, size: number) => ({
    type: "Polygon",
    coordinates: [[[x, y], [x + size, y], [x + size, y + size], [x, y + size], [x, y]]],
  });
  const posted = await api.post("regions", [
    { name: "north", area: square(0, 10, 10) },
    { name: "south", area: square(0, 0, 10) },
  ]);
  assert.equal(posted.status, 201, posted.text);
  const holding = async (lng: number, lat: number) => {
    const where = {
      area: { $geoIntersects: { $geometry: { type: "Point", coordinates: [lng, lat] } } },
    };
    const res = await api.get(`regions?where=${encodeURIComponent(JSON.stringify(where))}`);
    assert.equal(res.status, 200, res.text);
    return res.body._items.map((r: { name: string }) => r.name).sort();
  };
  assert.deepEqual(await holding(5, 15), ["north"]);
  assert.deepEqual(await holding(5, 5), ["south"]);
  assert.deepEqual(await holding(25, 5), []);
}, { gaps: ["geo"] });

scenario("a large or malformed geometry in a where is answered at once, never a 500", {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { regions: { schema: { name: { type: "string" }, area: { type: "polygon" } } } },
}, async (api) => {
  const ring = (cx: number, cy: number, r: number, n: number) => {
    const points = Array.from({ length: n }, (_, i) => {
      const a = (2 * Math.PI * i) / n;
      return [+(cx + r * Math.cos(a)).toFixed(4), +(cy + r * Math.sin(a)).toFixed(4)];
    });
    return [...points, points[0]];
  };
  const regions = Array.from({ length: 40 }, (_, i) => ({
    name: `r${i}`,
    area: { type: "Polygon", coordinates: [ring(i * 3 - 60, 0, 1, 200)] },
  }));
  const posted = await api.post("regions", regions);
  assert.equal(posted.status, 201, posted.text);
  const query = (geometry: unknown) =>
    api.get(
      `regions?max_results=50&where=${
        encodeURIComponent(JSON.stringify({ area: { $geoIntersects: { $geometry: geometry } } }))
      }`,
    );
  // A circle of 400 vertices (a where holds at most 10,000 characters) around the first
  // regions only; a longer one is refused by the where's own bound.
  const started = performance.now();
  const big = await query({ type: "Polygon", coordinates: [ring(-60, 0, 4, 400)] });
  assert.equal(big.status, 200, big.text);
  assert.deepEqual(big.body._items.map((r: { name: string }) => r.name).sort(), ["r0", "r1"]);
  assert.ok(performance.now() - started < 10_000, "a large geometry took too long");
  const longer = await query({ type: "Polygon", coordinates: [ring(-60, 0, 4, 1500)] });
  assert.equal(longer.status, 400, longer.text);
  for (const geometry of [{ type: "Polygon", coordinates: "x" }, { type: "Hexagon" }, 7]) {
    const res = await query(geometry);
    assert.equal(res.status, 400, `${JSON.stringify(geometry)}: ${res.text}`);
  }
}, { gaps: ["geo"] });
