/** Custom id fields and types: UUIDs instead of ObjectIds, other ID_FIELD names. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const UUID_SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  DOMAIN: {
    tags: {
      item_url: 'regex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")',
      schema: { _id: { type: "uuid" }, label: { type: "string" } },
    },
  },
};

scenario(
  "uuid ids are generated, accepted from clients and used in URLs",
  UUID_SETTINGS,
  async (api) => {
    const generated = await api.create("tags", { label: "a" });
    assert.match(generated._id, UUID);
    assert.equal(generated._links.self.href, `tags/${generated._id}`);
    const item = await api.get(`tags/${generated._id}`);
    assert.equal(item.status, 200);
    assert.equal(item.body.label, "a");

    const chosen = "0d3c8a3e-4b1f-4c5e-9a77-1c2d3e4f5a6b";
    const res = await api.post("tags", { _id: chosen, label: "b" });
    assert.equal(res.status, 201);
    assert.equal(res.body._id, chosen);
    const patched = await api.patch(`tags/${chosen}`, { label: "c" }, {
      "if-match": res.body._etag,
    });
    assert.equal(patched.status, 200);
    assert.equal((await api.get(`tags/${chosen}`)).body.label, "c");
    // A duplicate id is a conflict (as in Eve), not a 500.
    const again = await api.post("tags", { _id: chosen, label: "d" });
    assert.equal(again.status, 409);
    assert.equal(again.body._status, "ERR");
  },
);

scenario("an invalid uuid from a client is a validation error", UUID_SETTINGS, async (api) => {
  const res = await api.post("tags", { _id: "not-a-uuid", label: "x" });
  assert.equal(res.status, 422);
  assert.ok(res.body._issues._id);
});

scenario("ID_FIELD renames the key field", {
  ID_FIELD: "uid",
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { things: { schema: { name: { type: "string" } } } },
}, async (api) => {
  const created = await api.create("things", { name: "n" });
  assert.match(created.uid, /^[a-f0-9]{24}$/);
  assert.equal(created._id, undefined);
  const item = await api.get(`things/${created.uid}`);
  assert.equal(item.status, 200);
  assert.equal(item.body.uid, created.uid);
});

scenario("sub-resource url variables filter, fill and limit DELETE", {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  DOMAIN: {
    people: { schema: { name: { type: "string" } } },
    invoices: {
      url: 'people/<regex("[a-f0-9]{24}"):owner>/invoices',
      schema: { owner: { type: "objectid" }, total: { type: "integer" } },
    },
  },
}, async (api) => {
  const a = await api.create("people", { name: "a" });
  const b = await api.create("people", { name: "b" });
  await api.post(`people/${a._id}/invoices`, [{ total: 1 }, { total: 2 }]);
  await api.create(`people/${b._id}/invoices`, { total: 3 });
  const listA = await api.get(`people/${a._id}/invoices`);
  assert.equal(listA.body._meta.total, 2);
  for (const invoice of listA.body._items) assert.equal(invoice.owner, a._id);
  assert.equal(listA.body._links.self.href, `people/${a._id}/invoices`);
  assert.equal((await api.delete(`people/${a._id}/invoices`)).status, 204);
  assert.equal((await api.get(`people/${a._id}/invoices`)).body._meta.total, 0);
  assert.equal((await api.get(`people/${b._id}/invoices`)).body._meta.total, 1);
});
