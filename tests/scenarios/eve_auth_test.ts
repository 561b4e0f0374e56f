/**
 * Authentication as Eve's own auth tests observe it: the challenge of a 401 from the app's
 * `authenticate` hook, `unique_to_user`, requests naming another owner (401), `ObjectId()`
 * in the expression form of `where`, and edits of user-restricted documents.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { bearer } from "../support/auth.ts";
import { q } from "../support/assertions.ts";
import type { Json } from "../support/client.ts";

scenario(
  "a 401 from the authenticate hook challenges: Basic by default, or what the hook names",
  {
    RESOURCE_METHODS: ["GET"],
    AUTH_REALM: "eve",
    DOMAIN: { people: { schema: { name: { type: "string" } } }, tokens: {} },
  },
  async (api) => {
    const refused = await api.get("people");
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get("www-authenticate"), 'Basic realm="eve"');
    const named = await api.get("tokens");
    assert.equal(named.status, 401);
    assert.equal(named.headers.get("www-authenticate"), 'Bearer realm="tokens"');
    assert.equal((await api.get("tokens", { "x-api-key": "let-me-in" })).status, 200);
  },
  {
    authenticate: (request, resource) => {
      if (request.headers.get("x-api-key") === "let-me-in") return { id: "app" };
      return resource === "tokens" ? { challenge: { scheme: "Bearer", realm: "tokens" } } : null;
    },
  },
);

const as = (name: string) => bearer(`${name}-token-0123456789`);

const SETTINGS = {
  AUTH_SCHEMES: ["token"],
  AUTH_USERS: ["admin", "alt"].map((name) => ({
    username: name,
    token: `${name}-token-0123456789`,
  })),
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    restricted: {
      auth_field: "username",
      additional_lookup: { url: 'regex("[a-z]+")', field: "slug" },
      schema: {
        ref: { type: "string", unique_to_user: true },
        slug: { type: "string" },
      },
    },
    users: {
      auth_field: "_id",
      schema: { name: { type: "string" } },
    },
  },
};

scenario("unique_to_user: unique among the documents of one owner", SETTINGS, async (api) => {
  assert.equal((await api.post("restricted", { ref: "r1" }, as("admin"))).status, 201);
  const again = await api.post("restricted", { ref: "r1" }, as("admin"));
  assert.equal(again.status, 422);
  assert.equal(again.body._issues.ref, "value 'r1' is not unique");
  assert.equal((await api.post("restricted", { ref: "r1" }, as("alt"))).status, 201);
  // Within one request too.
  const bulk = await api.post("restricted", [{ ref: "r2" }, { ref: "r2" }], as("alt"));
  assert.equal(bulk.status, 422);
});

scenario("a request naming the owner field with another value is 401", SETTINGS, async (
  api,
) => {
  await api.post("restricted", { ref: "a", slug: "mine" }, as("admin"));
  const where = await api.get(`restricted?where=${q('{"username": "alt"}')}`, as("admin"));
  assert.equal(where.status, 401);
  assert.equal(where.body._error.message, "Incompatible User-Restricted Resource request.");
  assert.ok(where.headers.get("www-authenticate"));
  const own = await api.get(`restricted?where=${q('{"username": "admin"}')}`, as("admin"));
  assert.equal(own.status, 200);
  assert.equal(own.body._items.length, 1);
  // The owner field is the id: another id is refused the same way, whether it exists or not.
  const other = "0123456789abcdef01234567";
  assert.equal((await api.get(`users/${other}`, as("admin"))).status, 401);
  const byExpression = await api.get(
    `users?where=${q(`_id == ObjectId("${other}")`)}`,
    as("admin"),
  );
  assert.equal(byExpression.status, 401);
});

scenario("ObjectId(...) in the expression form of where", {
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
  RESOURCE_METHODS: ["GET", "POST"],
}, async (api) => {
  const ann = await api.create("people", { name: "ann" });
  await api.create("people", { name: "bob" });
  const found = await api.get(`people?where=${q(`_id == ObjectId("${ann._id}")`)}`);
  assert.equal(found.status, 200, found.text);
  assert.deepEqual(found.body._items.map((p: Json) => p.name), ["ann"]);
  const bad = await api.get(`people?where=${q('_id == ObjectId("xyz")')}`);
  assert.equal(bad.status, 400);
});

scenario(
  "PATCH and PUT of one's own restricted document (bodies encoded twice too)",
  SETTINGS,
  async (
    api,
  ) => {
    const created = await api.post("restricted", { ref: "r" }, as("admin"));
    const path = `restricted/${created.body._id}`;
    const etag = (await api.get(path, as("admin"))).headers.get("etag")!;
    const patched = await api.request("PATCH", path, {
      raw: JSON.stringify(JSON.stringify({ ref: "patched" })),
      headers: { ...as("admin"), "content-type": "application/json", "if-match": etag },
    });
    assert.equal(patched.status, 200, patched.text);
    const put = await api.request("PUT", path, {
      raw: JSON.stringify(JSON.stringify({ ref: "put" })),
      headers: {
        ...as("admin"),
        "content-type": "application/json",
        "if-match": `"${patched.body._etag}"`,
      },
    });
    assert.equal(put.status, 200, put.text);
    const read = await api.get(path, as("admin"));
    assert.equal(read.body.ref, "put");
    assert.equal((await api.get(path, as("alt"))).status, 404);
  },
);
