/**
 * Prometheus metrics (README "Metrics"): off by default, counters move with requests, store
 * operations and rate-limit rejections, the token protects the path, and the exposition
 * parses.
 */
import assert from "node:assert/strict";
import { createService, SettingsError } from "../../src/mod.ts";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";
import { type Exposition, parseExposition, sampleValue } from "../support/prometheus.ts";

const DOMAIN = {
  people: {
    schema: { name: { type: "string" }, email: { type: "string", unique: true } },
  },
};
const SETTINGS = {
  METRICS: true,
  MONGO_QUERY_WHITELIST: ["$toInt"],
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET"],
  DOMAIN,
};
const TOKEN = "scrape-token-0123456789";

/** Scrapes `path` and parses the answer (which must be a 200 in the text format). */
async function scrape(api: Client, path = "metrics", token?: string): Promise<Exposition> {
  const res = await api.get(path, token ? { authorization: `Bearer ${token}` } : {});
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parseExposition(res.text);
}

const requests = (e: Exposition, labels: Record<string, string>) =>
  sampleValue(e, "restsvc_http_requests_total", labels);

scenario("metrics are off by default", { DOMAIN }, async (api, running) => {
  assert.equal(running.service.metrics, null);
  assert.equal((await api.get("metrics")).status, 404);
});

scenario("request counters and latency move, labelled by resource name", SETTINGS, async (
  api,
) => {
  const before = await scrape(api);
  const created = await api.create("people", { name: "Ann", email: "ann@example.org" });
  assert.equal((await api.get("people")).status, 200);
  assert.equal((await api.get(`people/${created._id}`)).status, 200);
  assert.equal((await api.get("people/000000000000000000000000")).status, 404);
  assert.equal((await api.get("no/such/path")).status, 404);
  const after = await scrape(api);
  const get200 = { resource: "people", endpoint: "collection", method: "GET", status: "200" };
  assert.equal(requests(after, get200) - requests(before, get200), 1);
  const post = { resource: "people", endpoint: "collection", method: "POST", status: "201" };
  assert.equal(requests(after, post), 1);
  const item = { resource: "people", endpoint: "item", method: "GET" };
  assert.equal(requests(after, { ...item, status: "200" }), 1);
  assert.equal(requests(after, { ...item, status: "404" }), 1);
  assert.equal(requests(after, { resource: "", endpoint: "none", status: "404" }), 1);
  // Latency: one observation per request, in the histogram of its labels.
  const count = "restsvc_http_request_duration_seconds_count";
  assert.equal(sampleValue(after, count, item), 2);
  assert.ok(sampleValue(after, "restsvc_http_request_duration_seconds_sum", item) > 0);
  // Labels never carry a URL or an id.
  for (const s of after.samples) {
    for (const value of Object.values(s.labels)) {
      assert.ok(!value.includes("/") && !value.includes(created._id), `${s.name} ${value}`);
    }
  }
  // The scrape itself is not counted.
  assert.equal(requests(after, { endpoint: "none", method: "GET", status: "200" }), 0);
  // Process memory (prom-client's default metrics).
  assert.ok(sampleValue(after, "process_resident_memory_bytes") > 0);
  assert.ok(sampleValue(after, "nodejs_heap_size_used_bytes") > 0);
});

scenario("store operations are timed", SETTINGS, async (api) => {
  const before = await scrape(api);
  await api.create("people", { name: "Ann", email: "ann@example.org" });
  await api.get("people");
  await api.get('people?where={"name":"Ann"}');
  const after = await scrape(api);
  const count = (e: Exposition, operation: string) =>
    sampleValue(e, "restsvc_store_operation_duration_seconds_count", {
      operation,
      collection: "people",
    });
  assert.equal(count(after, "insertMany") - count(before, "insertMany"), 1);
  assert.ok(count(after, "find") - count(before, "find") >= 2);
  const sum = "restsvc_store_operation_duration_seconds_sum";
  assert.ok(sampleValue(after, sum, { operation: "find", collection: "people" }) > 0);
  assert.equal(after.samples.filter((s) => s.name === "restsvc_store_errors_total").length, 0);
});

scenario("store errors are counted by kind", SETTINGS, async (api) => {
  await api.create("people", { name: "Ann" });
  // An expression the query layer lets through and the engine refuses: 400, a store error.
  const where = encodeURIComponent('{"$expr":{"$eq":[{"$toInt":"$name"},1]}}');
  assert.equal((await api.get(`people?where=${where}`)).status, 400);
  const after = await scrape(api);
  const errors = after.samples.filter((s) => s.name === "restsvc_store_errors_total");
  // The page and its total count ask the store together; both are refused.
  assert.ok(errors.some((s) => s.labels.operation === "find" && s.value === 1));
  for (const s of errors) {
    assert.deepEqual({ ...s.labels, operation: "" }, {
      operation: "",
      collection: "people",
      kind: "invalid_query",
    });
  }
}, { gaps: ["$expr-operators"] });

scenario(
  "the token protects the metrics; the path is exempt from authentication and rate limits",
  {
    ...SETTINGS,
    METRICS_PATH: "/internal/metrics",
    METRICS_TOKEN: TOKEN,
    AUTH_SCHEMES: ["token"],
    AUTH_USERS: [{ username: "ann", token: "ann-token-0123456789" }],
    RATE_LIMIT_GET: [2, 60],
  },
  async (api) => {
    assert.equal((await api.get("metrics")).status, 404, "the default path is the API's own");
    const none = await api.get("internal/metrics");
    assert.equal(none.status, 401);
    assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer/);
    assert.equal(none.body._error.code, 401);
    assert.doesNotMatch(none.text, /restsvc_/);
    for (const wrong of ["wrong", TOKEN.slice(0, -1), `${TOKEN}x`, "ann-token-0123456789"]) {
      const res = await api.get("internal/metrics", { authorization: `Bearer ${wrong}` });
      assert.equal(res.status, 401, wrong);
    }
    const basic = await api.get("internal/metrics", { authorization: `Basic ${btoa(TOKEN)}` });
    assert.equal(basic.status, 401);
    // More scrapes than the GET limit: never refused, never rate-limit headers.
    for (let i = 0; i < 4; i++) {
      const res = await api.get("internal/metrics", { authorization: `Bearer ${TOKEN}` });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-ratelimit-limit"), null);
    }
    const user = { authorization: "Bearer ann-token-0123456789" };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await api.get("people", user)).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    const after = await scrape(api, "internal/metrics", TOKEN);
    const rejected = { resource: "people", method: "GET" };
    assert.equal(sampleValue(after, "restsvc_rate_limit_rejections_total", rejected), 1);
    const refused = { resource: "people", endpoint: "collection", method: "GET", status: "429" };
    assert.equal(requests(after, refused), 1);
    assert.equal(requests(after, { endpoint: "none", method: "GET", status: "404" }), 1);
    // Scrapes, refused or not, are not counted.
    assert.equal(requests(after, { endpoint: "none", method: "GET", status: "401" }), 0);
  },
);

Deno.test("metrics settings are checked", async () => {
  const refused = async (settings: Record<string, unknown>, pattern: RegExp) => {
    const error = await createService({ DOMAIN: {}, ...settings }, { env: false }).then(
      () => null,
      (e) => e,
    );
    assert.ok(error instanceof SettingsError, String(error));
    assert.ok(error.problems.some((p: string) => pattern.test(p)), error.problems.join("; "));
  };
  await refused({ METRICS: true, METRICS_PATH: "metrics" }, /^METRICS_PATH: must be a path/);
  await refused({ METRICS: true, METRICS_PATH: "/health" }, /^METRICS_PATH: must differ/);
  await refused({ METRICS: true, METRICS_TOKEN: "short" }, /^METRICS_TOKEN: must be at least/);
  await refused({ METRICS: "yes" }, /^METRICS: /);
  await refused({ METRICS_TOKN: TOKEN }, /did you mean METRICS_TOKEN\?/);
});
