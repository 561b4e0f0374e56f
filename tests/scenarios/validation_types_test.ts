/**
 * Schema field types through HTTP: each type with valid input (201, stored with its BSON
 * type, read back as sent) and invalid input (422 with the field's message).
 */
import assert from "node:assert/strict";
import { Decimal128, ObjectId } from "../../src/doc/bson.ts";
import { scenario, sharedService } from "../support/harness.ts";
import { assertInvalid } from "../support/assertions.ts";

const METHODS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
};

const GEO = [
  "point",
  "multipoint",
  "linestring",
  "multilinestring",
  "polygon",
  "multipolygon",
  "geometrycollection",
  "feature",
  "featurecollection",
];

const SETTINGS = {
  ...METHODS,
  DOMAIN: {
    things: {
      schema: {
        s: { type: "string" },
        i: { type: "integer" },
        f: { type: "float" },
        n: { type: "number" },
        b: { type: "boolean" },
        l: { type: "list" },
        d: { type: "dict" },
        at: { type: "datetime" },
        ref: { type: "objectid" },
        price: { type: "decimal128" },
        file: { type: "media" },
        either: { type: ["string", "integer"] },
      },
    },
    geo: { schema: Object.fromEntries(GEO.map((t) => [t, { type: t }])) },
    tokens: {
      item_url: 'regex("[0-9a-f-]{36}")',
      schema: { _id: { type: "uuid" }, name: { type: "string" } },
    },
  },
};

const HEX = "5f1d2c3b4a5f1d2c3b4a5f1d";
const DATE = "Tue, 02 Apr 2013 10:29:13 GMT";
const UUID = "123e4567-e89b-12d3-a456-426614174000";

/** Asserts the standard single-document validation error with exactly `issues`. */
// Scenarios that read back only what they stored share one service per store.
const shared = sharedService("field types", SETTINGS);

shared("plain types: valid values are stored and read back as sent", async (api) => {
  const doc = {
    s: "x",
    i: -3,
    f: 1.5,
    n: 7,
    b: false,
    l: [1, "a", { z: 1 }],
    d: { any: ["thing"] },
    either: 5,
  };
  const created = await api.create("things", doc);
  const item = await api.get(`things/${created._id}`);
  assert.equal(item.status, 200);
  for (const [k, v] of Object.entries(doc)) assert.deepEqual(item.body[k], v, k);
  const other = await api.create("things", { either: "five", f: 2 });
  assert.equal((await api.get(`things/${other._id}`)).body.either, "five");
});

scenario("plain types: a wrong type is 422 with one message per field", SETTINGS, async (api) => {
  const res = await api.post("things", {
    s: 1,
    i: 1.5,
    f: "1.5",
    n: "7",
    b: "true",
    l: { a: 1 },
    d: [1],
    either: true,
  });
  assertInvalid(res, {
    s: "must be of string type",
    i: "must be of integer type",
    f: "must be of float type",
    n: "must be of number type",
    b: "must be of boolean type",
    l: "must be of list type",
    d: "must be of dict type",
    either: "must be of string or integer type",
  });
  assert.equal((await api.get("things")).body._meta.total, 0);
});

scenario("datetime: DATE_FORMAT strings are stored as dates", SETTINGS, async (api, running) => {
  const created = await api.create("things", { at: DATE });
  const stored = await running.service.store.collection("things").findOne({});
  assert.ok(stored!.at instanceof Date);
  assert.equal((stored!.at as Date).toISOString(), "2013-04-02T10:29:13.000Z");
  assert.equal((await api.get(`things/${created._id}`)).body.at, DATE);
  const found = await api.get(`things?where=${encodeURIComponent(JSON.stringify({ at: DATE }))}`);
  assert.equal(found.body._items.length, 1);
  assertInvalid(await api.post("things", { at: "2013-04-02" }), {
    at: "must be of datetime type",
  });
  assertInvalid(await api.post("things", { at: 1364898553 }), { at: "must be of datetime type" });
});

scenario(
  "datetime follows a custom DATE_FORMAT",
  { ...SETTINGS, DATE_FORMAT: "%Y-%m-%dT%H:%M:%S" },
  async (api) => {
    const created = await api.create("things", { at: "2020-01-31T23:59:58" });
    assert.equal((await api.get(`things/${created._id}`)).body.at, "2020-01-31T23:59:58");
    assert.equal(created._created.length, 19);
    assertInvalid(await api.post("things", { at: DATE }), { at: "must be of datetime type" });
  },
);

scenario("objectid: 24 hex characters are stored as ObjectId", SETTINGS, async (api, running) => {
  const created = await api.create("things", { ref: HEX });
  const stored = await running.service.store.collection("things").findOne({});
  assert.ok(stored!.ref instanceof ObjectId);
  assert.equal((stored!.ref as ObjectId).toHexString(), HEX);
  assert.equal((await api.get(`things/${created._id}`)).body.ref, HEX);
  assertInvalid(await api.post("things", { ref: "5f1d2c3b4a5f1d2c3b4a5f1" }), {
    ref: "must be of objectid type",
  });
  assertInvalid(await api.post("things", { ref: "zz1d2c3b4a5f1d2c3b4a5f1d" }), {
    ref: "must be of objectid type",
  });
  assertInvalid(await api.post("things", { ref: 12 }), { ref: "must be of objectid type" });
});

scenario("decimal128: numeric strings and numbers are stored as Decimal128", SETTINGS, async (
  api,
  running,
) => {
  const created = await api.create("things", { price: "1.10" });
  await api.create("things", { price: 3 });
  const stored = await running.service.store.collection("things").find({}, {
    sort: { _created: 1 },
  });
  assert.ok(stored.every((d) => d.price instanceof Decimal128));
  assert.deepEqual(stored.map((d) => String(d.price)).sort(), ["1.10", "3"]);
  assert.equal((await api.get(`things/${created._id}`)).body.price, "1.10");
  assertInvalid(await api.post("things", { price: "ten" }), {
    price: "must be of decimal128 type",
  });
  assertInvalid(await api.post("things", { price: [1] }), { price: "must be of decimal128 type" });
});

shared("media: a JSON value is not a file", async (api) => {
  assertInvalid(await api.post("things", { file: "aGVsbG8=" }), { file: "must be of media type" });
  assertInvalid(await api.post("things", { file: { filename: "a.txt" } }), {
    file: "must be of media type",
  });
});

shared("uuid: a custom id field generated or sent, invalid refused", async (api) => {
  const generated = await api.create("tokens", { name: "a" });
  assert.match(generated._id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  const sent = await api.create("tokens", { _id: UUID, name: "b" });
  assert.equal(sent._id, UUID);
  const item = await api.get(`tokens/${UUID}`);
  assert.equal(item.status, 200);
  assert.equal(item.body.name, "b");
  assertInvalid(await api.post("tokens", { _id: "not-a-uuid", name: "c" }), {
    _id: "must be of uuid type",
  });
});

const point = { type: "Point", coordinates: [100.5, 0.5] };
const line = [[100, 0], [101, 1]];
const ring = [[100, 0], [101, 0], [101, 1], [100, 1], [100, 0]];
const VALID_GEO: Record<string, unknown> = {
  point,
  multipoint: { type: "MultiPoint", coordinates: [[100, 0], [101, 1]] },
  linestring: { type: "LineString", coordinates: line },
  multilinestring: { type: "MultiLineString", coordinates: [line, [[102, 2], [103, 3]]] },
  polygon: { type: "Polygon", coordinates: [ring] },
  multipolygon: { type: "MultiPolygon", coordinates: [[ring], [ring]] },
  geometrycollection: {
    type: "GeometryCollection",
    geometries: [point, { type: "LineString", coordinates: line }],
  },
  feature: { type: "Feature", geometry: point, properties: { name: "x" } },
  featurecollection: {
    type: "FeatureCollection",
    features: [{ type: "Feature", geometry: point, properties: null }],
  },
};

shared("GeoJSON: every geometry type accepted and read back", async (api) => {
  const created = await api.create("geo", VALID_GEO);
  const item = await api.get(`geo/${created._id}`);
  for (const t of GEO) assert.deepEqual(item.body[t], VALID_GEO[t], t);
});

shared("GeoJSON: invalid geometries refused with the reason", async (api) => {
  const res = await api.post("geo", {
    point: { type: "Point", coordinates: [1] },
    multipoint: { type: "Point", coordinates: [1, 2] },
    linestring: { type: "LineString", coordinates: [[1, 2]] },
    multilinestring: { type: "MultiLineString", coordinates: [[1, 2]] },
    polygon: { type: "Polygon", coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] },
    multipolygon: { type: "MultiPolygon", coordinates: [[[[0, 0], [1, 0], [1, 1], [2, 2]]]] },
    geometrycollection: { type: "GeometryCollection", geometries: [{ type: "Point" }] },
    feature: { type: "Feature", geometry: point },
    featurecollection: { type: "FeatureCollection", features: [point] },
  });
  assertInvalid(res, {
    point: "must be of point type (a position must be an array of 2 or 3 numbers)",
    multipoint: "must be of multipoint type (GeoJSON type must be 'MultiPoint')",
    linestring: "must be of linestring type (at least 2 positions are needed)",
    multilinestring:
      "must be of multilinestring type (a position must be an array of 2 or 3 numbers)",
    polygon: "must be of polygon type (a linear ring must be closed)",
    multipolygon: "must be of multipolygon type (a linear ring must be closed)",
    geometrycollection: "must be of geometrycollection type (missing 'coordinates')",
    feature: "must be of feature type (a Feature needs 'geometry' and 'properties')",
    featurecollection: "must be of featurecollection type (GeoJSON type must be 'Feature')",
  });
});

const CUSTOM_FEATURE = {
  type: "Feature",
  geometry: { ...point, crs: "local" },
  properties: {},
  id: 7,
};

shared("GeoJSON: extra members refused by default", async (api) => {
  assertInvalid(await api.post("geo", { feature: CUSTOM_FEATURE }), {
    feature: "must be of feature type (unexpected member 'crs')",
  });
  assertInvalid(await api.post("geo", { point: { ...point, name: "x" } }), {
    point: "must be of point type (unexpected member 'name')",
  });
});

scenario(
  "GeoJSON: ALLOW_CUSTOM_FIELDS_IN_GEOJSON accepts extra members",
  { ...SETTINGS, ALLOW_CUSTOM_FIELDS_IN_GEOJSON: true },
  async (api) => {
    const created = await api.create("geo", { feature: CUSTOM_FEATURE });
    assert.deepEqual((await api.get(`geo/${created._id}`)).body.feature, CUSTOM_FEATURE);
  },
);
