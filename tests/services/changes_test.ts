/**
 * The change hub: numbering, retention (count and age), resume positions, per-client
 * queue bounds, the connection cap, and matching a change stream's events with the
 * service's own writes; plus the feed settings' checks.
 */
import assert from "node:assert/strict";
import {
  type Change,
  ChangeHub,
  type ChangeInput,
  FeedsFullError,
  parsePosition,
} from "../../src/services/changes.ts";
import { type ChangesConfig, changesConfig } from "../../src/services/changes_config.ts";
import { prepare } from "../../src/mod.ts";
import { settingsProblems } from "../support/settings.ts";

const CONFIG: ChangesConfig = {
  endpoint: "_changes",
  resources: new Map([["people", { documents: true }]]),
  retention: 5,
  retentionMs: 60_000,
  heartbeatMs: 1000,
  queueLimit: 3,
  maxConnections: 2,
  source: "auto",
};

function hub(config: Partial<ChangesConfig> = {}) {
  return new ChangeHub({ ...CONFIG, ...config }, {
    collections: new Set(["people"]),
    etagField: "_etag",
  });
}

const insert = (id: number): ChangeInput => ({
  collection: "people",
  op: "insert",
  id,
  doc: { _id: id, _etag: `e${id}` },
  before: null,
});

const everything = (change: Change) => change.op;

/** Takes every queued event without waiting. */
async function drain(subscription: { next(): Promise<unknown> }, count: number) {
  const out = [];
  for (let i = 0; i < count; i++) out.push(await subscription.next());
  return out as { change: Change; kind: string }[];
}

Deno.test("changes are numbered, fanned out per collection, and resumable", async () => {
  const h = hub();
  const start = parsePosition(h.position())!;
  const { subscription } = h.subscribe("people", { select: everything });
  const other = h.subscribe("works", { select: everything }).subscription;
  h.written([insert(1), insert(2)]);
  const events = await drain(subscription, 2);
  assert.deepEqual(events.map((e) => e.change.seq), [start.seq + 1, start.seq + 2]);
  subscription.close("client");
  other.close("client");
  h.written([insert(3)]);
  const resumed = h.subscribe("people", { select: everything, after: { ...start, seq: 2 } });
  assert.equal(resumed.reset, undefined);
  const replay = await drain(resumed.subscription, 1);
  assert.equal(replay[0].change.id, 3);
  resumed.subscription.close("client");
});

Deno.test("a position outside the retention window, or of another run, is a reset", () => {
  const h = hub({ retention: 2 });
  for (let i = 1; i <= 4; i++) h.written([insert(i)]);
  const boot = parsePosition(h.position())!.boot;
  assert.match(
    h.subscribe("people", { select: everything, after: { boot, seq: 1 } }).reset!,
    /retention/,
  );
  // Changes 3 and 4 are retained: a client that saw 2 resumes.
  const ok = h.subscribe("people", { select: everything, after: { boot, seq: 2 } });
  assert.equal(ok.reset, undefined);
  ok.subscription.close("client");
  const other = h.subscribe("people", { select: everything, after: { boot: "00000000", seq: 2 } });
  assert.match(other.reset!, /restarted/);
  other.subscription.close("client");
  assert.equal(parsePosition("nonsense"), null);
  assert.deepEqual(parsePosition("0123abcd-12"), { boot: "0123abcd", seq: 12 });
});

Deno.test("retention also ends by age", () => {
  const h = hub({ retentionMs: 1 });
  h.written([insert(1)]);
  const boot = parsePosition(h.position())!.boot;
  const wait = Date.now() + 5;
  while (Date.now() < wait) { /* let the change age */ }
  assert.match(
    h.subscribe("people", { select: everything, after: { boot, seq: 0 } }).reset!,
    /retention/,
  );
});

Deno.test("a client whose queue is full is dropped; replayed events do not count", async () => {
  const h = hub({ retention: 100, queueLimit: 3 });
  const slow = h.subscribe("people", { select: everything }).subscription;
  const fast = h.subscribe("people", { select: everything }).subscription;
  for (let i = 1; i <= 3; i++) {
    h.written([insert(i)]);
    await fast.next();
  }
  assert.equal(slow.closed, undefined);
  h.written([insert(4)]);
  assert.equal(slow.closed, "behind");
  assert.equal(await slow.ended, "behind");
  assert.equal(await slow.next(), null);
  assert.equal((await fast.next())!.change.id, 4);
  fast.close("client");
  // A resume replays 4 events (more than the limit), then takes 3 live ones before a drop.
  const boot = parsePosition(h.position())!.boot;
  const resumed = h.subscribe("people", { select: everything, after: { boot, seq: 0 } });
  for (let i = 5; i <= 7; i++) h.written([insert(i)]);
  assert.equal(resumed.subscription.closed, undefined);
  h.written([insert(8)]);
  assert.equal(resumed.subscription.closed, "behind");
});

Deno.test("at most maxConnections feeds; closing frees a place", () => {
  const h = hub({ maxConnections: 1 });
  const one = h.subscribe("people", { select: everything }).subscription;
  assert.throws(() => h.subscribe("people", { select: everything }), FeedsFullError);
  one.close("client");
  assert.equal(h.connections, 0);
  h.subscribe("people", { select: everything }).subscription.close("client");
});

Deno.test("stream source: the write path is not published but tells the state before", async () => {
  const h = hub();
  h.source = "stream";
  const { subscription } = h.subscribe("people", { select: everything });
  const before = { _id: 1, _etag: "e1", owner: "alice" };
  h.written([{ collection: "people", op: "delete", id: 1, doc: null, before }]);
  h.written([{ collection: "people", op: "update", id: 2, doc: { _id: 2, _etag: "b" }, before }]);
  // The stream reports the same writes, without pre-images.
  h.publish({ collection: "people", op: "delete", id: 1, doc: null });
  h.publish({ collection: "people", op: "update", id: 2, doc: { _id: 2, _etag: "b" } });
  h.publish({ collection: "people", op: "update", id: 3, doc: { _id: 3, _etag: "c" } });
  const events = await drain(subscription, 3);
  assert.deepEqual(events[0].change.before, before);
  assert.deepEqual(events[1].change.before, before);
  assert.equal(events[2].change.before, undefined, "another writer's change: unknown");
  subscription.close("client");
});

Deno.test("a reset closes the feeds and refuses positions from before it", () => {
  const h = hub();
  h.written([insert(1)]);
  const position = parsePosition(h.position())!;
  const { subscription } = h.subscribe("people", { select: everything });
  h.reset();
  assert.equal(subscription.closed, "shutdown");
  assert.match(h.subscribe("people", { select: everything, after: position }).reset!, /lost/);
});

const problems = settingsProblems;

Deno.test("feed settings are checked", () => {
  assert.deepEqual(problems({ CHANGES_ENDPIONT: "x" }), [
    "CHANGES_ENDPIONT: unknown setting (did you mean CHANGES_ENDPOINT?)",
  ]);
  const bad = problems({
    CHANGES_ENDPOINT: "a/b",
    CHANGES_QUEUE_LIMIT: 0,
    CHANGES_SOURCE: "oplog",
    CHANGES_HEARTBEAT_MS: 60_000,
    OPLOG: true,
    DOMAIN: {
      stats: { changes: true, datasource: { aggregation: { pipeline: [] } } },
      hidden: { changes: true, internal_resource: true },
      oplog: { changes: true },
      people: { chnages: true },
    },
  });
  for (
    const fragment of [
      "CHANGES_ENDPOINT: must be one path segment",
      "CHANGES_QUEUE_LIMIT: must be at least 1",
      'CHANGES_SOURCE: must be "auto" or "writes"',
      "CHANGES_HEARTBEAT_MS: must be below 60000 (a reverse proxy's default read timeout",
      "DOMAIN.stats.changes: an aggregation endpoint has no feed",
      "DOMAIN.hidden.changes: an internal resource has no feed",
      "DOMAIN.oplog.changes: the operation log has no feed",
      "DOMAIN.people.chnages: unknown resource key (did you mean changes?)",
    ]
  ) assert.ok(bad.some((p) => p.includes(fragment)), `${fragment} missing from ${bad}`);
});

Deno.test("feeds are off by default, on per resource or globally", () => {
  const { settings } = prepare({
    DOMAIN: { a: {}, b: { changes: true, changes_documents: false } },
  }, { env: false });
  const config = changesConfig(settings, []);
  assert.deepEqual([...config.resources], [["b", { documents: false }]]);
  const all = changesConfig(
    prepare({ CHANGES: true, DOMAIN: { a: {}, b: { changes: false } } }, {
      env: false,
    }).settings,
    [],
  );
  assert.deepEqual([...all.resources.keys()], ["a"]);
});
