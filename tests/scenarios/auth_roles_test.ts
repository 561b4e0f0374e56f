/** Authorisation: Eve's roles (resource and item, read and write), public methods, scopes. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { bearer } from "../support/auth.ts";

const user = (name: string, roles: string[]) => ({
  username: name,
  roles,
  token: `${name}-token-0123456789`,
});
const as = (name: string) => bearer(`${name}-token-0123456789`);

const SETTINGS = {
  AUTH_SCHEMES: ["token"],
  AUTH_USERS: [
    user("reader", ["reader"]),
    user("writer", ["writer"]),
    user("ireader", ["ireader"]),
    user("iwriter", ["iwriter"]),
    user("admin", ["admin"]),
    user("nobody", []),
  ],
  SCHEMA_ENDPOINT: "schema",
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    docs: {
      allowed_roles: ["admin"],
      allowed_read_roles: ["reader"],
      allowed_write_roles: ["writer"],
      allowed_item_roles: ["admin"],
      allowed_item_read_roles: ["ireader"],
      allowed_item_write_roles: ["iwriter"],
      schema: { text: { type: "string" } },
    },
    open: { authentication: false, schema: { text: { type: "string" } } },
    pub: {
      public_methods: ["GET"],
      public_item_methods: ["GET"],
      schema: { text: { type: "string" } },
    },
    any: { schema: { text: { type: "string" } } },
  },
};

scenario("the roles matrix: resource and item, read and write", SETTINGS, async (api) => {
  const created = await api.post("docs", { text: "a" }, as("writer"));
  assert.equal(created.status, 201, created.text);
  const item = `docs/${created.body._id}`;
  const etag = { "if-match": `"${created.body._etag}"` };
  const calls: Array<[string, (name: string) => Promise<{ status: number }>, string[]]> = [
    ["GET docs", (name) => api.get("docs", as(name)), ["reader", "admin"]],
    ["HEAD docs", (name) => api.head("docs", as(name)), ["reader", "admin"]],
    ["POST docs", (name) => api.post("docs", { text: "b" }, as(name)), ["writer", "admin"]],
    ["GET item", (name) => api.get(item, as(name)), ["ireader", "admin"]],
    ["HEAD item", (name) => api.head(item, as(name)), ["ireader", "admin"]],
  ];
  for (const [label, call, allowed] of calls) {
    for (const name of ["reader", "writer", "ireader", "iwriter", "admin", "nobody"]) {
      const { status } = await call(name);
      const expected = allowed.includes(name) ? [200, 201] : [403];
      assert.ok(expected.includes(status), `${label} as ${name}: ${status}`);
    }
  }
  // Item writes: iwriter and admin only.
  for (const name of ["reader", "writer", "ireader", "nobody"]) {
    assert.equal((await api.patch(item, { text: "x" }, { ...as(name), ...etag })).status, 403);
    assert.equal((await api.delete(item, { ...as(name), ...etag })).status, 403);
  }
  const patched = await api.patch(item, { text: "x" }, { ...as("iwriter"), ...etag });
  assert.equal(patched.status, 200, patched.text);
  // OPTIONS is public (CORS preflight).
  assert.equal((await api.request("OPTIONS", "docs")).status, 200);
  // DELETE on the resource is a resource write.
  assert.equal((await api.delete("docs", as("reader"))).status, 403);
  assert.equal((await api.delete("docs", as("writer"))).status, 204);
});

scenario("authentication: false and public methods", SETTINGS, async (api) => {
  assert.equal((await api.post("open", { text: "a" })).status, 201);
  assert.equal((await api.get("open")).status, 200);
  assert.equal((await api.get("pub")).status, 200);
  assert.equal((await api.post("pub", { text: "a" })).status, 401);
  const created = await api.post("pub", { text: "a" }, as("nobody"));
  assert.equal(created.status, 201);
  assert.equal((await api.get(`pub/${created.body._id}`)).status, 200);
  assert.equal((await api.head(`pub/${created.body._id}`)).status, 200);
  assert.equal((await api.delete(`pub/${created.body._id}`)).status, 401);
  // No roles named: any account.
  assert.equal((await api.get("any", as("nobody"))).status, 200);
  assert.equal((await api.get("any")).status, 401);
  // The home endpoint needs an account; the schema endpoint lists what the requester reads.
  assert.equal((await api.get("")).status, 401);
  assert.equal((await api.get("", as("nobody"))).status, 200);
  const anonymous = await api.get("schema");
  assert.equal(anonymous.status, 200);
  assert.deepEqual(Object.keys(anonymous.body).sort(), ["open", "pub"]);
  const reader = await api.get("schema", as("reader"));
  assert.deepEqual(Object.keys(reader.body).sort(), ["any", "docs", "open", "pub"]);
  const nobody = await api.get("schema", as("nobody"));
  assert.deepEqual(Object.keys(nobody.body).sort(), ["any", "open", "pub"]);
  assert.equal((await api.get("schema/docs", as("nobody"))).status, 404);
  assert.equal((await api.get("schema", { authorization: "Bearer wrong-0123456789" })).status, 401);
});

Deno.test("roles, AUTH_FIELD or authentication without a scheme: refused at start-up", async () => {
  const { createService, SettingsError } = await import("../../src/mod.ts");
  for (
    const settings of [
      { ALLOWED_ROLES: ["admin"], DOMAIN: { a: {} } },
      { AUTH_FIELD: "owner", DOMAIN: { a: {} } },
      { DOMAIN: { a: { allowed_read_roles: ["x"] } } },
    ]
  ) {
    await assert.rejects(
      () => createService({ ...settings, STORE: "embedded", DATA_DIR: "/nonexistent" }),
      (error: unknown) =>
        error instanceof SettingsError && error.problems.some((p) => /refusing to start/.test(p)),
    );
  }
});

scenario(
  "rate limits count per authenticated account; failed attempts by address",
  { ...SETTINGS, RATE_LIMIT_GET: [2, 60] },
  async (api) => {
    assert.equal((await api.get("any", as("reader"))).status, 200);
    assert.equal((await api.get("any", as("reader"))).status, 200);
    assert.equal((await api.get("any", as("reader"))).status, 429);
    // Another account has its own counter.
    assert.equal((await api.get("any", as("writer"))).status, 200);
    // Failed attempts are counted by client address: guessing is limited too.
    const wrong = { authorization: "Bearer wrong-token-0123456789" };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await api.get("any", wrong)).status);
    assert.deepEqual(statuses, [401, 401, 429]);
  },
);
