/** The operation log: entries per written document, the oplog endpoint, on_oplog_push. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { Events, HttpError } from "../../src/mod.ts";
import { q } from "../support/assertions.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    items: { schema: { name: { type: "string" }, n: { type: "integer" } } },
    soft: { soft_delete: true, schema: { name: { type: "string" } } },
  },
};

/** Every entry, oldest first. */
async function entries(api: Json, query = ""): Promise<Json[]> {
  const res = await api.get(`oplog?sort=_id&max_results=50${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body._items;
}

scenario("every write method adds one entry per document", SETTINGS, async (api) => {
  const a = await api.create("items", { name: "a", n: 1 });
  const path = `items/${a._id}`;
  const patched = await api.patch(path, { n: 2 }, { "if-match": a._etag });
  assert.equal(patched.status, 200);
  const put = await api.put(path, { name: "b" }, { "if-match": patched.body._etag });
  assert.equal(put.status, 200);
  assert.equal((await api.delete(path, { "if-match": put.body._etag })).status, 204);
  const log = await entries(api);
  assert.deepEqual(log.map((e) => e.o), ["POST", "PATCH", "PUT", "DELETE"]);
  for (const entry of log) {
    assert.equal(entry.r, "items");
    assert.equal(entry.i, a._id);
    assert.equal(entry.ip, "127.0.0.1");
    // As in Eve, an unauthenticated write is logged as user "n/a".
    assert.equal(entry.u, "n/a");
    assert.ok(entry._etag && entry._created && entry._updated);
    assert.equal(entry._links.self.href, `oplog/${entry._id}`);
    assert.ok(!("extra" in entry));
  }
  const [post, patch, replace, del] = log;
  assert.ok(!("c" in post), "POST carries no changes by default");
  assert.deepEqual(patch.c, { n: 2 });
  assert.equal(replace.c.name, "b");
  assert.ok(!("_etag" in replace.c));
  assert.equal(del.c.name, "b", "DELETE holds the whole document");
  assert.equal(post._created, a._created);
  assert.equal(patch._updated, patched.body._updated);
  // The item endpoint and where/projection work like on any resource.
  const one = await api.get(`oplog/${patch._id}`);
  assert.equal(one.status, 200);
  assert.equal(one.body.o, "PATCH");
  // Each entry has an ETag of its own, as unpredictable as a document's, and reads give the
  // stored one (a conditional GET with it is answered 304).
  for (const entry of log) assert.match(entry._etag, /^[0-9a-f]{40}$/);
  assert.equal(new Set(log.map((e) => e._etag)).size, log.length);
  assert.equal(one.body._etag, patch._etag);
  const unchanged = await api.get(`oplog/${patch._id}`, { "if-none-match": `"${patch._etag}"` });
  assert.equal(unchanged.status, 304);
  const where = await api.get(`oplog?where=${q('{"o": "PUT"}')}`);
  assert.deepEqual(where.body._items.map((e: Json) => e.o), ["PUT"]);
  assert.equal(where.body._meta.total, 1);
});

scenario("a bulk POST writes one entry per document", SETTINGS, async (api) => {
  const res = await api.post("items", [{ name: "a" }, { name: "b" }, { name: "c" }]);
  assert.equal(res.status, 201);
  const log = await entries(api);
  assert.equal(log.length, 3);
  assert.deepEqual(
    log.map((e) => e.i).sort(),
    res.body._items.map((i: Json) => i._id).sort(),
  );
  assert.ok(log.every((e) => e.o === "POST"));
});

scenario("a resource DELETE writes one entry per removed document", SETTINGS, async (api) => {
  await api.post("items", [{ name: "a" }, { name: "b" }]);
  assert.equal((await api.delete("items")).status, 204);
  const deletes = (await entries(api)).filter((e) => e.o === "DELETE");
  assert.equal(deletes.length, 2);
  assert.deepEqual(deletes.map((e) => e.c.name).sort(), ["a", "b"]);
});

scenario("a soft delete is a DELETE entry (item and resource)", SETTINGS, async (api) => {
  const a = await api.create("soft", { name: "a" });
  await api.create("soft", { name: "b" });
  assert.equal((await api.delete(`soft/${a._id}`, { "if-match": a._etag })).status, 204);
  assert.equal((await api.delete("soft")).status, 204);
  const log = await entries(api);
  assert.deepEqual(log.map((e) => e.o), ["POST", "POST", "DELETE", "DELETE"]);
  assert.equal(log[2].i, a._id);
  assert.equal(log[2].c.name, "a");
  assert.equal(log[3].c.name, "b");
});

scenario("a failed write leaves no entry", SETTINGS, async (api) => {
  const a = await api.create("items", { name: "a" });
  const stale = await api.patch(`items/${a._id}`, { name: "x" }, { "if-match": "0".repeat(40) });
  assert.equal(stale.status, 412);
  assert.equal((await api.post("items", [{ name: "ok" }, { name: 5 }])).status, 422);
  assert.equal((await entries(api)).length, 1);
});

scenario("the oplog endpoint is read-only and listed at home", SETTINGS, async (api) => {
  await api.create("items", { name: "a" });
  const [entry] = await entries(api);
  assert.equal((await api.post("oplog", { o: "POST" })).status, 405);
  assert.equal((await api.delete("oplog")).status, 405);
  const item = `oplog/${entry._id}`;
  assert.equal((await api.patch(item, { o: "x" }, { "if-match": entry._etag })).status, 405);
  assert.equal((await api.delete(item, { "if-match": entry._etag })).status, 405);
  const home = await api.get("");
  assert.ok(home.body._links.child.some((l: Json) => l.href === "oplog"));
});

scenario(
  "OPLOG_METHODS, OPLOG_CHANGE_METHODS and OPLOG_AUDIT off",
  {
    ...SETTINGS,
    OPLOG_METHODS: ["POST", "DELETE"],
    OPLOG_CHANGE_METHODS: ["POST"],
    OPLOG_AUDIT: false,
  },
  async (api) => {
    const a = await api.create("items", { name: "a" });
    await api.patch(`items/${a._id}`, { name: "b" }, { "if-match": a._etag });
    const log = await entries(api);
    assert.deepEqual(log.map((e) => e.o), ["POST"]);
    assert.equal(log[0].c.name, "a");
    assert.ok(!("ip" in log[0]));
  },
);

scenario(
  "without OPLOG_ENDPOINT the oplog is not served",
  { ...SETTINGS, OPLOG_ENDPOINT: null },
  async (api) => {
    await api.create("items", { name: "a" });
    assert.equal((await api.get("oplog")).status, 404);
    const home = await api.get("");
    assert.ok(!home.body._links.child.some((l: Json) => l.href === "oplog"));
  },
);

function extraEvents(): Events {
  return new Events().on("on_oplog_push", (resource: string, list: Json[]) => {
    for (const entry of list) entry.extra = { resource, tags: ["audit"] };
  });
}

scenario(
  "on_oplog_push sets extra; hidden unless OPLOG_RETURN_EXTRA_FIELD",
  SETTINGS,
  async (api, running) => {
    await api.create("items", { name: "a" });
    const [entry] = await entries(api);
    assert.ok(!("extra" in entry));
    assert.equal(entry.o, "POST");
    const asked = await api.get(`oplog/${entry._id}?projection=${q('{"extra": 1}')}`);
    assert.equal(asked.status, 200);
    assert.ok(!("extra" in asked.body), "a projection can't reveal it");
    const filtered = await api.get(`oplog?where=${q('{"extra.resource": "items"}')}`);
    assert.equal(filtered.status, 400, "nor a filter");
    // Stored all the same.
    const stored = await running.service.store.collection("oplog").find({});
    assert.deepEqual(stored[0].extra, { resource: "items", tags: ["audit"] });
  },
  { events: extraEvents(), gaps: ["projection"] },
);

scenario(
  "OPLOG_RETURN_EXTRA_FIELD returns extra",
  { ...SETTINGS, OPLOG_RETURN_EXTRA_FIELD: true },
  async (api) => {
    await api.create("items", { name: "a" });
    const [entry] = await entries(api);
    assert.deepEqual(entry.extra, { resource: "items", tags: ["audit"] });
  },
  { events: extraEvents() },
);

scenario(
  "the oplog resource is customisable like any resource",
  {
    ...SETTINGS,
    DOMAIN: {
      ...SETTINGS.DOMAIN,
      oplog: { cache_control: "max-age=5", resource_title: "changes" },
    },
  },
  async (api) => {
    await api.create("items", { name: "a" });
    const res = await api.get("oplog");
    assert.equal(res.headers.get("cache-control"), "max-age=5");
    const home = await api.get("");
    assert.ok(home.body._links.child.some((l: Json) => l.title === "changes"));
  },
);

scenario(
  "an on_oplog_push callback that throws aborts the write",
  SETTINGS,
  async (api, running) => {
    const a = await api.create("items", { name: "a" });
    running.service.events.on("on_oplog_push", () => {
      throw new HttpError(403, "no logging today");
    });
    const post = await api.post("items", { name: "b" });
    assert.equal(post.status, 403);
    const patch = await api.patch(`items/${a._id}`, { name: "x" }, { "if-match": a._etag });
    assert.equal(patch.status, 403);
    const items = (await api.get("items")).body._items;
    assert.deepEqual(items.map((i: Json) => i.name), ["a"]);
    assert.equal((await entries(api)).length, 1);
  },
);
