/**
 * The group commit of the embedded store: writes sharing one transaction fail alone. A
 * one-statement write needs no savepoint (a failed statement leaves nothing); others run
 * in one.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { setImmediate } from "node:timers";
import { Database } from "../../src/store/embedded/sqlite.ts";
import { inFlight, SEVERAL_CLIENTS_MS } from "../../src/util/in_flight.ts";
import { withPeopleService } from "../support/embedded.ts";

Deno.test("group commit: a failing write leaves the others of its group, with or without a savepoint", async () => {
  const dir = await Deno.makeTempDir({ prefix: "group_commit_test_" });
  try {
    const db = Database.open(dir);
    const insert = (id: string) => db.stmts.insertDoc.run("c", id, `{"_id":"${id}"}`);
    // A failing write throws at once; the others are acknowledged once their group is synced.
    const write = (fn: () => void, options?: { oneStatement: boolean }) => {
      try {
        return db.grouped(fn, options).then(() => "ok");
      } catch {
        return Promise.resolve("failed");
      }
    };
    const settled = [
      write(() => insert("a"), { oneStatement: true }),
      // The same key again: the statement fails, "a" stays.
      write(() => insert("a"), { oneStatement: true }),
      // Two statements, the second failing: the first is undone with it.
      write(() => {
        insert("b");
        insert("a");
      }),
      write(() => insert("c"), { oneStatement: true }),
      // A document and its oplog entry in one two-row statement, the second row failing:
      // neither is stored.
      write(() => db.stmts.insertTwoDocs.run("c", "d", `{"_id":"d"}`, "c", "a", "{}"), {
        oneStatement: true,
      }),
      write(() => db.stmts.insertTwoDocs.run("c", "e", `{"_id":"e"}`, "log", "e", "{}"), {
        oneStatement: true,
      }),
    ];
    assert.deepEqual(await Promise.all(settled), ["ok", "failed", "failed", "ok", "failed", "ok"]);
    db.close();
    const raw = new DatabaseSync(`${dir}/store.sqlite`);
    const ids = raw.prepare("SELECT coll || ':' || id AS k FROM docs ORDER BY k").all().map((r) =>
      r.k
    );
    raw.close();
    assert.deepEqual(ids, ["c:a", "c:c", "c:e", "log:e"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("group commit: a group per turn of the event loop, committed while others sync: every write stored, the WAL checkpointed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "group_commit_test_" });
  try {
    const db = Database.open(dir);
    const body = JSON.stringify("x".repeat(40_000));
    const acknowledged: Promise<void>[] = [];
    // 300 writes of 40 KB (12 MB, three times the WAL size that calls for a checkpoint), one
    // per turn of the event loop: a group per turn, committed while earlier ones are syncing,
    // so that syncs keep running all along.
    for (let n = 0; n < 300; n++) {
      acknowledged.push(db.grouped(() => db.stmts.insertDoc.run("c", `d${n}`, body)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(acknowledged);
    // A checkpoint leaves the file at its size until the next COMMIT starts the WAL over from
    // its beginning (cutting the file back to 4 MiB): two more writes, one after the other,
    // get there even when the last checkpoint ran only once the load was over (slow syncs).
    for (let n = 0; n < 2; n++) await db.grouped(() => db.stmts.insertDoc.run("c", `e${n}`, "{}"));
    const wal = Deno.statSync(`${dir}/store.sqlite-wal`).size;
    assert.ok(wal < 8 * 1024 * 1024, `the WAL was checkpointed under a steady load (${wal} bytes)`);
    // Checkpoints leave the file at its size: later syncs write over blocks it has (a sync of
    // writes that grow a file also records its new size and blocks, and costs more).
    assert.ok(wal >= 4 * 1024 * 1024, `the WAL file was not cut short (${wal} bytes)`);
    db.close();
    const raw = new DatabaseSync(`${dir}/store.sqlite`);
    const count = raw.prepare("SELECT count(*) AS n FROM docs").get()!.n;
    raw.close();
    assert.equal(count, 302);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("group commit: a write made while no sync runs commits at once; writes made during its sync share the next group", async () => {
  const dir = await Deno.makeTempDir({ prefix: "group_commit_test_" });
  try {
    const db = Database.open(dir);
    const insert = (id: string) => () => db.stmts.insertDoc.run("c", id, `{"_id":"${id}"}`);
    // Nothing syncing: the write's COMMIT is written before grouped() returns, and its sync
    // runs while the caller goes on.
    const first = db.grouped(insert("a"), { oneStatement: true });
    assert.equal(db.db.isTransaction, false, "the first write committed at once");
    // Its sync is running: these join one open group, committed when that sync ends.
    const later = [
      db.grouped(insert("b"), { oneStatement: true }),
      db.grouped(insert("c")),
    ];
    assert.equal(db.db.isTransaction, true, "later writes wait in the open group");
    await Promise.all([first, ...later]);
    assert.equal(db.db.isTransaction, false);
    // A write that fails while opening a group with no sync running leaves no open group.
    assert.throws(() => db.grouped(insert("a"), { oneStatement: true }));
    assert.equal(db.db.isTransaction, false, "a failed first write leaves no group open");
    await db.grouped(insert("d"), { oneStatement: true });
    db.close();
    const raw = new DatabaseSync(`${dir}/store.sqlite`);
    const ids = raw.prepare("SELECT id FROM docs ORDER BY id").all().map((r) => r.id);
    raw.close();
    assert.deepEqual(ids, ["a", "b", "c", "d"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Counts the WAL syncs made on the main thread and off it while `fn` runs. */
async function countingSyncs(
  fn: (counts: { here: number; off: number }) => Promise<void>,
  delayMs = 0,
): Promise<void> {
  const proto = Deno.FsFile.prototype;
  const { syncDataSync, syncData } = proto;
  const counts = { here: 0, off: 0 };
  proto.syncDataSync = function (this: Deno.FsFile) {
    counts.here++;
    // A slow disk: the main thread is held as long as such a sync would hold it.
    const until = performance.now() + delayMs;
    while (performance.now() < until) { /* waiting for the disk */ }
    return syncDataSync.call(this);
  };
  proto.syncData = function (this: Deno.FsFile) {
    counts.off++;
    return syncData.call(this);
  };
  try {
    await fn(counts);
  } finally {
    proto.syncDataSync = syncDataSync;
    proto.syncData = syncData;
  }
}

Deno.test("group commit: a write of the only request being handled syncs on the main thread; with others, or none, off it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "group_commit_test_" });
  const before = { ...inFlight };
  Object.assign(inFlight, { severalUntil: 0, multiplexed: false });
  try {
    const db = Database.open(dir);
    const insert = (id: string) => () => db.stmts.insertDoc.run("c", id, `{"_id":"${id}"}`);
    await countingSyncs(async (counts) => {
      inFlight.count = 1;
      const alone = db.grouped(insert("a"), { oneStatement: true });
      assert.deepEqual(counts, { here: 1, off: 0 }, "synced before grouped() returned");
      await alone;
      inFlight.count = 2;
      await db.grouped(insert("b"), { oneStatement: true });
      assert.deepEqual(counts, { here: 1, off: 1 }, "another request is being handled");
      inFlight.count = 0;
      await db.grouped(insert("c"), { oneStatement: true });
      assert.deepEqual(counts, { here: 1, off: 2 }, "a write outside any request");
      // A server whose connections may carry several clients at once (HTTP/2).
      Object.assign(inFlight, { count: 1, multiplexed: true });
      await db.grouped(insert("h2"), { oneStatement: true });
      assert.deepEqual(counts, { here: 1, off: 3 }, "requests multiplexed on connections");
      inFlight.multiplexed = false;
    });
    // A slow disk: once syncs have lately taken longer than the bound, a lone request's
    // write syncs off the main thread too.
    await countingSyncs(async (counts) => {
      inFlight.count = 1;
      for (let i = 0; i < 8; i++) await db.grouped(insert(`slow${i}`), { oneStatement: true });
      assert.ok(counts.here >= 1 && counts.here < 8, `on the main thread ${counts.here} of 8`);
      assert.equal(counts.here + counts.off, 8);
    }, 8);
    db.close();
    const raw = new DatabaseSync(`${dir}/store.sqlite`);
    const n = raw.prepare("SELECT count(*) AS n FROM docs").get()?.n;
    raw.close();
    assert.equal(n, 12);
  } finally {
    Object.assign(inFlight, before);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("group commit, through HTTP: a lone client's POST syncs on the main thread; concurrent POSTs, or POSTs from several connections, off it; every one is stored", () =>
  withPeopleService({ log() {} }, async (service) => {
    const post = (name: string, port?: number) =>
      service.fetch(
        new Request("http://localhost/people", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name }),
        }),
        port === undefined ? undefined : {
          remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port },
          completed: Promise.resolve(),
        },
      ).then((res) => res.status);
    const before = { ...inFlight };
    // A first request from this test's client: the last connection seen is no longer that of
    // a test run before in the same process (which would count as a second client).
    await (await service.fetch(new Request("http://localhost/people"))).arrayBuffer();
    Object.assign(inFlight, { severalUntil: 0, multiplexed: false });
    await countingSyncs(async (counts) => {
      assert.equal(await post("alone"), 201);
      assert.deepEqual(counts, { here: 1, off: 0 });
      assert.deepEqual(await Promise.all(["a", "b", "c", "d"].map(post)), [201, 201, 201, 201]);
      assert.equal(counts.here, 1, "no sync on the main thread while others are handled");
      assert.ok(counts.off >= 1);
      // One request at a time, but from two connections in turn: several clients, whose
      // requests may be waiting unread; off the main thread too.
      const off = counts.off;
      for (const port of [50001, 50002, 50001]) {
        assert.equal(await post(`from ${port}`, port), 201);
      }
      assert.deepEqual(counts, { here: 1, off: off + 3 });
      // One connection alone, once the others are long gone: on the main thread again.
      await new Promise((resolve) => setTimeout(resolve, SEVERAL_CLIENTS_MS + 20));
      assert.equal(await post("later", 50001), 201);
      assert.deepEqual(counts, { here: 2, off: off + 3 });
    });
    Object.assign(inFlight, { severalUntil: before.severalUntil, multiplexed: before.multiplexed });
    const res = await service.fetch(new Request("http://localhost/people"));
    assert.equal((await res.json())._meta.total, 9);
  }));
