/** Core CRUD through HTTP: resource and item endpoints, envelopes, meta fields, links. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { RFC1123_DATE } from "../support/assertions.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    people: {
      item_title: "person",
      schema: {
        name: { type: "string", required: true },
        age: { type: "integer" },
        address: { type: "dict", schema: { city: { type: "string" }, street: { type: "string" } } },
      },
    },
    readonly: {
      schema: { x: { type: "string" } },
      resource_methods: ["GET"],
      item_methods: ["GET"],
    },
  },
};

const HEX24 = /^[a-f0-9]{24}$/;

scenario("home lists every resource", SETTINGS, async (api) => {
  const res = await api.get("/");
  assert.equal(res.status, 200);
  assert.deepEqual(res.body._links.child, [
    { href: "people", title: "people" },
    { href: "readonly", title: "readonly" },
  ]);
});

scenario("POST creates a document with meta fields and Location", SETTINGS, async (api) => {
  const res = await api.post("people", { name: "Ada", age: 36 });
  assert.equal(res.status, 201);
  const body = res.body;
  assert.equal(body._status, "OK");
  assert.match(body._id, HEX24);
  assert.match(body._created, RFC1123_DATE);
  assert.match(body._updated, RFC1123_DATE);
  assert.match(body._etag, /^[a-f0-9]{40}$/);
  assert.deepEqual(body._links.self, { href: `people/${body._id}`, title: "person" });
  // Path-absolute: never built from the request's Host (PUBLIC_BASE_URL makes it absolute).
  assert.equal(res.headers.get("location"), `/people/${body._id}`);

  const item = await api.get(`people/${body._id}`);
  assert.equal(item.status, 200);
  assert.equal(item.body.name, "Ada");
  assert.equal(item.body.age, 36);
  assert.equal(item.body._etag, body._etag);
  assert.equal(item.headers.get("etag"), `"${body._etag}"`);
  assert.equal(item.headers.get("last-modified"), body._updated);
  assert.deepEqual(item.body._links, {
    self: { href: `people/${body._id}`, title: "person" },
    parent: { href: "/", title: "home" },
    collection: { href: "people", title: "people" },
  });
});

scenario("bulk POST stores every document and answers _items", SETTINGS, async (api) => {
  const res = await api.post("people", [{ name: "a" }, { name: "b" }, { name: "c" }]);
  assert.equal(res.status, 201);
  assert.equal(res.body._status, "OK");
  assert.equal(res.body._items.length, 3);
  for (const item of res.body._items) assert.equal(item._status, "OK");
  assert.equal(res.headers.get("location"), `/people/${res.body._items[0]._id}`);
  const list = await api.get("people");
  assert.equal(list.body._meta.total, 3);
  assert.deepEqual(list.body._items.map((p: Json) => p.name).sort(), ["a", "b", "c"]);
});

scenario("collection GET envelope: _items, _links, _meta", SETTINGS, async (api) => {
  const empty = await api.get("people");
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body._items, []);
  assert.deepEqual(empty.body._meta, { page: 1, max_results: 25, total: 0 });
  assert.deepEqual(empty.body._links, {
    parent: { href: "/", title: "home" },
    self: { href: "people", title: "people" },
  });
  await api.create("people", { name: "x" });
  const one = await api.get("people");
  assert.equal(one.body._items.length, 1);
  assert.equal(one.body._items[0]._links.self.title, "person");
});

scenario("HEAD answers headers without a body", SETTINGS, async (api) => {
  const created = await api.create("people", { name: "h" });
  const res = await api.head(`people/${created._id}`);
  assert.equal(res.status, 200);
  assert.equal(res.text, "");
  assert.equal(res.headers.get("etag"), `"${created._etag}"`);
  assert.equal((await api.head("people")).status, 200);
});

scenario("PATCH changes only the named fields and needs If-Match", SETTINGS, async (api) => {
  const created = await api.create("people", {
    name: "p",
    age: 1,
    address: { city: "Rome", street: "Via" },
  });
  const path = `people/${created._id}`;
  assert.equal((await api.patch(path, { age: 2 })).status, 428);
  assert.equal((await api.patch(path, { age: 2 }, { "if-match": "nope" })).status, 412);
  const res = await api.patch(path, { age: 2, address: { city: "Oslo" } }, {
    "if-match": created._etag,
  });
  assert.equal(res.status, 200);
  assert.equal(res.body._status, "OK");
  assert.notEqual(res.body._etag, created._etag);
  const item = (await api.get(path)).body;
  assert.equal(item.name, "p");
  assert.equal(item.age, 2);
  assert.deepEqual(item.address, { city: "Oslo", street: "Via" });
  assert.equal(item._etag, res.body._etag);
  const dotted = await api.patch(path, { "address.street": "Gate" }, { "if-match": item._etag });
  assert.equal(dotted.status, 200);
  assert.deepEqual((await api.get(path)).body.address, { city: "Oslo", street: "Gate" });
  // The old ETag no longer matches.
  assert.equal((await api.patch(path, { age: 3 }, { "if-match": created._etag })).status, 412);
});

scenario("PUT replaces the whole document", SETTINGS, async (api) => {
  const created = await api.create("people", { name: "r", age: 5 });
  const path = `people/${created._id}`;
  assert.equal((await api.put(path, { name: "s" })).status, 428);
  const res = await api.put(path, { name: "s" }, { "if-match": created._etag });
  assert.equal(res.status, 200);
  const item = (await api.get(path)).body;
  assert.equal(item.name, "s");
  assert.equal(item.age, undefined);
  assert.equal(item._created, created._created);
});

scenario("PUT on a missing item creates it with the URL's id", SETTINGS, async (api) => {
  const id = "5f0c5e0d9d1b2c3a4b5c6d7e";
  const res = await api.put(`people/${id}`, { name: "new" });
  assert.equal(res.status, 201);
  assert.equal(res.body._id, id);
  assert.equal((await api.get(`people/${id}`)).body.name, "new");
});

scenario("PUT on a missing item is 404 with UPSERT_ON_PUT false", {
  ...SETTINGS,
  UPSERT_ON_PUT: false,
}, async (api) => {
  assert.equal((await api.put("people/5f0c5e0d9d1b2c3a4b5c6d7e", { name: "n" })).status, 404);
});

scenario("DELETE item needs If-Match and answers 204", SETTINGS, async (api) => {
  const created = await api.create("people", { name: "d" });
  const path = `people/${created._id}`;
  assert.equal((await api.delete(path)).status, 428);
  assert.equal((await api.delete(path, { "if-match": "bad" })).status, 412);
  const res = await api.delete(path, { "if-match": created._etag });
  assert.equal(res.status, 204);
  assert.equal(res.text, "");
  assert.equal((await api.get(path)).status, 404);
});

scenario("DELETE resource removes every document", SETTINGS, async (api) => {
  await api.post("people", [{ name: "a" }, { name: "b" }]);
  assert.equal((await api.delete("people")).status, 204);
  assert.equal((await api.get("people")).body._meta.total, 0);
});

scenario("missing data: GET empty, PATCH/PUT/DELETE 404, POST creates", {
  ...SETTINGS,
  UPSERT_ON_PUT: false,
}, async (api) => {
  const id = "5f0c5e0d9d1b2c3a4b5c6d7e";
  assert.equal((await api.get("people")).status, 200);
  assert.equal((await api.get(`people/${id}`)).status, 404);
  assert.equal((await api.patch(`people/${id}`, { name: "x" }, { "if-match": "x" })).status, 404);
  assert.equal((await api.put(`people/${id}`, { name: "x" }, { "if-match": "x" })).status, 404);
  assert.equal((await api.delete(`people/${id}`, { "if-match": "x" })).status, 404);
  assert.equal((await api.delete("people")).status, 404);
  assert.equal((await api.post("people", { name: "x" })).status, 201);
});

scenario(
  "IF_MATCH false: no ETag, edits unconditional",
  { ...SETTINGS, IF_MATCH: false },
  async (api) => {
    const created = await api.create("people", { name: "e" });
    assert.equal(created._etag, undefined);
    const item = await api.get(`people/${created._id}`);
    assert.equal(item.headers.get("etag"), null);
    assert.equal(item.body._etag, undefined);
    assert.equal((await api.patch(`people/${created._id}`, { age: 1 })).status, 200);
  },
);

scenario("ENFORCE_IF_MATCH false: If-Match optional but honoured", {
  ...SETTINGS,
  ENFORCE_IF_MATCH: false,
}, async (api) => {
  const created = await api.create("people", { name: "e" });
  const path = `people/${created._id}`;
  assert.equal((await api.patch(path, { age: 1 }, { "if-match": "stale" })).status, 412);
  assert.equal((await api.patch(path, { age: 1 })).status, 200);
});

scenario("405 with Allow for a method not enabled", SETTINGS, async (api) => {
  const res = await api.post("readonly", { x: "1" });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get("allow"), "GET, HEAD, OPTIONS");
  assert.equal(res.body._status, "ERR");
  assert.equal(res.body._error.code, 405);
  const item = await api.delete("readonly/5f0c5e0d9d1b2c3a4b5c6d7e");
  assert.equal(item.status, 405);
});

scenario("default settings are read-only", { DOMAIN: { things: {} } }, async (api) => {
  assert.equal((await api.get("things")).status, 200);
  assert.equal((await api.post("things", {})).status, 405);
});

scenario("X-HTTP-Method-Override runs the named method", SETTINGS, async (api) => {
  const created = await api.create("people", { name: "o" });
  const res = await api.request("POST", `people/${created._id}`, {
    body: { age: 9 },
    headers: { "x-http-method-override": "PATCH", "if-match": created._etag },
  });
  assert.equal(res.status, 200);
  assert.equal((await api.get(`people/${created._id}`)).body.age, 9);
});

scenario("pretty indents the JSON", SETTINGS, async (api) => {
  const res = await api.get("people?pretty");
  assert.equal(res.status, 200);
  assert.match(res.text, /\n {2,}"/);
  assert.doesNotMatch((await api.get("people")).text, /\n/);
});
