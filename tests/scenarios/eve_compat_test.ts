/**
 * Eve compatibility: documents written outside the API (no `_etag`, no dates) read and edit
 * like any other, and the details Eve clients rely on.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import type { Json } from "../support/client.ts";

const EPOCH = "Thu, 01 Jan 1970 00:00:00 GMT";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    people: { schema: { name: { type: "string" }, age: { type: "integer" } } },
    notes: { soft_delete: true, schema: { text: { type: "string" } } },
  },
};

scenario("documents written outside the API get an ETag and epoch dates", SETTINGS, async (
  api,
  running,
) => {
  const ids = [new ObjectId(), new ObjectId()];
  await running.service.store.collection("people").insertMany([
    { _id: ids[0], name: "ann", age: 30 },
    { _id: ids[1], name: "bob", age: 40 },
  ]);
  const item = await api.get(`people/${ids[0].toHexString()}`);
  assert.equal(item.status, 200);
  assert.match(item.body._etag, /^[0-9a-f]{40}$/);
  assert.equal(item.headers.get("etag"), `"${item.body._etag}"`);
  assert.equal(item.body._created, EPOCH);
  assert.equal(item.body._updated, EPOCH);
  assert.equal(item.headers.get("last-modified"), EPOCH);
  // The same ETag whatever the read: list, projected list, item.
  const list = await api.get("people?sort=name");
  assert.equal(list.body._items[0]._etag, item.body._etag);
  const projected = await api.get(`people?sort=name&projection={"name":1}`);
  assert.equal(projected.body._items[0]._etag, item.body._etag);
  // Conditional reads and edits work with it.
  const cached = await api.get(`people/${ids[0].toHexString()}`, {
    "if-none-match": `"${item.body._etag}"`,
  });
  assert.equal(cached.status, 304);
  const stale = await api.patch(`people/${ids[0].toHexString()}`, { age: 31 }, {
    "if-match": "0000",
  });
  assert.equal(stale.status, 412);
  const patched = await api.patch(`people/${ids[0].toHexString()}`, { age: 31 }, {
    "if-match": item.body._etag,
  });
  assert.equal(patched.status, 200, patched.text);
  assert.notEqual(patched.body._etag, item.body._etag);
  const after = await api.get(`people/${ids[0].toHexString()}`);
  assert.equal(after.body.age, 31);
  assert.equal(after.body._etag, patched.body._etag);
  const other = await api.get(`people/${ids[1].toHexString()}`);
  const put = await api.put(`people/${ids[1].toHexString()}`, { name: "bo" }, {
    "if-match": other.body._etag,
  });
  assert.equal(put.status, 200, put.text);
  const del = await api.delete(`people/${ids[1].toHexString()}`, { "if-match": put.body._etag });
  assert.equal(del.status, 204);
});

scenario("the soft-deleted 404 carries ETag and Last-Modified", SETTINGS, async (api) => {
  const note = await api.create("notes", { text: "a" });
  assert.equal((await api.delete(`notes/${note._id}`, { "if-match": note._etag })).status, 204);
  const gone = await api.get(`notes/${note._id}`);
  assert.equal(gone.status, 404);
  assert.equal(gone.body._deleted, true);
  assert.equal(gone.headers.get("etag"), `"${gone.body._etag}"`);
  assert.equal(gone.headers.get("last-modified"), gone.body._updated);
});

scenario("documents outside the API read as not deleted", SETTINGS, async (api, running) => {
  const id = new ObjectId();
  await running.service.store.collection("notes").insertMany([{ _id: id, text: "x" }]);
  const res = await api.get(`notes/${id.toHexString()}`);
  assert.equal(res.status, 200);
  assert.equal(res.body._deleted, false);
  const del = await api.delete(`notes/${id.toHexString()}`, { "if-match": res.body._etag });
  assert.equal(del.status, 204);
  assert.equal((await api.get(`notes/${id.toHexString()}`)).status, 404);
});

const EVE_SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "PUT"],
  ITEM_CACHE_CONTROL: "",
  EXTRA_RESPONSE_FIELDS: ["name"],
  DOMAIN: {
    products: {
      versioning: true,
      schema: {
        name: "string",
        price: { type: "decimal" },
        views: { type: "integer", versioned: false },
        dims: { type: "dict", schema: { w: "integer", h: "integer" } },
      },
    },
    strict: { normalize_dotted_fields: false, schema: { dims: { type: "dict" } } },
    refs: {
      query_objectid_as_string: true,
      schema: { other: { type: "string" } },
    },
  },
};

scenario("Eve's settings: shorthand fields, decimal, dotted names, extra response fields", {
  ...EVE_SETTINGS,
}, async (api, running) => {
  assert.ok(running.service.warnings.some((w) => w.startsWith("ITEM_CACHE_CONTROL")));
  // `"name": "string"` is `{"type": "string"}`; `decimal` is Decimal128.
  const bad = await api.post("products", { name: 1, price: "x" });
  assert.equal(bad.status, 422);
  assert.ok(bad.body._issues.name && bad.body._issues.price, bad.text);
  // Dotted names become nested fields (NORMALIZE_DOTTED_FIELDS); write responses carry
  // EXTRA_RESPONSE_FIELDS.
  const res = await api.post("products", { name: "box", price: "1.50", "dims.w": 2, "dims.h": 3 });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.name, "box");
  const got = await api.get(`products/${res.body._id}`);
  assert.deepEqual(got.body.dims, { w: 2, h: 3 });
  assert.equal(got.body.price, "1.50");
  // normalize_dotted_fields false: a dotted name is an invalid field name.
  const strict = await api.post("strict", { "dims.w": 2 });
  assert.equal(strict.status, 422);
});

scenario("versioned: false fields are not copied into versions", EVE_SETTINGS, async (
  api,
  running,
) => {
  const p = await api.create("products", { name: "a", views: 1 });
  const patched = await api.patch(`products/${p._id}`, { name: "b", views: 5 }, {
    "if-match": p._etag,
  });
  assert.equal(patched.status, 200);
  const shadows = await running.service.store.collection("products_versions").find({});
  assert.equal(shadows.length, 2);
  assert.ok(shadows.every((v) => !("views" in v)));
  // An old version shows the current value, as in Eve.
  const v1 = await api.get(`products/${p._id}?version=1`);
  assert.equal(v1.body.name, "a");
  assert.equal(v1.body.views, 5);
});

scenario("VALIDATION_ERROR_AS_LIST gives lists of messages", {
  ...EVE_SETTINGS,
  VALIDATION_ERROR_AS_LIST: true,
}, async (api) => {
  const res = await api.post("products", { name: 1, dims: { w: "x" } });
  assert.equal(res.status, 422);
  assert.ok(Array.isArray(res.body._issues.name), res.text);
  assert.ok(Array.isArray(res.body._issues.dims.w), res.text);
  const bulk = await api.post("products", [{ name: "ok" }, { name: 2 }]);
  assert.ok(Array.isArray(bulk.body._items[1]._issues.name), bulk.text);
});

scenario("query_objectid_as_string keeps 24-hex strings as strings", EVE_SETTINGS, async (api) => {
  const hex = "5f0c5e0d9d1b2c3a4b5c6d7e";
  await api.create("refs", { other: hex });
  const res = await api.get(`refs?where={"other":"${hex}"}`);
  assert.equal(res.body._items.length, 1);
  // Fields typed objectid (the id field too) still read the hex as an ObjectId, as in Eve.
  const created = await api.create("refs", { other: "x" });
  const byId = await api.get(`refs?where={"_id":"${created._id}"}`);
  assert.equal(byId.status, 200);
  assert.equal(byId.body._items.length, 1);
  assert.equal(byId.body._items[0]._id, created._id);
});

const ANSWERS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    people: { schema: { name: { type: "string" } } },
    users: {
      schema: { name: { type: "string", unique: true } },
      additional_lookup: { url: 'regex("[a-z]+")', field: "name" },
    },
    overseas: { url: "users/overseas", schema: { name: { type: "string" } } },
  },
};

scenario("status codes as Eve: PATCH of _id 400, POST of an existing _id 409", ANSWERS, async (
  api,
) => {
  const p = await api.create("people", { name: "a" });
  const other = "5f0c5e0d9d1b2c3a4b5c6d7e";
  const patch = await api.patch(`people/${p._id}`, { _id: other }, { "if-match": p._etag });
  assert.equal(patch.status, 400, patch.text);
  const again = await api.post("people", { _id: p._id, name: "b" });
  assert.equal(again.status, 409, again.text);
  assert.equal((await api.get("people")).body._meta.total, 1);
});

scenario("JSON content types with a suffix are JSON", ANSWERS, async (api) => {
  for (const type of ["application/vnd.api+json", "application/merge-patch+json"]) {
    const res = await api.request("POST", "people", {
      raw: JSON.stringify({ name: type }),
      headers: { "content-type": type },
    });
    assert.equal(res.status, 201, `${type}: ${res.text}`);
  }
});

scenario("PATCH and PUT answers carry the ETag header", ANSWERS, async (api) => {
  const p = await api.create("people", { name: "a" });
  const patch = await api.patch(`people/${p._id}`, { name: "b" }, { "if-match": p._etag });
  assert.equal(patch.headers.get("etag"), `"${patch.body._etag}"`);
  const put = await api.put(`people/${p._id}`, { name: "c" }, { "if-match": patch.body._etag });
  assert.equal(put.headers.get("etag"), `"${put.body._etag}"`);
});

scenario("HEAD on a collection carries X-Total-Count", ANSWERS, async (api) => {
  await api.create("people", { name: "a" });
  await api.create("people", { name: "b" });
  const head = await api.head("people");
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("x-total-count"), "2");
  assert.equal(head.text, "");
});

scenario("HEADER_TOTAL_COUNT names the total's field, as in Eve", {
  ...ANSWERS,
  HEADER_TOTAL_COUNT: "X-Count",
}, async (api) => {
  await api.create("people", { name: "a" });
  for (const res of [await api.get("people"), await api.head("people")]) {
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-count"), "1");
    assert.equal(res.headers.get("x-total-count"), null);
  }
});

scenario("INTERNAL_RESOURCE makes every resource internal unless it says otherwise", {
  RESOURCE_METHODS: ["GET", "POST"],
  INTERNAL_RESOURCE: true,
  DOMAIN: {
    audit: { schema: { what: { type: "string" } } },
    people: { internal_resource: false, schema: { name: { type: "string" } } },
  },
}, async (api, running) => {
  assert.equal((await api.get("audit")).status, 404);
  assert.equal((await api.get("people")).status, 200);
  // In process, the internal resource is there.
  const stored = await running.service.data.post("audit", { what: "x" });
  assert.equal(stored.status, 201);
});

scenario("a resource url wins over another resource's additional lookup", ANSWERS, async (api) => {
  await api.create("users", { name: "ann" });
  await api.create("users/overseas", { name: "zed" });
  const res = await api.get("users/overseas");
  assert.equal(res.status, 200);
  assert.equal(res.body._items[0].name, "zed");
  assert.equal((await api.get("users/ann")).body.name, "ann");
});

scenario("malformed embedded is 400 as in Eve", ANSWERS, async (api) => {
  await api.create("people", { name: "a" });
  const res = await api.get("people?embedded=not-a-dict");
  assert.equal(res.status, 400);
  assert.match(res.body._error.message, /Unable to parse `embedded` clause/);
});

const UNIQUE = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH"],
  DOMAIN: {
    tagged: {
      schema: { tags: { type: "list", schema: { type: "string", unique: true } } },
    },
    // Two views of one collection; `code` is unique within each view only.
    reds: {
      datasource: { source: "items", filter: { color: "red" } },
      schema: { color: { type: "string" }, code: { type: "string", unique_within_resource: true } },
    },
    blues: {
      datasource: { source: "items", filter: { color: "blue" } },
      schema: { color: { type: "string" }, code: { type: "string", unique_within_resource: true } },
    },
  },
};

scenario("unique on list members and unique_within_resource", UNIQUE, async (api) => {
  await api.create("tagged", { tags: ["a", "b"] });
  const taken = await api.post("tagged", { tags: ["c", "a"] });
  assert.equal(taken.status, 422, taken.text);
  assert.equal((await api.post("tagged", { tags: ["c", "d"] })).status, 201);
  await api.create("reds", { color: "red", code: "x" });
  assert.equal((await api.post("reds", { color: "red", code: "x" })).status, 422);
  // The same code in the other view is fine: uniqueness is within the resource.
  assert.equal((await api.post("blues", { color: "blue", code: "x" })).status, 201);
  const batch = await api.post("blues", [{ color: "blue", code: "y" }, {
    color: "blue",
    code: "y",
  }]);
  assert.equal(batch.status, 422);
});

scenario("hooks: lookup hex strings become ObjectIds; on_post_GET for home", {
  ...ANSWERS,
  SCHEMA_ENDPOINT: "schema",
}, async (api, running) => {
  const p = await api.create("people", { name: "a" });
  const calls: unknown[] = [];
  running.service.events.on("on_pre_GET_people", (_request: unknown, lookup: Json) => {
    if (lookup._id) lookup._id = p._id; // a hex string, as a hook would write it
  });
  running.service.events.on("on_post_GET", (resource: unknown) => {
    calls.push(resource);
  });
  const other = "5f0c5e0d9d1b2c3a4b5c6d7e";
  const res = await api.get(`people/${other}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body._id, p._id);
  const home = await api.get("/");
  assert.ok(
    home.body._links.child.some((l: Json) => l.href === "schema" && l.title === "schema"),
  );
  assert.ok(calls.includes(null), "on_post_GET raised for home with no resource");
});

const DBREFS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { links: { schema: { target: { type: "dbref" }, name: "string" } } },
};

scenario("the dbref type stores and returns DBRefs", DBREFS, async (api, running) => {
  const hex = "5f0c5e0d9d1b2c3a4b5c6d7e";
  const res = await api.post("links", { target: { $ref: "people", $id: hex }, name: "a" });
  assert.equal(res.status, 201, res.text);
  const [stored] = await running.service.store.collection("links").find({});
  assert.equal((stored.target as { _bsontype?: string })._bsontype, "DBRef");
  const got = await api.get(`links/${res.body._id}`);
  assert.deepEqual(got.body.target, { $ref: "people", $id: hex });
  const xml = await api.get(`links/${res.body._id}`, { accept: "application/xml" });
  assert.equal(xml.status, 200);
  assert.ok(xml.text.includes(hex), xml.text);
  for (
    const bad of [{ $ref: "people" }, { $ref: 1, $id: hex }, { $ref: "p", $id: hex, x: 1 }, "x"]
  ) {
    const refused = await api.post("links", { target: bad });
    assert.equal(refused.status, 422, JSON.stringify(bad));
  }
});

const TWO_BUGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ID_FIELD: "uid",
  DOMAIN: {
    events: {
      schema: {
        uid: { type: "objectid" },
        name: { type: "string" },
        at: { type: "date" },
      },
    },
  },
};

scenario("date (Eve's alias) filters; a custom ID_FIELD is a key field", TWO_BUGS, async (api) => {
  const when = "Tue, 02 Apr 2013 10:29:13 GMT";
  await api.create("events", { name: "a", at: when });
  await api.create("events", { name: "b", at: "Wed, 03 Apr 2013 10:29:13 GMT" });
  const found = await api.get(`events?where={"at":"${when}"}`);
  assert.equal(found.status, 200);
  assert.deepEqual(found.body._items.map((d: Json) => d.name), ["a"]);
  // `uid` is the id field: listing it next to an exclusion is not mixing.
  const projected = await api.get(`events?projection={"uid":1,"name":0}`);
  assert.equal(projected.status, 200, projected.text);
});

scenario("a projection with a custom ID_FIELD keeps the id", TWO_BUGS, async (api) => {
  await api.create("events", { name: "a" });
  const projected = await api.get(`events?projection={"uid":1,"name":0}`);
  assert.ok(projected.body._items.every((d: Json) => d.uid && d.name === undefined));
}, { gaps: ["projection"] });
