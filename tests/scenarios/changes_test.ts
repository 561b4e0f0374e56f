/**
 * The change feed (`GET /<resource>/_changes`, Server-Sent Events): events in order to every
 * client, resume with Last-Event-ID, the read policy (predefined filter, soft delete,
 * projection, hidden fields, `where`), bulk writes, limits and shutdown.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q } from "../support/assertions.ts";
import { openFeed, type SseFeed } from "../support/sse.ts";
import { createLogger } from "../../src/log.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  CHANGES: true,
  DOMAIN: {
    people: {
      schema: {
        name: { type: "string" },
        age: { type: "integer" },
        secret: { type: "string" },
      },
      hidden_fields: ["secret"],
    },
    // A view of the same collection: its filter and projection decide what its feed shows.
    adults: {
      resource_methods: ["GET"],
      datasource: { source: "people", filter: { age: { $gte: 18 } } },
      schema: { name: { type: "string" }, age: { type: "integer" } },
    },
    notes: { soft_delete: true, schema: { text: { type: "string" } } },
    quiet: { changes: false, schema: { text: { type: "string" } } },
  },
};

/** Opens a feed and takes its opening `ready` event. */
async function ready(url: string, headers: Record<string, string> = {}) {
  const feed = await openFeed(url, headers);
  assert.equal(feed.status, 200, await (feed.status === 200 ? "" : feed.response.text()));
  const opening = await feed.event();
  assert.equal(opening.event, "ready");
  return { feed, opening };
}

/** The sequence number of an event id (`<boot>-<n>`). */
const seqOf = (id: string | undefined) => Number(id!.split("-")[1]);

scenario(
  "two clients receive insert, update, replace and delete in order",
  SETTINGS,
  async (api, running) => {
    const a = await ready(running.url + "people/_changes");
    const b = await ready(running.url + "people/_changes");
    assert.equal(a.feed.response.headers.get("content-type"), "text/event-stream; charset=utf-8");
    assert.ok(a.opening.id, "the opening event carries the current position");
    const created = await api.create("people", { name: "Ada", age: 36 });
    const path = `people/${created._id}`;
    const patched = await api.patch(path, { age: 37 }, { "if-match": created._etag });
    const put = await api.put(path, { name: "Ada L.", age: 37 }, {
      "if-match": patched.body._etag,
    });
    assert.equal((await api.delete(path, { "if-match": put.body._etag })).status, 204);
    for (const { feed } of [a, b]) {
      const events = await feed.events(4);
      assert.deepEqual(events.map((e) => e.event), ["insert", "update", "replace", "delete"]);
      assert.deepEqual(events.map((e) => e.data.op), ["insert", "update", "replace", "delete"]);
      assert.ok(events.every((e) => e.data._id === created._id));
      assert.deepEqual(
        events.map((e) => e.data._etag),
        [created._etag, patched.body._etag, put.body._etag, put.body._etag],
      );
      // Without ?documents the events carry no document.
      assert.ok(events.every((e) => e.data.document === undefined));
      const seqs = events.map((e) => seqOf(e.id));
      assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y));
      assert.ok(seqs[0] > seqOf(a.opening.id));
      await feed.close();
    }
  },
);

scenario(
  "documents=1 carries the document as a GET shows it: hidden fields never",
  SETTINGS,
  async (api, running) => {
    const { feed } = await ready(running.url + "people/_changes?documents=1");
    const { feed: slim } = await ready(
      running.url + `people/_changes?documents=1&projection=${q('{"age": 0}')}`,
    );
    const created = await api.create("people", { name: "Ada", age: 36, secret: "s3cret" });
    const event = await feed.event();
    assert.equal(event.event, "insert");
    assert.equal(event.data.document.name, "Ada");
    assert.equal(event.data.document.age, 36);
    assert.equal(event.data.document._id, created._id);
    assert.equal(event.data.document._etag, created._etag);
    assert.equal(event.data.document.secret, undefined);
    assert.equal(event.data.document._links.self.href, `people/${created._id}`);
    const projected = await slim.event();
    assert.equal(projected.data.document.name, "Ada");
    assert.equal(projected.data.document.age, undefined);
    assert.equal(projected.data.document.secret, undefined);
    await feed.close();
    await slim.close();
  },
);

scenario(
  "a view's feed follows its filter: leaving the view is a delete",
  SETTINGS,
  async (api, running) => {
    const { feed } = await ready(running.url + "adults/_changes?documents=1");
    const child = await api.create("people", { name: "Kid", age: 10 });
    const adult = await api.create("people", { name: "Ada", age: 36, secret: "x" });
    const inserted = await feed.event();
    assert.equal(inserted.event, "insert");
    assert.equal(inserted.data._id, adult._id);
    // The view shows only its schema fields (it shares the collection).
    assert.deepEqual(
      Object.keys(inserted.data.document).filter((k) => !k.startsWith("_")).sort(),
      ["age", "name"],
    );
    await api.patch(`people/${child._id}`, { name: "Kid 2" }, { "if-match": child._etag });
    const younger = await api.patch(`people/${adult._id}`, { age: 12 }, {
      "if-match": adult._etag,
    });
    const left = await feed.event();
    assert.equal(left.event, "delete");
    assert.equal(left.data._id, adult._id);
    assert.equal(left.data._etag, younger.body._etag);
    assert.equal(left.data.document, undefined);
    await api.patch(`people/${adult._id}`, { age: 40 }, { "if-match": younger.body._etag });
    const back = await feed.event();
    assert.equal(back.event, "update");
    assert.equal(back.data.document.age, 40);
    await feed.quiet();
    await feed.close();
  },
);

scenario("a feed's where is checked like ?where and applied", SETTINGS, async (api, running) => {
  const where = q('{"name": "Ada"}');
  const { feed } = await ready(running.url + `people/_changes?where=${where}`);
  await api.create("people", { name: "Bob", age: 50 });
  const ada = await api.create("people", { name: "Ada", age: 36 });
  const event = await feed.event();
  assert.equal(event.data._id, ada._id);
  await feed.quiet();
  await feed.close();
  for (
    const [query, fragment] of [
      // The refusal names the parameter, never the hidden field.
      [`where=${q('{"secret": "a"}')}`, "where: names a field that is not readable"],
      [`where=${q("{bad")}`, "where"],
      [`where=${q('{"$where": "1"}')}`, "$where"],
    ]
  ) {
    const res = await api.get(`people/_changes?${query}`);
    assert.equal(res.status, 400, `${query}: ${res.text}`);
    assert.ok(res.body._error.message.includes(fragment), res.body._error.message);
  }
});

scenario(
  "soft delete is a delete event; restoring is an update",
  SETTINGS,
  async (api, running) => {
    const { feed } = await ready(running.url + "notes/_changes");
    const note = await api.create("notes", { text: "x" });
    assert.equal((await api.delete(`notes/${note._id}`, { "if-match": note._etag })).status, 204);
    const deleted = await api.get(`notes/${note._id}`);
    const restored = await api.patch(`notes/${note._id}`, {}, {
      "if-match": deleted.body._etag,
    });
    assert.equal(restored.status, 200);
    const events = await feed.events(3);
    assert.deepEqual(events.map((e) => e.event), ["insert", "delete", "update"]);
    assert.equal(events[1].data._etag, deleted.body._etag);
    assert.equal(events[2].data._etag, restored.body._etag);
    await feed.close();
  },
);

scenario(
  "bulk writes and resource DELETE give one event per document",
  SETTINGS,
  async (api, running) => {
    const { feed } = await ready(running.url + "people/_changes");
    const bulk = await api.post("people", [{ name: "a" }, { name: "b" }, { name: "c" }]);
    assert.equal(bulk.status, 201);
    const ids = bulk.body._items.map((item: { _id: string }) => item._id);
    const inserts = await feed.events(3);
    assert.deepEqual(inserts.map((e) => e.event), ["insert", "insert", "insert"]);
    assert.deepEqual(inserts.map((e) => e.data._id), ids);
    assert.equal((await api.delete("people")).status, 204);
    const deletes = await feed.events(3);
    assert.deepEqual(deletes.map((e) => e.event), ["delete", "delete", "delete"]);
    assert.deepEqual(deletes.map((e) => e.data._id).sort(), [...ids].sort());
    await feed.close();
  },
);

scenario(
  "resume with Last-Event-ID gets only the missed events",
  SETTINGS,
  async (api, running) => {
    const url = running.url + "people/_changes";
    const { feed } = await ready(url);
    const first = await api.create("people", { name: "first" });
    const seen = await feed.event();
    assert.equal(seen.data._id, first._id);
    await feed.close();
    const missed = await api.create("people", { name: "missed" });
    await api.patch(`people/${first._id}`, { age: 3 }, { "if-match": first._etag });
    const resumed = await openFeed(url, { "last-event-id": seen.id! });
    const opening = await resumed.event();
    assert.equal(opening.event, "ready");
    assert.equal(opening.id, undefined, "a resume keeps the client's position");
    assert.equal(opening.data.resumed, true);
    const replay = await resumed.events(2);
    assert.deepEqual(replay.map((e) => [e.event, e.data._id]), [
      ["insert", missed._id],
      ["update", first._id],
    ]);
    await resumed.quiet();
    const live = await api.create("people", { name: "live" });
    assert.equal((await resumed.event()).data._id, live._id);
    await resumed.close();
    // The position of the opening event resumes too (nothing missed: nothing replayed).
    const { feed: latest, opening: at } = await ready(url);
    await latest.close();
    const again = await openFeed(url, { "last-event-id": at.id! });
    assert.equal((await again.event()).event, "ready");
    await again.quiet();
    await again.close();
  },
);

scenario(
  "a position outside the window, or of another run, answers a reset event",
  { ...SETTINGS, CHANGES_RETENTION: 2 },
  async (api, running) => {
    const url = running.url + "people/_changes";
    const { feed, opening } = await ready(url);
    await feed.close();
    for (const name of ["a", "b", "c"]) await api.create("people", { name });
    const old = await openFeed(url, { "last-event-id": opening.id! });
    const reset = await old.event();
    assert.equal(reset.event, "reset");
    assert.ok(reset.id, "a reset carries the current position");
    assert.match(reset.data.reason, /retention/);
    const live = await api.create("people", { name: "d" });
    assert.equal((await old.event()).data._id, live._id);
    await old.close();
    const other = await openFeed(url, { "last-event-id": "0badcafe-1" });
    assert.equal((await other.event()).event, "reset");
    await other.close();
    const bad = await api.get("people/_changes", { "last-event-id": "yesterday" });
    assert.equal(bad.status, 400);
    assert.match(bad.body._error.message, /Last-Event-ID/);
  },
);

scenario("heartbeats are comment lines", { ...SETTINGS, CHANGES_HEARTBEAT_MS: 100 }, async (
  _api,
  running,
) => {
  const { feed } = await ready(running.url + "people/_changes");
  const beat = await feed.next(2000);
  assert.equal(beat.event, "comment");
  assert.equal(beat.data, "heartbeat");
  await feed.close();
});

scenario("endpoints, methods and settings of the feed", SETTINGS, async (api, running) => {
  assert.equal((await api.get("quiet/_changes")).status, 404);
  const post = await api.post("people/_changes", {});
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET, HEAD, OPTIONS");
  const head = await api.head("people/_changes");
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-type"), "text/event-stream; charset=utf-8");
  // Compression never holds events back.
  const { feed } = await ready(running.url + "people/_changes", { "accept-encoding": "gzip" });
  assert.equal(feed.response.headers.get("content-encoding"), null);
  await feed.close();
});

scenario(
  "at most CHANGES_MAX_CONNECTIONS feeds; a closed one frees its place",
  { ...SETTINGS, CHANGES_MAX_CONNECTIONS: 1 },
  async (api, running) => {
    const { feed } = await ready(running.url + "people/_changes");
    const refused = await api.get("people/_changes");
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "5");
    await feed.close();
    const deadline = Date.now() + 5000;
    let again: SseFeed | undefined;
    while (!again && Date.now() < deadline) {
      const attempt = await openFeed(running.url + "people/_changes");
      if (attempt.status === 200) again = attempt;
      else {
        await attempt.close();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    assert.ok(again, "the place of a closed feed is freed within 5 s");
    await again.close();
  },
);

scenario("shutdown ends open feeds", SETTINGS, async (_api, running) => {
  const { feed } = await ready(running.url + "people/_changes");
  running.service.endStreams();
  await feed.end(2000);
  assert.ok(feed.ended);
});

const startup: Record<string, unknown>[] = [];

scenario(
  "the feed's source is logged at start-up",
  SETTINGS,
  (_api, running) => {
    const line = startup.map((r) => String(r.message)).findLast((m) => m.startsWith("change feed"));
    assert.ok(line, "a start-up record names the source");
    const emulated = running.kind === "embedded" || !Deno.env.get("MONGO_URI");
    // jongodb has no change streams (its gap "change-streams"): the write path serves.
    if (emulated) assert.match(line, /write path/);
    else assert.match(line, /change streams|write path/);
    return Promise.resolve();
  },
  { logger: createLogger((record) => startup.push(record), "info") },
);

const feedRecords: Record<string, unknown>[] = [];
scenario(
  "a changed document the feed's where cannot be evaluated on is not sent, and logged",
  // The expression operators past Eve's operator whitelist.
  { ...SETTINGS, MONGO_QUERY_WHITELIST: ["$divide", "$subtract"] },
  async (api, running) => {
    feedRecords.length = 0;
    // age / (age - 7): a person aged 7 makes the feed's filter divide by zero.
    const where = q('{"$expr": {"$gt": [{"$divide": ["$age", {"$subtract": ["$age", 7]}]}, 0]}}');
    const { feed } = await ready(running.url + `people/_changes?where=${where}`);
    const seven = await api.create("people", { name: "Seven", age: 7 });
    const ada = await api.create("people", { name: "Ada", age: 36 });
    const event = await feed.event();
    assert.equal(event.data._id, ada._id);
    await feed.quiet();
    await feed.close();
    const dropped = feedRecords.filter((r) => /could not be evaluated/.test(String(r.msg)));
    assert.equal(dropped.length, 1, JSON.stringify(feedRecords));
    assert.equal(dropped[0].level, "warn");
    assert.equal(dropped[0].resource, "people");
    assert.equal(dropped[0].id, seven._id);
    assert.match(String(dropped[0].error), /divide/);
  },
  { logger: { log: (level, msg, extra) => feedRecords.push({ level, msg, ...extra }) } },
);
