/**
 * Hostile input (issue 8): client mistakes that used to be 500s or leak internal texts are
 * 4xx answers with our own messages; `integer` means a safe integer; GeoJSON coordinates are
 * finite and in range; a client aborting mid-body is logged once, at info.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q } from "../support/assertions.ts";
import { answersQuickly, isError, rawJson } from "../support/hostile.ts";
import { createLogger } from "../../src/log.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  IF_MATCH: false,
  DOMAIN: {
    people: {
      schema: {
        name: { type: "string" },
        role: { type: "list", schema: { type: "string" } },
        count: { type: "integer" },
      },
    },
    free: { allow_unknown: true, schema: {} },
    places: {
      schema: {
        at: { type: "point" },
        path: { type: "linestring" },
        area: { type: "polygon" },
        any: { type: ["point", "multipoint"] },
      },
    },
    by_role: {
      datasource: {
        source: "people",
        aggregation: { pipeline: [{ $match: { name: "$name" } }] },
      },
    },
  },
};

scenario(
  "a client object carrying _bsontype is refused, never taken for BSON",
  SETTINGS,
  async (api) => {
    for (const value of ['{"_bsontype":"ObjectId"}', '{"_bsontype":"Binary","buffer":1}']) {
      const res = await rawJson(api, "POST", "free", `{"m":${value}}`);
      isError(res, 422);
      assert.deepEqual(res.body._issues, { m: { _bsontype: "field name not allowed" } });
    }
    isError(await rawJson(api, "POST", "free", '{"_bsontype":"ObjectId"}'), 422);
    isError(await api.get(`free?where=${q('{"m":{"_bsontype":"ObjectId"}}')}`), 400);
    await answersQuickly(api, "free");
  },
);

scenario("deeply nested query parameters are 400", SETTINGS, async (api) => {
  const nested = '{"a":'.repeat(1000) + "1" + "}".repeat(1000);
  isError(await api.get(`by_role?aggregate=${q(`{"$name":${nested}}`)}`), 400);
  isError(await api.get(`people?where=${q(`{"name":${nested}}`)}`), 400);
  const list = "[".repeat(1000) + "]".repeat(1000);
  isError(await api.get(`people?where=${q(`{"name":{"$in":${list}}}`)}`), 400);
  // A malformed `embedded` is 400, as in Eve.
  isError(await api.get(`people?embedded=${q(`{"a":${nested}}`)}`), 400);
  isError(await api.get(`people?projection=${q(`{"a":${nested}}`)}`), 400);
  await answersQuickly(api, "people");
});

scenario(
  "positional and operator projections are 400 with our own message",
  SETTINGS,
  async (api) => {
    await api.create("people", { name: "a", role: ["x"] });
    for (const p of ['{"role.$":1}', '{"$role":1}', '{"role.$elemMatch":1}', '{"role.$slice":1}']) {
      isError(await api.get(`people?projection=${q(p)}`), 400, "invalid field name");
    }
    await answersQuickly(api, "people");
  },
);

scenario("integer fields take safe integers only", SETTINGS, async (api) => {
  for (const n of ["9007199254740993", "1e308", "-9007199254740993", "1.5"]) {
    const res = await rawJson(api, "POST", "people", `{"count":${n}}`);
    isError(res, 422);
    assert.ok(res.body._issues.count, res.text);
  }
  const ok = await rawJson(api, "POST", "people", '{"count":9007199254740991}');
  assert.equal(ok.status, 201, ok.text);
  assert.equal((await api.get(`people/${ok.body._id}`)).body.count, 9007199254740991);
  await answersQuickly(api, "people");
});

scenario("GeoJSON coordinates are finite and in range", SETTINGS, async (api) => {
  const point = (coordinates: unknown) => ({ type: "Point", coordinates });
  for (const at of [[1e308, 1e308], [181, 0], [-180.5, 0], [0, 90.1], [0, -91]]) {
    isError(await api.post("places", { at: point(at) }), 422);
  }
  isError(
    await rawJson(api, "POST", "places", '{"at":{"type":"Point","coordinates":[1e400,0]}}'),
    422,
  );
  isError(
    await api.post("places", { path: { type: "LineString", coordinates: [[0, 0], [200, 0]] } }),
    422,
  );
  const ring = [[0, 0], [0, 95], [1, 1], [0, 0]];
  isError(await api.post("places", { area: { type: "Polygon", coordinates: [ring] } }), 422);
  isError(
    await api.post("places", { any: { type: "MultiPoint", coordinates: [[0, 0], [0, 100]] } }),
    422,
  );
  const ok = await api.post("places", {
    at: point([-180, 90]),
    path: { type: "LineString", coordinates: [[0, 0], [179.5, -89.5]] },
    any: point([10, 45]),
  });
  assert.equal(ok.status, 201, ok.text);
  await answersQuickly(api, "places");
});

const records: Array<Record<string, unknown>> = [];

scenario("a client aborting mid-body is logged once, at info", SETTINGS, async (api, running) => {
  records.length = 0;
  const port = Number(new URL(running.url).port);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = "POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
    "Content-Length: 100000\r\n\r\n";
  await conn.write(new TextEncoder().encode(head + '{"name":"' + "a".repeat(5000)));
  await new Promise((r) => setTimeout(r, 50));
  conn.close();
  const deadline = Date.now() + 3000;
  while (
    Date.now() < deadline && !records.some((r) => r.message === "client aborted the request body")
  ) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const aborts = records.filter((r) => r.message === "client aborted the request body");
  assert.equal(aborts.length, 1, JSON.stringify(records));
  assert.equal(aborts[0].level, "info");
  assert.equal(records.filter((r) => r.level === "error").length, 0, JSON.stringify(records));
  await answersQuickly(api, "people");
}, { logger: createLogger((r) => records.push(r), "debug") });

/**
 * A refused query is 400 in our envelope. The embedded engine's text stays in the log (it
 * can quote internals); MongoDB's reason is the server's word for the client's mistake
 * and is quoted after our own words.
 */
const REFUSED = /^(The database could not run this query: check|The database refused this query: )/;

scenario("store errors never reach the client as internal text", SETTINGS, async (api) => {
  await api.create("people", { name: "a", role: ["x"] });
  // Each answer is our envelope; isError refuses stack frames.
  for (
    const where of [
      '{"role":{"$size":-1}}',
      '{"name":{"$type":"nope"}}',
      '{"name":{"$mod":[0,0]}}',
    ]
  ) {
    const res = await api.get(`people?where=${q(where)}`);
    if (res.status === 200) continue; // an engine may take it as matching nothing
    isError(res, 400);
    assert.doesNotMatch(res.body._error.message, /MongoDB:|mingo/);
  }
  await answersQuickly(api, "people");
});

scenario("an expression the engine refuses is 400 with our own message", {
  ...SETTINGS,
  MONGO_QUERY_WHITELIST: ["$toInt"],
}, async (api) => {
  await api.create("people", { name: "a" });
  const res = await api.get(`people?where=${q('{"$expr":{"$eq":[{"$toInt":"$name"},1]}}')}`);
  isError(res, 400);
  assert.match(res.body._error.message, REFUSED);
  assert.doesNotMatch(res.text, /MongoDB:|mingo/);
  await answersQuickly(api, "people");
}, { gaps: ["$expr-operators"] });
