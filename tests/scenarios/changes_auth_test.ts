/**
 * The change feed under authentication: the same credentials and roles as a GET on the
 * resource, user-restricted access (AUTH_FIELD: each account sees its own documents'
 * changes only), and dynamic filters from `on_pre_GET` hooks.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { bearer } from "../support/auth.ts";
import { openFeed } from "../support/sse.ts";
import { Events } from "../../src/mod.ts";

const token = (name: string) => `${name}-token-0123456789`;
const as = (name: string) => bearer(token(name));

const SETTINGS = {
  AUTH_SCHEMES: ["token"],
  AUTH_USERS: [
    { username: "alice", roles: ["reader"], token: token("alice") },
    { username: "bob", roles: ["reader"], token: token("bob") },
    { username: "mallory", roles: [], token: token("mallory") },
  ],
  AUTH_FIELD: "owner",
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  CHANGES: true,
  DOMAIN: {
    notes: {
      allowed_read_roles: ["reader"],
      schema: { text: { type: "string" }, owner: { type: "string" } },
    },
  },
};

scenario(
  "a feed needs a GET's credentials and roles; each account sees its own changes",
  SETTINGS,
  async (api, running) => {
    const url = running.url + "notes/_changes";
    assert.equal((await api.get("notes/_changes")).status, 401);
    assert.equal((await api.get("notes/_changes", as("mallory"))).status, 403);
    const alice = await openFeed(url, as("alice"));
    const bob = await openFeed(url, as("bob"));
    assert.equal((await alice.event()).event, "ready");
    assert.equal((await bob.event()).event, "ready");
    const hers = await api.post("notes", { text: "hers" }, as("alice"));
    const his = await api.post("notes", { text: "his" }, as("bob"));
    assert.equal(hers.status, 201);
    assert.equal(his.status, 201);
    await api.patch(`notes/${his.body._id}`, { text: "his 2" }, {
      ...as("bob"),
      "if-match": his.body._etag,
    });
    await api.delete(`notes/${hers.body._id}`, { ...as("alice"), "if-match": hers.body._etag });
    const aliceSaw = await alice.events(2);
    assert.deepEqual(aliceSaw.map((e) => [e.event, e.data._id]), [
      ["insert", hers.body._id],
      ["delete", hers.body._id],
    ]);
    await alice.quiet();
    const bobSaw = await bob.events(2);
    assert.deepEqual(bobSaw.map((e) => [e.event, e.data._id]), [
      ["insert", his.body._id],
      ["update", his.body._id],
    ]);
    await bob.quiet();
    // Another account's documents can't be probed through the feed's where either.
    const probe = await openFeed(url + `?where=${encodeURIComponent('{"owner": "bob"}')}`, {
      ...as("alice"),
    });
    assert.equal((await probe.event()).event, "ready");
    await api.post("notes", { text: "more" }, as("bob"));
    await probe.quiet();
    for (const feed of [alice, bob, probe]) await feed.close();
  },
);

const events = new Events().on(
  "on_pre_GET_notes",
  (request: Request, lookup: Record<string, unknown>) => {
    lookup.text = request.headers.get("x-topic") ?? "none";
  },
);

scenario(
  "a dynamic filter of an on_pre_GET hook applies to the feed",
  {
    ...SETTINGS,
    AUTH_SCHEMES: [],
    AUTH_USERS: [],
    AUTH_FIELD: null,
    DOMAIN: {
      notes: { schema: { text: { type: "string" } } },
    },
  },
  async (api, running) => {
    const feed = await openFeed(running.url + "notes/_changes", { "x-topic": "cats" });
    assert.equal((await feed.event()).event, "ready");
    await api.post("notes", { text: "dogs" });
    const cats = await api.post("notes", { text: "cats" });
    const event = await feed.event();
    assert.equal(event.data._id, cats.body._id);
    await feed.quiet();
    await feed.close();
  },
  { events },
);
