/** Soft delete: the states table of the spec. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  SOFT_DELETE: true,
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: { items: { schema: { name: { type: "string" } } } },
};

scenario("DELETE marks the document; GET answers 404 with it", SETTINGS, async (api) => {
  const created = await api.create("items", { name: "a" });
  assert.equal(created._deleted, false);
  const path = `items/${created._id}`;
  assert.equal((await api.get(path)).body._deleted, false);
  assert.equal((await api.delete(path, { "if-match": created._etag })).status, 204);
  const gone = await api.get(path);
  assert.equal(gone.status, 404);
  assert.equal(gone.body._deleted, true);
  assert.equal(gone.body.name, "a");
  assert.equal((await api.get("items")).body._meta.total, 0);
  assert.equal((await api.delete(path, { "if-match": gone.body._etag })).status, 404);
});

scenario("show_deleted and where _deleted list deleted items", SETTINGS, async (api) => {
  const a = await api.create("items", { name: "a" });
  await api.create("items", { name: "b" });
  await api.delete(`items/${a._id}`, { "if-match": a._etag });
  const shown = await api.get("items?show_deleted");
  assert.equal(shown.body._meta.total, 2);
  const deleted = await api.get('items?show_deleted&where={"_deleted": true}');
  assert.deepEqual(deleted.body._items.map((i: Json) => i.name), ["a"]);
});

scenario("an empty PATCH restores a deleted document as is", SETTINGS, async (api) => {
  const created = await api.create("items", { name: "a" });
  const path = `items/${created._id}`;
  await api.delete(path, { "if-match": created._etag });
  const deleted = (await api.get(path)).body;
  const restored = await api.patch(path, {}, { "if-match": deleted._etag });
  assert.equal(restored.status, 200);
  assert.equal(restored.body._deleted, false);
  const item = await api.get(path);
  assert.equal(item.status, 200);
  assert.equal(item.body.name, "a");
});

scenario("PUT restores a deleted document; _deleted cannot be written", SETTINGS, async (api) => {
  const created = await api.create("items", { name: "a" });
  const path = `items/${created._id}`;
  await api.delete(path, { "if-match": created._etag });
  const etag = (await api.get(path)).body._etag;
  assert.equal((await api.patch(path, { _deleted: false }, { "if-match": etag })).status, 422);
  const put = await api.put(path, { name: "b" }, { "if-match": etag });
  assert.equal(put.status, 200);
  assert.equal((await api.get(path)).body.name, "b");
});

scenario("resource DELETE soft-deletes every document", SETTINGS, async (api) => {
  await api.post("items", [{ name: "a" }, { name: "b" }]);
  assert.equal((await api.delete("items")).status, 204);
  assert.equal((await api.get("items")).body._meta.total, 0);
  assert.equal((await api.get("items?show_deleted")).body._meta.total, 2);
});
