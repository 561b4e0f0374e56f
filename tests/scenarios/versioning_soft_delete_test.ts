/**
 * Versioning with listed items, documents from before versioning, and soft delete; soft
 * delete with `where` and additional lookups.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q } from "../support/assertions.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  SOFT_DELETE: true,
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    docs: {
      versioning: true,
      schema: { title: { type: "string" }, body: { type: "string" } },
    },
    users: {
      additional_lookup: { url: 'regex("[a-z]+")', field: "login" },
      schema: { login: { type: "string", unique: true }, n: { type: "integer" } },
    },
  },
};

scenario("listed items carry _version and _latest_version", SETTINGS, async (api) => {
  const created = await api.create("docs", { title: "a" });
  await api.patch(`docs/${created._id}`, { body: "x" }, { "if-match": created._etag });
  const [item] = (await api.get("docs")).body._items;
  assert.equal(item._version, 2);
  assert.equal(item._latest_version, 2);
});

scenario(
  "a document from before versioning is version 1 until written",
  SETTINGS,
  async (api, running) => {
    const id = new ObjectId();
    const when = new Date("2026-01-01T00:00:00Z");
    await running.service.store.collection("docs").insertMany([
      { _id: id, title: "old", _created: when, _updated: when, _etag: "e0", _deleted: false },
    ]);
    const path = `docs/${id.toHexString()}`;
    const item = await api.get(path);
    assert.equal(item.status, 200);
    assert.equal(item.body._version, 1);
    assert.equal(item.body._latest_version, 1);
    assert.equal((await api.get("docs")).body._items[0]._version, 1);
    assert.equal((await api.get(`${path}?version=1`)).body.title, "old");
    assert.equal((await api.get(`${path}?version=all`)).body._items.length, 1);
    assert.equal((await api.get(`${path}?version=2`)).status, 404);

    const patched = await api.patch(path, { title: "new" }, { "if-match": "e0" });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body._version, 2);
    const v1 = await api.get(`${path}?version=1`);
    assert.equal(v1.body.title, "old");
    assert.equal(v1.body._version, 1);
    assert.equal(v1.body._latest_version, 2);
    const all = await api.get(`${path}?version=all`);
    assert.deepEqual(all.body._items.map((v: Json) => [v._version, v.title]), [[1, "old"], [
      2,
      "new",
    ]]);
  },
);

scenario("a soft delete is a new version; old versions stay readable", SETTINGS, async (api) => {
  const created = await api.create("docs", { title: "a", body: "one" });
  const path = `docs/${created._id}`;
  const patched = await api.patch(path, { body: "two" }, { "if-match": created._etag });
  assert.equal((await api.delete(path, { "if-match": patched.body._etag })).status, 204);
  const gone = await api.get(path);
  assert.equal(gone.status, 404);
  assert.equal(gone.body._deleted, true);
  assert.equal(gone.body._version, 3);
  const all = await api.get(`${path}?version=all`);
  assert.equal(all.status, 200);
  assert.deepEqual(all.body._items.map((v: Json) => v._deleted), [false, false, true]);
  // As in Eve, the deleted version itself answers 404 with the document.
  const third = await api.get(`${path}?version=3`);
  assert.equal(third.status, 404);
  assert.equal(third.body._deleted, true);
  assert.equal(third.body._latest_version, 3);
  assert.equal((await api.get(`${path}?version=1`)).body.body, "one");
  const diffs = await api.get(`${path}?version=diffs`);
  assert.equal(diffs.status, 200);
  assert.equal(diffs.body._items[2]._deleted, true);
});

scenario('where={"_deleted": true} lists soft-deleted items', SETTINGS, async (api) => {
  const a = await api.create("users", { login: "ann" });
  await api.create("users", { login: "bob" });
  await api.delete(`users/${a._id}`, { "if-match": a._etag });
  for (const extra of ["", "&show_deleted"]) {
    const res = await api.get(`users?where=${q('{"_deleted": true}')}${extra}`);
    assert.deepEqual(res.body._items.map((u: Json) => u.login), ["ann"], extra);
  }
  const live = await api.get(`users?where=${q('{"login": "ann"}')}`);
  assert.equal(live.body._items.length, 0, "other filters still hide deleted items");
});

scenario(
  "an additional lookup returns the live document over a deleted one",
  SETTINGS,
  async (api) => {
    const old = await api.create("users", { login: "ann", n: 1 });
    await api.delete(`users/${old._id}`, { "if-match": old._etag });
    assert.equal((await api.get("users/ann")).status, 404);
    const fresh = await api.create("users", { login: "ann", n: 2 });
    const res = await api.get("users/ann");
    assert.equal(res.status, 200);
    assert.equal(res.body._id, fresh._id);
    assert.equal(res.body.n, 2);
  },
);

/** A document with versions 1..5 (`body` "v1".."v5"); returns its item path. */
async function fiveVersions(api: Json): Promise<string> {
  const created = await api.create("docs", { title: "t", body: "v1" });
  const path = `docs/${created._id}`;
  let etag = created._etag;
  for (let v = 2; v <= 5; v++) {
    const res = await api.patch(path, { body: `v${v}` }, { "if-match": etag });
    etag = res.body._etag;
  }
  return path;
}

const PAGED = {
  ...SETTINGS,
  DOMAIN: { ...SETTINGS.DOMAIN, docs: { ...SETTINGS.DOMAIN.docs, pagination_default: 2 } },
};

scenario("version=all honours sort and paging, with _links", PAGED, async (api) => {
  const path = await fiveVersions(api);
  const first = await api.get(`${path}?version=all`);
  assert.deepEqual(first.body._items.map((v: Json) => v._version), [1, 2]);
  assert.deepEqual(first.body._meta, { page: 1, max_results: 2, total: 5 });
  const links = first.body._links;
  assert.equal(links.self.href, `${path}?version=all`);
  // As in Eve: the versions' collection is the document, their parent the resource.
  assert.equal(links.collection.href, path);
  assert.equal(links.parent.href, "docs");
  assert.match(links.next.href, new RegExp(`^${path}\\?.*page=2`));
  assert.match(links.last.href, /page=3/);
  const last = await api.get(links.last.href);
  assert.deepEqual(last.body._items.map((v: Json) => v._version), [5]);
  assert.match(last.body._links.prev.href, /page=2/);
  assert.ok(!last.body._links.next);
  const sorted = await api.get(`${path}?version=all&sort=-_version&max_results=3`);
  assert.deepEqual(sorted.body._items.map((v: Json) => v.body), ["v5", "v4", "v3"]);
  assert.ok(sorted.body._items.every((v: Json) => v._latest_version === 5));
});

scenario("version=diffs pages diff against the version before", PAGED, async (api) => {
  const path = await fiveVersions(api);
  const first = await api.get(`${path}?version=diffs`);
  assert.equal(first.body._items[0].title, "t", "the first version is whole");
  assert.equal(first.body._items[1].body, "v2");
  assert.ok(!("title" in first.body._items[1]));
  const second = await api.get(`${path}?version=diffs&page=2`);
  assert.deepEqual(second.body._items.map((v: Json) => [v._version, v.body]), [[3, "v3"], [
    4,
    "v4",
  ]]);
  assert.ok(second.body._items.every((v: Json) => !("title" in v)), "diffs, not whole versions");
  assert.equal(second.body._meta.total, 5);
  assert.equal(second.body._links.self.href, `${path}?version=diffs`);
  assert.match(second.body._links.next.href, /page=3/);
});

scenario("version=all and diffs honour projection", PAGED, async (api) => {
  const path = await fiveVersions(api);
  const projected = await api.get(`${path}?version=all&projection=${q('{"title": 1}')}`);
  for (const version of projected.body._items) {
    assert.equal(version.title, "t");
    assert.ok(!("body" in version));
    assert.ok(version._version && version._id);
  }
  const excluded = await api.get(`${path}?version=diffs&projection=${q('{"body": 0}')}`);
  assert.ok(excluded.body._items.every((v: Json) => !("body" in v)));
  assert.equal(excluded.body._items[0].title, "t");
}, { gaps: ["projection"] });

const RELATED = {
  ...SETTINGS,
  DOMAIN: {
    ...SETTINGS.DOMAIN,
    notes: {
      schema: {
        ref: {
          type: "dict",
          schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
          data_relation: { resource: "docs", field: "_id", version: true, embeddable: true },
        },
      },
    },
  },
};

scenario("embedding a versioned relation returns the referenced version", RELATED, async (api) => {
  const doc = await api.create("docs", { title: "first" });
  const path = `docs/${doc._id}`;
  await api.patch(path, { title: "second" }, { "if-match": doc._etag });
  const note = await api.create("notes", { ref: { _id: doc._id, _version: 1 } });
  const newer = await api.create("notes", { ref: { _id: doc._id, _version: 2 } });
  const embedded = q('{"ref": 1}');
  const res = await api.get(`notes/${note._id}?embedded=${embedded}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.ref.title, "first");
  assert.equal(res.body.ref._version, 1);
  assert.equal(res.body.ref._id, doc._id);
  const list = await api.get(`notes?embedded=${embedded}`);
  const titles = Object.fromEntries(list.body._items.map((n: Json) => [n._id, n.ref.title]));
  assert.deepEqual(titles, { [note._id]: "first", [newer._id]: "second" });
  const plain = await api.get(`notes/${note._id}`);
  assert.deepEqual(plain.body.ref, { _id: doc._id, _version: 1 });
});
