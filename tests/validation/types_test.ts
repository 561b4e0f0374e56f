import assert from "node:assert/strict";
import { Decimal128, ObjectId } from "../../src/doc/bson.ts";
import { compile, ctx, issuesOf } from "./helpers.ts";

const HEX = "5f1d2c3b4a5f1d2c3b4a5f1d";

/** [type, valid values, invalid values] */
const CASES: Array<[string, unknown[], unknown[]]> = [
  ["string", ["", "x"], [1, true, []]],
  ["integer", [0, -5, 10], [1.5, "1", true]],
  ["float", [1.5, 2], ["1.5", false]],
  ["number", [1, 2.5], ["1", {}]],
  ["boolean", [true, false], [0, "true"]],
  ["list", [[], [1, "a"]], [{}, "x"]],
  ["dict", [{}, { a: 1 }], [[], "x", 3]],
  ["uuid", ["123e4567-e89b-12d3-a456-426614174000"], ["123e4567", 5]],
  ["media", [{ filename: "a.txt", contentType: "text/plain", data: new Uint8Array([1]) }], [
    "file",
    { filename: "a.txt" },
  ]],
];

for (const [type, good, bad] of CASES) {
  Deno.test(`type ${type}: accepts valid and refuses invalid values`, async () => {
    const s = compile({ f: { type } });
    for (const v of good) assert.equal(await issuesOf(s, { f: v }), null, `${type} ${String(v)}`);
    for (const v of bad) {
      assert.deepEqual(await issuesOf(s, { f: v }), { f: `must be of ${type} type` }, String(v));
    }
  });
}

Deno.test("type datetime: DATE_FORMAT strings become Date, others refused", async () => {
  const s = compile({ at: { type: "datetime" } });
  const r = await s.validate({ at: "Tue, 02 Apr 2013 10:29:13 GMT" }, ctx());
  assert.equal(r.issues, null);
  assert.ok(r.doc.at instanceof Date);
  assert.equal((r.doc.at as Date).toISOString(), "2013-04-02T10:29:13.000Z");
  assert.deepEqual(await issuesOf(s, { at: "2013-04-02" }), { at: "must be of datetime type" });
  assert.deepEqual(await issuesOf(s, { at: 5 }), { at: "must be of datetime type" });
  const d = new Date();
  assert.equal(await issuesOf(s, { at: d }), null);
});

Deno.test("type datetime follows a custom DATE_FORMAT", async () => {
  const s = compile({ at: { type: "datetime" } }, { dateFormat: "%Y-%m-%dT%H:%M:%S" });
  const r = await s.validate({ at: "2020-01-31T23:59:58" }, ctx());
  assert.equal((r.doc.at as Date).toISOString(), "2020-01-31T23:59:58.000Z");
  assert.deepEqual(await issuesOf(s, { at: "2020-02-31T00:00:00" }), {
    at: "must be of datetime type",
  });
});

Deno.test("type date accepts DATE_FORMAT and YYYY-MM-DD", async () => {
  const s = compile({ d: { type: "date" } });
  const r = await s.validate({ d: "2021-06-01" }, ctx());
  assert.equal((r.doc.d as Date).toISOString(), "2021-06-01T00:00:00.000Z");
  assert.deepEqual(await issuesOf(s, { d: "June" }), { d: "must be of date type" });
});

Deno.test("type objectid: 24-hex strings become ObjectId", async () => {
  const s = compile({ o: { type: "objectid" } });
  const r = await s.validate({ o: HEX }, ctx());
  assert.ok(r.doc.o instanceof ObjectId);
  assert.equal((r.doc.o as ObjectId).toHexString(), HEX);
  assert.deepEqual(await issuesOf(s, { o: "xyz" }), { o: "must be of objectid type" });
  assert.deepEqual(await issuesOf(s, { o: HEX + "0" }), { o: "must be of objectid type" });
});

Deno.test("type decimal128: numeric strings and numbers become Decimal128", async () => {
  const s = compile({ p: { type: "decimal128" } });
  for (const v of ["12.50", 3.25, "-1e3"]) {
    const r = await s.validate({ p: v }, ctx());
    assert.equal(r.issues, null);
    assert.ok(r.doc.p instanceof Decimal128);
  }
  assert.equal(((await s.validate({ p: "12.50" }, ctx())).doc.p as Decimal128).toString(), "12.50");
  assert.deepEqual(await issuesOf(s, { p: "abc" }), { p: "must be of decimal128 type" });
  assert.deepEqual(await issuesOf(s, { p: true }), { p: "must be of decimal128 type" });
});

Deno.test("a list of types accepts any of them and keeps strings for string|objectid", async () => {
  const s = compile({ v: { type: ["string", "integer"] }, o: { type: ["objectid", "string"] } });
  assert.equal(await issuesOf(s, { v: "a" }), null);
  assert.equal(await issuesOf(s, { v: 3 }), null);
  assert.deepEqual(await issuesOf(s, { v: 1.5 }), { v: "must be of string or integer type" });
  const r = await s.validate({ o: HEX }, ctx());
  assert.equal(r.doc.o, HEX);
});

Deno.test("GeoJSON types: valid structures accepted", async () => {
  const s = compile({
    p: { type: "point" },
    mp: { type: "multipoint" },
    ls: { type: "linestring" },
    mls: { type: "multilinestring" },
    pg: { type: "polygon" },
    mpg: { type: "multipolygon" },
    gc: { type: "geometrycollection" },
    f: { type: "feature" },
    fc: { type: "featurecollection" },
  });
  const ring = [[0, 0], [1, 0], [1, 1], [0, 0]];
  const point = { type: "Point", coordinates: [100, 0] };
  const feature = { type: "Feature", geometry: point, properties: { name: "x" } };
  assert.equal(
    await issuesOf(s, {
      p: point,
      mp: { type: "MultiPoint", coordinates: [[1, 2], [3, 4]] },
      ls: { type: "LineString", coordinates: [[1, 2], [3, 4]] },
      mls: { type: "MultiLineString", coordinates: [[[1, 2], [3, 4]]] },
      pg: { type: "Polygon", coordinates: [ring] },
      mpg: { type: "MultiPolygon", coordinates: [[ring], [ring, ring]] },
      gc: {
        type: "GeometryCollection",
        geometries: [point, { type: "Polygon", coordinates: [ring] }],
      },
      f: feature,
      fc: { type: "FeatureCollection", features: [feature, { ...feature, geometry: null }] },
    }),
    null,
  );
});

Deno.test("GeoJSON types: invalid structures refused with a reason", async () => {
  const s = compile({
    p: { type: "point" },
    pg: { type: "polygon" },
    ls: { type: "linestring" },
    f: { type: "feature" },
    gc: { type: "geometrycollection" },
  });
  const bad = async (doc: Record<string, unknown>, field: string, needle: string) => {
    const issues = await issuesOf(s, doc);
    const msg = issues?.[field];
    assert.equal(typeof msg, "string", JSON.stringify(issues));
    assert.ok((msg as string).startsWith(`must be of`), msg as string);
    assert.ok((msg as string).includes(needle), `${msg} should mention ${needle}`);
  };
  await bad({ p: { type: "Point", coordinates: [1] } }, "p", "position");
  await bad({ p: { type: "Point", coordinates: ["1", 2] } }, "p", "numbers");
  await bad({ p: { type: "LineString", coordinates: [[1, 2], [3, 4]] } }, "p", "'Point'");
  await bad({ p: [1, 2] }, "p", "GeoJSON object");
  await bad({ p: { type: "Point", coordinates: [1, 2], extra: 1 } }, "p", "'extra'");
  await bad(
    { pg: { type: "Polygon", coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] } },
    "pg",
    "closed",
  );
  await bad(
    { pg: { type: "Polygon", coordinates: [[[0, 0], [1, 0], [0, 0]]] } },
    "pg",
    "4 positions",
  );
  await bad({ ls: { type: "LineString", coordinates: [[0, 0]] } }, "ls", "at least 2");
  await bad({ f: { type: "Feature", geometry: null } }, "f", "properties");
  await bad(
    {
      f: { type: "Feature", geometry: null, properties: {}, id: 3 },
    },
    "f",
    "'id'",
  );
  await bad(
    { gc: { type: "GeometryCollection", geometries: [{ type: "Feature" }] } },
    "gc",
    "geometry",
  );
});

Deno.test("ALLOW_CUSTOM_FIELDS_IN_GEOJSON accepts extra members", async () => {
  const s = compile({ p: { type: "point" }, f: { type: "feature" } }, {
    allowCustomFieldsInGeojson: true,
  });
  assert.equal(
    await issuesOf(s, {
      p: { type: "Point", coordinates: [1, 2], crs: "x" },
      f: { type: "Feature", geometry: null, properties: null, id: "a", bbox: [0, 0, 1, 1] },
    }),
    null,
  );
});
