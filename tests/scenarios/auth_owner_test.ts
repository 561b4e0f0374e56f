/**
 * User-restricted access (AUTH_FIELD): every read and write path sees only the requester's
 * documents; a client naming another owner gets 403; a list of owners shares a document.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { bearer } from "../support/auth.ts";
import { q } from "../support/assertions.ts";
import type { Json } from "../support/client.ts";

const as = (name: string) => bearer(`${name}-token-0123456789`);

const SETTINGS = {
  AUTH_SCHEMES: ["token"],
  AUTH_USERS: ["alice", "bob"].map((name) => ({
    username: name,
    token: `${name}-token-0123456789`,
  })),
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  AUTH_FIELD: "owner",
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
  DOMAIN: {
    notes: {
      versioning: true,
      additional_lookup: { url: 'regex("[a-z0-9-]+")', field: "slug" },
      schema: {
        text: { type: "string" },
        slug: { type: "string" },
        owner: { type: ["string", "list"] },
      },
    },
    comments: {
      url: 'notes/<regex("[a-f0-9]{24}"):note>/comments',
      schema: { note: { type: "objectid" }, body: { type: "string" } },
    },
    links: {
      auth_field: null,
      schema: {
        note: { type: "objectid", data_relation: { resource: "notes", embeddable: true } },
        vnote: {
          type: "dict",
          schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
          data_relation: { resource: "notes", embeddable: true, version: true },
        },
      },
    },
    notestats: {
      datasource: { source: "notes", aggregation: { pipeline: [{ $match: { text: "$text" } }] } },
    },
  },
};

async function seed(api: Json) {
  const alice = await api.post("notes", { text: "hers", slug: "alice-note" }, as("alice"));
  const bob = await api.post("notes", { text: "his", slug: "bob-note" }, as("bob"));
  assert.equal(alice.status, 201, alice.text);
  assert.equal(bob.status, 201, bob.text);
  return { alice: alice.body, bob: bob.body };
}

scenario(
  "POST stores the requester; reads see only their documents",
  SETTINGS,
  async (api, running) => {
    const { alice, bob } = await seed(api);
    const stored = await running.service.store.collection("notes").findOne({ slug: "alice-note" });
    assert.equal(stored!.owner, "alice");
    const mine = await api.get("notes", as("alice"));
    assert.deepEqual(mine.body._items.map((d: Json) => d.slug), ["alice-note"]);
    assert.equal(mine.body._meta.total, 1);
    // As in Eve, a where naming another owner is refused outright (401).
    const probe = await api.get(`notes?where=${q('{"owner": "bob"}')}`, as("alice"));
    assert.equal(probe.status, 401);
    assert.equal((await api.get(`notes/${bob._id}`, as("alice"))).status, 404);
    assert.equal((await api.head(`notes/${bob._id}`, as("alice"))).status, 404);
    assert.equal((await api.get("notes/bob-note", as("alice"))).status, 404);
    assert.equal((await api.get(`notes/${bob._id}?version=all`, as("alice"))).status, 404);
    assert.equal((await api.get(`notes/${bob._id}?version=1`, as("alice"))).status, 404);
    assert.equal((await api.get(`notes/${alice._id}?version=1`, as("alice"))).status, 200);
    assert.equal((await api.get("notes/alice-note", as("alice"))).status, 200);
  },
);

scenario("writes on another's document are 404, whatever the If-Match", SETTINGS, async (api) => {
  const { bob } = await seed(api);
  const item = `notes/${bob._id}`;
  for (const etag of [bob._etag, "0".repeat(40)]) {
    const h = { ...as("alice"), "if-match": `"${etag}"` };
    assert.equal((await api.patch(item, { text: "x" }, h)).status, 404);
    assert.equal((await api.put(item, { text: "x" }, h)).status, 404);
    assert.equal((await api.delete(item, h)).status, 404);
  }
  // DELETE on the resource removes only the requester's documents.
  assert.equal((await api.delete("notes", as("alice"))).status, 204);
  assert.equal((await api.get(item, as("bob"))).status, 200);
  assert.equal((await api.delete("notes", as("alice"))).status, 404);
});

scenario("naming another owner is 403; a list of owners shares", SETTINGS, async (api, running) => {
  const { alice } = await seed(api);
  assert.equal((await api.post("notes", { text: "x", owner: "bob" }, as("alice"))).status, 403);
  const bulk = await api.post("notes", [{ text: "ok" }, { text: "x", owner: "bob" }], as("alice"));
  assert.equal(bulk.status, 403);
  assert.equal(await running.service.store.collection("notes").count({ text: "ok" }), 0);
  assert.equal((await api.post("notes", { text: "x", owner: ["bob"] }, as("alice"))).status, 403);
  const h = { ...as("alice"), "if-match": `"${alice._etag}"` };
  assert.equal((await api.patch(`notes/${alice._id}`, { owner: "bob" }, h)).status, 403);
  assert.equal((await api.put(`notes/${alice._id}`, { text: "y", owner: "bob" }, h)).status, 403);
  // Naming oneself is fine.
  assert.equal((await api.post("notes", { text: "x", owner: "alice" }, as("alice"))).status, 201);
  // Shared with bob: both see it; a PUT without the field keeps the owners.
  const shared = await api.post("notes", { text: "both", owner: ["alice", "bob"] }, as("alice"));
  assert.equal(shared.status, 201, shared.text);
  const seen = await api.get(`notes/${shared.body._id}`, as("bob"));
  assert.equal(seen.status, 200);
  const put = await api.put(`notes/${shared.body._id}`, { text: "both!" }, {
    ...as("bob"),
    "if-match": `"${seen.body._etag}"`,
  });
  assert.equal(put.status, 200, put.text);
  assert.equal((await api.get(`notes/${shared.body._id}`, as("alice"))).status, 200);
  // PUT creating a document on an id another account holds: 404.
  const { bob } = { bob: (await api.get("notes", as("bob"))).body._items[0] };
  const upsert = await api.put(`notes/${bob._id}`, { text: "steal" }, as("alice"));
  assert.equal(upsert.status, 404);
});

scenario(
  "sub-resources, embedding and aggregation see only the requester's",
  SETTINGS,
  async (api) => {
    const { alice } = await seed(api);
    const comments = `notes/${alice._id}/comments`;
    assert.equal((await api.post(comments, { body: "mine" }, as("alice"))).status, 201);
    assert.equal((await api.get(comments, as("alice"))).body._items.length, 1);
    assert.equal((await api.get(comments, as("bob"))).body._items.length, 0);
    // bob links alice's note (links have no owner) and tries to embed it.
    const link = await api.post("links", {
      note: alice._id,
      vnote: { _id: alice._id, _version: 1 },
    }, as("bob"));
    assert.equal(link.status, 201, link.text);
    const embedded = await api.get(
      `links/${link.body._id}?embedded=${q('{"note": 1}')}`,
      as("bob"),
    );
    assert.equal(embedded.status, 200);
    assert.equal(embedded.body.note, null);
    const hers = await api.get(`links/${link.body._id}?embedded=${q('{"note": 1}')}`, as("alice"));
    assert.equal(hers.body.note.text, "hers");
    const stats = await api.get(`notestats?aggregate=${q('{"$text": {}}')}`, as("alice"));
    assert.equal(stats.status, 200, stats.text);
    assert.deepEqual(stats.body._items.map((d: Json) => d.text), ["hers"]);
    const probe = await api.get(`notestats?aggregate=${q('{"$text": "his"}')}`, as("alice"));
    assert.equal(probe.body._items.length, 0);
  },
);

scenario("in-process calls see every document", SETTINGS, async (api, running) => {
  await seed(api);
  const all = await running.service.data.get("notes");
  assert.equal(all.body._items.length, 2);
});

scenario("the operation log shows each account its own entries (u)", SETTINGS, async (api) => {
  await seed(api);
  const log = await api.get("oplog", as("alice"));
  assert.equal(log.status, 200, log.text);
  assert.ok(log.body._items.length >= 1);
  assert.ok(log.body._items.every((e: Json) => e.u === "alice"), log.text);
});
