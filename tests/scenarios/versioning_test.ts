/** Document versioning: version numbers, shadow copies, `?version=<n>|all|diffs`. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { Events } from "../../src/mod.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    docs: {
      versioning: true,
      schema: { title: { type: "string" }, body: { type: "string" } },
    },
    notes: {
      schema: {
        ref: {
          type: "dict",
          schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
          data_relation: { resource: "docs", field: "_id", version: true },
        },
      },
    },
  },
};

scenario("writes store numbered versions; reads serve any of them", SETTINGS, async (api) => {
  const created = await api.create("docs", { title: "a", body: "one" });
  assert.equal(created._version, 1);
  assert.equal(created._latest_version, 1);
  const path = `docs/${created._id}`;
  const patched = await api.patch(path, { body: "two" }, { "if-match": created._etag });
  assert.equal(patched.status, 200);
  assert.equal(patched.body._version, 2);
  const put = await api.put(path, { title: "b", body: "three" }, {
    "if-match": patched.body._etag,
  });
  assert.equal(put.body._version, 3);

  const current = await api.get(path);
  assert.equal(current.body._version, 3);
  assert.equal(current.body._latest_version, 3);
  const first = await api.get(`${path}?version=1`);
  assert.equal(first.status, 200);
  assert.equal(first.body.body, "one");
  assert.equal(first.body._version, 1);
  assert.equal(first.body._latest_version, 3);
  assert.equal(first.body._id, created._id);
  // As in Eve, a version's ETag names the latest version too (a new version makes it stale).
  assert.equal(first.headers.get("etag"), `"${created._etag}3"`);
  assert.equal(first.headers.get("last-modified"), current.headers.get("last-modified"));

  const all = await api.get(`${path}?version=all`);
  assert.equal(all.status, 200);
  assert.deepEqual(all.body._items.map((v: Json) => v.body), ["one", "two", "three"]);
  assert.equal(all.body._meta.total, 3);

  const diffs = await api.get(`${path}?version=diffs`);
  assert.equal(diffs.status, 200);
  assert.equal(diffs.body._items[0].title, "a");
  assert.equal(diffs.body._items[1].body, "two");
  assert.equal(diffs.body._items[1].title, undefined);
  assert.equal(diffs.body._items[2].title, "b");
  assert.equal((await api.get(`${path}?version=diffs&sort=-_version`)).status, 400);
  assert.equal((await api.get(`${path}?version=9`)).status, 404);
  assert.equal((await api.get(`${path}?version=zero`)).status, 400);
});

scenario("version=<n> on an unversioned resource is 400", SETTINGS, async (api) => {
  const note = await api.create("notes", {});
  assert.equal((await api.get(`notes/${note._id}?version=1`)).status, 400);
});

scenario("a failed write stores no version", SETTINGS, async (api) => {
  const created = await api.create("docs", { title: "a" });
  const path = `docs/${created._id}`;
  assert.equal((await api.patch(path, { title: 5 }, { "if-match": created._etag })).status, 422);
  assert.equal((await api.patch(path, { title: "x" }, { "if-match": "stale" })).status, 412);
  const all = await api.get(`${path}?version=all`);
  assert.equal(all.body._meta.total, 1);
});

scenario("a versioned data_relation must name an existing version", SETTINGS, async (api) => {
  const doc = await api.create("docs", { title: "a" });
  await api.patch(`docs/${doc._id}`, { title: "b" }, { "if-match": doc._etag });
  assert.equal((await api.post("notes", { ref: { _id: doc._id, _version: 2 } })).status, 201);
  assert.equal((await api.post("notes", { ref: { _id: doc._id, _version: 1 } })).status, 201);
  const missing = await api.post("notes", { ref: { _id: doc._id, _version: 3 } });
  assert.equal(missing.status, 422);
  assert.ok(missing.body._issues.ref);
});

scenario("DELETE removes the document's versions", SETTINGS, async (api) => {
  const created = await api.create("docs", { title: "a" });
  const path = `docs/${created._id}`;
  assert.equal((await api.delete(path, { "if-match": created._etag })).status, 204);
  const again = await api.put(path, { title: "new" });
  assert.equal(again.status, 201);
  assert.equal((await api.get(`${path}?version=all`)).body._meta.total, 1);
});

const fetched: Array<[string, string]> = [];
// As in Eve: `on_fetched_item` gets each version, `on_fetched_diffs` the list of diffs.
const versionEvents = new Events()
  .on("on_fetched_diffs", (resource: string, diffs: Json) => {
    fetched.push(["diffs", resource]);
    diffs[0].seen = true;
  })
  .on("on_fetched_diffs_docs", (diffs: Json) => {
    fetched.push(["diffs_docs", String(diffs.length)]);
  })
  .on("on_fetched_item_docs", (version: Json) => {
    fetched.push(["item_docs", String(version._version)]);
  });

scenario("fetch events fire for version=<n>, all and diffs", SETTINGS, async (api) => {
  fetched.length = 0;
  const created = await api.create("docs", { title: "a" });
  await api.patch(`docs/${created._id}`, { title: "b" }, { "if-match": created._etag });
  const one = await api.get(`docs/${created._id}?version=1`);
  assert.equal(one.status, 200);
  await api.get(`docs/${created._id}?version=all`);
  const diffs = await api.get(`docs/${created._id}?version=diffs`);
  assert.equal(diffs.body._items[0].seen, true);
  assert.deepEqual(fetched, [
    ["item_docs", "1"],
    ["item_docs", "1"],
    ["item_docs", "2"],
    ["diffs", "docs"],
    ["diffs_docs", "2"],
  ]);
}, { events: versionEvents });
