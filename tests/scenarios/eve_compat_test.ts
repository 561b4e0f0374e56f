/**
 * Eve compatibility: documents written outside the API (no `_etag`, no dates) read and edit
 * like any other, and the details Eve clients rely on.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { ObjectId } from "../../src/store/bson.ts";

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
