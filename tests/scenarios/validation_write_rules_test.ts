/**
 * Write rules through HTTP: defaults on POST and PUT, PUT replacing the whole document,
 * PATCH changing only what it names (nested fields in both notations), normalize_on_patch,
 * and meta fields no client can write.
 */
import assert from "node:assert/strict";
import { scenario, sharedService } from "../support/harness.ts";
import { RFC1123_DATE } from "../support/assertions.ts";
import type { Json } from "../support/client.ts";

const SCHEMA = {
  name: { type: "string" },
  status: { type: "string", default: "new" },
  note: { type: "string", nullable: true },
  address: {
    type: "dict",
    schema: {
      city: { type: "string" },
      street: { type: "string" },
      country: { type: "string", default: "IT" },
    },
  },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    people: { schema: SCHEMA },
    kept: { normalize_on_patch: false, schema: SCHEMA },
    open: { allow_unknown: true, soft_delete: true, schema: { name: { type: "string" } } },
    versioned: { versioning: true, schema: { name: { type: "string" } } },
  },
};

/** The stored document as the API shows it, without meta fields. */
async function fields(api: Json, path: string) {
  const res = await api.get(path);
  assert.equal(res.status, 200, res.text);
  return Object.fromEntries(Object.entries(res.body).filter(([k]) => !k.startsWith("_")));
}

// Scenarios that read back only what they stored share one service per store.
const shared = sharedService("write rules", SETTINGS);

shared("POST assigns defaults to missing fields, nested ones too", async (api) => {
  const a = await api.create("people", { name: "a", address: { city: "Rome" } });
  assert.deepEqual(await fields(api, `people/${a._id}`), {
    name: "a",
    status: "new",
    address: { city: "Rome", country: "IT" },
  });
  const b = await api.create("people", { name: "b", status: "done" });
  assert.deepEqual(await fields(api, `people/${b._id}`), { name: "b", status: "done" });
});

shared("PUT replaces the whole document and assigns defaults", async (api) => {
  const a = await api.create("people", {
    name: "a",
    status: "done",
    note: "x",
    address: { city: "Rome", country: "FR" },
  });
  const path = `people/${a._id}`;
  const before = (await api.get(path)).body;
  const res = await api.put(path, { name: "b", address: { street: "Main" } }, {
    "if-match": a._etag,
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body._id, a._id);
  assert.notEqual(res.body._etag, a._etag);
  const after = (await api.get(path)).body;
  assert.deepEqual(await fields(api, path), {
    name: "b",
    status: "new",
    address: { street: "Main", country: "IT" },
  });
  assert.equal(after._created, before._created);
});

shared("PATCH changes only the fields it names", async (api) => {
  const a = await api.create("kept", {
    name: "a",
    note: "x",
    address: { city: "Rome", street: "Main" },
  });
  const path = `kept/${a._id}`;
  const res = await api.patch(path, { name: "b" }, { "if-match": a._etag });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body._status, "OK");
  assert.match(res.body._updated, RFC1123_DATE);
  assert.deepEqual(await fields(api, path), {
    name: "b",
    status: "new",
    note: "x",
    address: { city: "Rome", street: "Main", country: "IT" },
  });
});

shared("PATCH {a: {b: v}} and {'a.b': v} both update nested b only", async (api) => {
  const a = await api.create("kept", { address: { city: "Rome", street: "Main" } });
  const path = `kept/${a._id}`;
  const one = await api.patch(path, { address: { city: "Milan" } }, { "if-match": a._etag });
  assert.equal(one.status, 200, one.text);
  assert.deepEqual((await api.get(path)).body.address, {
    city: "Milan",
    street: "Main",
    country: "IT",
  });
  const two = await api.patch(path, { "address.street": "Side" }, {
    "if-match": one.body._etag,
  });
  assert.equal(two.status, 200, two.text);
  assert.deepEqual((await api.get(path)).body.address, {
    city: "Milan",
    street: "Side",
    country: "IT",
  });
  const bad = await api.patch(path, { "address.city": 5, "address.zip": "1" }, {
    "if-match": two.body._etag,
  });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.body._issues, {
    address: { city: "must be of string type", zip: "unknown field" },
  });
});

shared("PATCH cannot remove a field", async (api) => {
  const a = await api.create("kept", { name: "a", note: "x" });
  const path = `kept/${a._id}`;
  const unset = await api.patch(path, { $unset: { name: 1 } }, { "if-match": a._etag });
  assert.equal(unset.status, 422);
  assert.deepEqual(unset.body._issues, { $unset: "invalid field name" });
  const nulled = await api.patch(path, { name: null }, { "if-match": a._etag });
  assert.equal(nulled.status, 422);
  assert.deepEqual(nulled.body._issues, { name: "null value not allowed" });
  // A nullable field may be set to null: the field stays, holding null.
  const ok = await api.patch(path, { note: null }, { "if-match": a._etag });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(await fields(api, path), { name: "a", note: null, status: "new" });
});

scenario("normalize_on_patch (default): Eve's behaviour, which keeps data", SETTINGS, async (
  api,
  running,
) => {
  const a = await api.create("people", {
    name: "a",
    status: "done",
    address: { city: "Rome", country: "FR" },
  });
  const path = `people/${a._id}`;
  const res = await api.patch(path, { name: "b", address: { city: "Milan" } }, {
    "if-match": a._etag,
  });
  assert.equal(res.status, 200, res.text);
  // A top-level field is kept; inside the dict the PATCH names, defaults are reset.
  assert.deepEqual(await fields(api, path), {
    name: "b",
    status: "done",
    address: { city: "Milan", country: "IT" },
  });
  // A stored document lacking a field with a default gets it on its next PATCH.
  const raw = running.service.store.collection("people");
  await raw.updateOne({ name: "b" }, { $unset: { status: "" } });
  const etag = (await api.get(path)).body._etag;
  const again = await api.patch(path, { name: "c" }, { "if-match": etag });
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(await fields(api, path), {
    name: "c",
    status: "new",
    address: { city: "Milan", country: "IT" },
  });
});

shared("normalize_on_patch false: unnamed fields are kept", async (api) => {
  const a = await api.create("kept", {
    name: "a",
    status: "done",
    address: { city: "Rome", country: "FR" },
  });
  const path = `kept/${a._id}`;
  const res = await api.patch(path, { name: "b", address: { city: "Milan" } }, {
    "if-match": a._etag,
  });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(await fields(api, path), {
    name: "b",
    status: "done",
    address: { city: "Milan", country: "FR" },
  });
});

scenario("unknown fields are stored by POST, PUT and PATCH with allow_unknown", SETTINGS, async (
  api,
) => {
  const a = await api.create("open", { name: "a", x: { y: [1] } });
  const path = `open/${a._id}`;
  const patched = await api.patch(path, { z: true }, { "if-match": a._etag });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual(await fields(api, path), { name: "a", x: { y: [1] }, z: true });
  const put = await api.put(path, { w: 1 }, { "if-match": patched.body._etag });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(await fields(api, path), { w: 1 });
});

const META = {
  _created: "Tue, 02 Apr 2013 10:29:13 GMT",
  _updated: "Tue, 02 Apr 2013 10:29:13 GMT",
  _etag: "abc",
  _links: { self: { href: "x" } },
};

scenario("meta fields cannot be written by POST", SETTINGS, async (api) => {
  const res = await api.post("people", { name: "a", ...META });
  assert.equal(res.status, 422);
  assert.deepEqual(res.body._issues, {
    _created: "field is read-only",
    _updated: "field is read-only",
    _etag: "field is read-only",
    _links: "field is read-only",
  });
  // Not even where unknown fields are allowed, nor the soft-delete flag.
  const open = await api.post("open", { name: "a", _deleted: true, _created: META._created });
  assert.equal(open.status, 422);
  assert.deepEqual(open.body._issues, {
    _deleted: "field is read-only",
    _created: "field is read-only",
  });
  const versioned = await api.post("versioned", { name: "a", _version: 7, _latest_version: 7 });
  assert.equal(versioned.status, 422);
  // As in Eve, the version fields are no part of the schema: unknown.
  assert.deepEqual(versioned.body._issues, {
    _version: "unknown field",
    _latest_version: "unknown field",
  });
  assert.equal((await api.get("people")).body._meta.total, 0);
});

scenario("meta fields cannot be written by PATCH or PUT; _id cannot change", SETTINGS, async (
  api,
) => {
  const a = await api.create("open", { name: "a" });
  const b = await api.create("open", { name: "b" });
  const path = `open/${a._id}`;
  const headers = { "if-match": a._etag };
  for (const method of ["patch", "put"] as const) {
    const meta = await api[method](path, { name: "x", _etag: "abc", _deleted: true }, headers);
    assert.equal(meta.status, 422, `${method} ${meta.text}`);
    assert.deepEqual(meta.body._issues, {
      _etag: "field is read-only",
      _deleted: "field is read-only",
    });
    // As in Eve, a PATCH or PUT that changes the id is 400, the message says "immutable".
    const id = await api[method](path, { _id: b._id }, headers);
    assert.equal(id.status, 400, `${method} ${id.text}`);
    assert.match(id.body._error.message, /immutable/);
  }
  // Sending the document's own id is no change.
  const same = await api.patch(path, { _id: a._id, name: "c" }, headers);
  assert.equal(same.status, 200, same.text);
  const item = (await api.get(path)).body;
  assert.equal(item.name, "c");
  assert.equal(item._deleted, false);
});

shared("a client-chosen _id on POST is kept; a taken one is 409", async (api) => {
  const id = "5f1d2c3b4a5f1d2c3b4a5f1d";
  const a = await api.create("people", { _id: id, name: "a" });
  assert.equal(a._id, id);
  const again = await api.post("people", { _id: id, name: "b" });
  assert.equal(again.status, 409);
  assert.equal(again.body._error.code, 409);
});

scenario("PATCH checks the fields it names, against the stored document when rules read others", {
  ...SETTINGS,
  DOMAIN: {
    plain: { schema: { n: { type: "integer" }, m: { type: "integer", max: 5 } } },
    linked: {
      schema: { x: { type: "string", dependencies: "y" }, y: { type: "string" } },
    },
  },
}, async (api, running) => {
  const store = running.service.store;
  const a = await api.create("plain", { n: 1, m: 2 });
  // Stored outside the API, against the schema: a PATCH of another field is not refused.
  await store.collection("plain").updateOne({ n: 1 }, { $set: { m: 9 } });
  // Its ETag read from the store: the API description would refuse an answer holding it.
  let etag = (await store.collection("plain").findOne({ n: 1 }))?._etag as string;
  const other = await api.patch(`plain/${a._id}`, { n: 2 }, { "if-match": etag });
  assert.equal(other.status, 200, other.text);
  etag = other.body._etag as string;
  const named = await api.patch(`plain/${a._id}`, { m: 6 }, { "if-match": etag });
  assert.equal(named.status, 422, named.text);
  assert.deepEqual(named.body._issues, { m: "max value is 5" });

  const b = await api.create("linked", { y: "here" });
  const first = await api.patch(`linked/${b._id}`, { x: "1" }, { "if-match": b._etag as string });
  assert.equal(first.status, 200, first.text);
  await store.collection("linked").updateOne({ y: "here" }, { $unset: { y: "" } });
  etag = (await api.get(`linked/${b._id}`)).body._etag as string;
  const second = await api.patch(`linked/${b._id}`, { x: "2" }, { "if-match": etag });
  assert.equal(second.status, 422, second.text);
  assert.deepEqual(second.body._issues, { x: "field 'y' is required" });
});
