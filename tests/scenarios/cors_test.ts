/** Cross-origin access: X_DOMAINS, X_DOMAINS_RE, X_HEADERS, X_EXPOSE_HEADERS, credentials. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Answer, Client } from "../support/client.ts";
import { createService, SettingsError } from "../../src/mod.ts";

const APP = "https://app.example.com";
const EVIL = "https://evil.example.org";

const DOMAIN = {
  people: {
    resource_methods: ["GET", "POST"],
    item_methods: ["GET", "PATCH", "DELETE"],
    additional_lookup: { url: 'regex("[a-z]+")', field: "name" },
    schema: { name: { type: "string", required: true } },
  },
  invoices: {
    url: 'people/<regex("[a-f0-9]{24}"):owner>/invoices',
    resource_methods: ["GET", "POST", "DELETE"],
    item_methods: ["GET"],
    schema: { owner: { type: "objectid" }, number: { type: "integer" } },
  },
};

const CORS = {
  DOMAIN,
  SCHEMA_ENDPOINT: "schema",
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
  X_DOMAINS: [APP, "http://localhost:3000"],
  X_HEADERS: ["Content-Type", "If-Match"],
  X_EXPOSE_HEADERS: ["ETag"],
  IF_MATCH: false,
};

const CORS_HEADERS = [
  "access-control-allow-origin",
  "access-control-allow-credentials",
  "access-control-allow-methods",
  "access-control-allow-headers",
  "access-control-expose-headers",
  "access-control-max-age",
];

function assertNoCors(res: Answer) {
  for (const name of CORS_HEADERS) {
    assert.equal(res.headers.get(name), null, `${name} must be absent`);
  }
}

/** A refused origin: an empty Access-Control-Allow-Origin (no browser accepts it). */
function assertRefused(res: Answer) {
  assert.equal(res.headers.get("access-control-allow-origin"), "");
  assert.equal(res.headers.get("access-control-allow-credentials"), null);
}

function assertAllowed(res: Answer, origin: string) {
  assert.equal(res.headers.get("access-control-allow-origin"), origin);
  assert.ok(/(^|,\s*)Origin(\s*,|$)/i.test(res.headers.get("vary") ?? ""), "Vary: Origin");
}

const methodSet = (value: string | null) =>
  new Set((value ?? "").split(",").map((m) => m.trim()).filter(Boolean));

function preflight(api: Client, path: string, origin: string, method = "GET") {
  return api.request("OPTIONS", path, {
    headers: { origin, "access-control-request-method": method },
  });
}

scenario("CORS: off by default, no header for any origin", { DOMAIN }, async (api) => {
  const res = await api.get("people", { origin: APP });
  assert.equal(res.status, 200);
  assertNoCors(res);
  const pre = await preflight(api, "people", APP);
  assert.equal(pre.status, 200);
  assertNoCors(pre);
});

scenario("CORS: an X_DOMAINS origin is echoed with Vary: Origin", CORS, async (api) => {
  const res = await api.get("people", { origin: APP });
  assert.equal(res.status, 200);
  assertAllowed(res, APP);
  assert.equal(res.headers.get("access-control-expose-headers"), "ETag");
  assert.equal(res.headers.get("access-control-allow-credentials"), null);
  // As in Eve, Access-Control-Max-Age goes with every answer to an origin.
  assert.equal(res.headers.get("access-control-max-age"), "21600");
  const local = await api.get("", { origin: "http://localhost:3000" });
  assertAllowed(local, "http://localhost:3000");
});

scenario("CORS: a disallowed origin gets an empty Allow-Origin, as in Eve", CORS, async (api) => {
  for (const origin of [EVIL, `${APP}.evil.org`, "null", APP.toUpperCase()]) {
    const res = await api.get("people", { origin });
    assert.equal(res.status, 200);
    assertRefused(res);
    // As in Eve, the other Access-Control-* headers still go with the answer (they grant
    // nothing without an Allow-Origin that matches).
    assert.deepEqual(
      methodSet(res.headers.get("access-control-allow-methods")),
      new Set(["GET", "HEAD", "POST", "OPTIONS"]),
    );
    assert.equal(res.headers.get("access-control-allow-headers"), "Content-Type, If-Match");
    assert.equal(res.headers.get("access-control-expose-headers"), "ETag");
    assert.equal(res.headers.get("access-control-max-age"), "21600");
    const pre = await preflight(api, "people", origin, "POST");
    assert.equal(pre.status, 200);
    assertRefused(pre);
  }
  // Without Origin: no CORS header, but caches still learn that answers vary by Origin.
  const plain = await api.get("people");
  assertNoCors(plain);
  assert.match(plain.headers.get("vary") ?? "", /Origin/);
});

scenario("CORS: preflight answers the endpoint's methods on every endpoint kind", CORS, async (
  api,
) => {
  const ann = await api.create("people", { name: "ann" });
  const invoice = await api.create(`people/${ann._id}/invoices`, { number: 1 });
  const cases: [string, string[]][] = [
    ["", ["GET", "HEAD", "OPTIONS"]],
    ["people", ["GET", "HEAD", "POST", "OPTIONS"]],
    [`people/${ann._id}`, ["GET", "HEAD", "PATCH", "DELETE", "OPTIONS"]],
    ["people/ann", ["GET", "HEAD", "OPTIONS"]],
    [`people/${ann._id}/invoices`, ["GET", "HEAD", "POST", "DELETE", "OPTIONS"]],
    [`people/${ann._id}/invoices/${invoice._id}`, ["GET", "HEAD", "OPTIONS"]],
    ["schema", ["GET", "HEAD", "OPTIONS"]],
    ["schema/people", ["GET", "HEAD", "OPTIONS"]],
    ["oplog", ["GET", "HEAD", "OPTIONS"]],
  ];
  for (const [path, methods] of cases) {
    const res = await preflight(api, path, APP, "GET");
    assert.equal(res.status, 200, `OPTIONS /${path}: ${res.text}`);
    assertAllowed(res, APP);
    assert.deepEqual(methodSet(res.headers.get("access-control-allow-methods")), new Set(methods));
    assert.deepEqual(methodSet(res.headers.get("allow")), new Set(methods));
    assert.equal(res.headers.get("access-control-allow-headers"), "Content-Type, If-Match");
    assert.equal(res.headers.get("access-control-max-age"), "21600");
    assert.equal(res.text, "");
  }
});

scenario("CORS: errors carry the CORS headers", CORS, async (api) => {
  const origin = { origin: APP };
  const notFound = await api.get("nowhere", origin);
  assert.equal(notFound.status, 404);
  assertAllowed(notFound, APP);
  // No endpoint there: no method is allowed.
  assert.equal(notFound.headers.get("access-control-allow-methods"), "");
  const notAllowed = await api.request("PUT", "people", { headers: origin, body: {} });
  assert.equal(notAllowed.status, 405);
  assertAllowed(notAllowed, APP);
  assert.deepEqual(
    methodSet(notAllowed.headers.get("access-control-allow-methods")),
    new Set(["GET", "HEAD", "POST", "OPTIONS"]),
  );
  const invalid = await api.post("people", { name: 5 }, origin);
  assert.equal(invalid.status, 422);
  assertAllowed(invalid, APP);
  assert.equal(invalid.body._status, "ERR");
  const badQuery = await api.get("people?where={bad", origin);
  assert.equal(badQuery.status, 400);
  assertAllowed(badQuery, APP);
  const badOverride = await api.request("POST", "people", {
    headers: { ...origin, "x-http-method-override": "BREW" },
    body: {},
  });
  assert.equal(badOverride.status, 400);
  assertAllowed(badOverride, APP);
});

scenario("CORS: X_DOMAINS_RE patterns are anchored at both ends", {
  DOMAIN,
  X_DOMAINS_RE: ["https://[a-z0-9-]+\\.example\\.com", "http://localhost:\\d+"],
}, async (api) => {
  for (
    const origin of ["https://app.example.com", "https://a-1.example.com", "http://localhost:8080"]
  ) {
    assertAllowed(await api.get("people", { origin }), origin);
  }
  for (
    const origin of [
      "https://app.example.com.evil.org",
      "https://evil.org/https://app.example.com",
      "xhttps://app.example.com",
      "https://example.com",
      "http://localhost:80x",
    ]
  ) {
    assertRefused(await api.get("people", { origin }));
  }
});

scenario('CORS: X_DOMAINS "*" echoes any origin, never with credentials', {
  DOMAIN,
  X_DOMAINS: "*",
  X_ALLOW_CREDENTIALS: true,
}, async (api, running) => {
  const res = await api.get("people", { origin: EVIL });
  assertAllowed(res, EVIL);
  assert.notEqual(res.headers.get("access-control-allow-origin"), "*");
  assert.equal(res.headers.get("access-control-allow-credentials"), null);
  assert.ok(running.service.warnings.some((w) => w.startsWith("X_ALLOW_CREDENTIALS")));
});

scenario("CORS: X_ALLOW_CREDENTIALS for listed origins and patterns only", {
  DOMAIN,
  X_DOMAINS: ["*", APP],
  X_DOMAINS_RE: "https://[a-z]+\\.trusted\\.net",
  X_ALLOW_CREDENTIALS: true,
  X_MAX_AGE: 600,
}, async (api) => {
  const listed = await api.get("people", { origin: APP });
  assertAllowed(listed, APP);
  assert.equal(listed.headers.get("access-control-allow-credentials"), "true");
  const pattern = await preflight(api, "people", "https://x.trusted.net", "POST");
  assertAllowed(pattern, "https://x.trusted.net");
  assert.equal(pattern.headers.get("access-control-allow-credentials"), "true");
  assert.equal(pattern.headers.get("access-control-max-age"), "600");
  const other = await api.get("people", { origin: EVIL });
  assertAllowed(other, EVIL);
  assert.equal(other.headers.get("access-control-allow-credentials"), null);
});

Deno.test("CORS: malformed X_* settings refuse to start, naming the key", async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ X_DOMAINS: 5 }, "X_DOMAINS"],
    [{ X_DOMAINS_RE: ["(unclosed"] }, "X_DOMAINS_RE"],
    [{ X_DOMAINS: [APP], X_HEADERS: { a: 1 } }, "X_HEADERS"],
    [{ X_DOMAINS: [APP], X_EXPOSE_HEADERS: [1] }, "X_EXPOSE_HEADERS"],
    [{ X_DOMAINS: [APP], X_ALLOW_CREDENTIALS: "yes" }, "X_ALLOW_CREDENTIALS"],
    [{ X_DOMAINS: [APP], X_MAX_AGE: -1 }, "X_MAX_AGE"],
  ];
  for (const [settings, key] of cases) {
    await assert.rejects(
      createService({ DOMAIN: {}, STORE: "embedded", ...settings }, { env: false }),
      (error: unknown) =>
        error instanceof SettingsError && error.problems.some((p) => p.startsWith(key)),
      key,
    );
  }
});
