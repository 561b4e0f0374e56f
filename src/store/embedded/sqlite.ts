/**
 * The SQLite file behind the embedded store: opening with an exclusive lock, the schema,
 * prepared statements and transactions.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { join } from "node:path";
import { setImmediate } from "node:timers";
import { DuplicateKeyError, StoreError } from "../store.ts";
import { servingOneClient } from "../../util/in_flight.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS collections (name TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS docs (
  seq INTEGER PRIMARY KEY,
  coll TEXT NOT NULL,
  id TEXT NOT NULL,
  body TEXT NOT NULL,
  UNIQUE (coll, id)
);
-- Loading a collection reads its rows in insertion order: without this index SQLite
-- finds them through (coll, id) and sorts them in a temporary tree.
CREATE INDEX IF NOT EXISTS docs_order ON docs (coll, seq);
CREATE TABLE IF NOT EXISTS indexes (
  coll TEXT NOT NULL,
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  PRIMARY KEY (coll, name)
);
CREATE TABLE IF NOT EXISTS files (
  id TEXT PRIMARY KEY,
  filename TEXT NOT NULL,
  content_type TEXT NOT NULL,
  length INTEGER NOT NULL,
  upload_date INTEGER NOT NULL,
  metadata TEXT,
  data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS file_chunks (
  file_id TEXT NOT NULL,
  n INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (file_id, n)
) WITHOUT ROWID;
`;

const DB_FILE = "store.sqlite";
/** `PRAGMA user_version` of databases whose `$numberLong` text is always a Long. */
const EXACT_LONGS = 1;

/**
 * The text format of the database (its `user_version`): a database with nothing stored
 * yet is marked with the current one; a database with data and no mark was written by an
 * earlier version and keeps format 0.
 */
function textFormat(db: DatabaseSync): number {
  const version = Number(
    (db.prepare("PRAGMA user_version").get() as Record<string, unknown>)
      .user_version,
  );
  if (version > 0) return version;
  const stored = db.prepare(
    "SELECT EXISTS (SELECT 1 FROM docs) OR EXISTS (SELECT 1 FROM files) AS n",
  )
    .get() as Record<string, unknown>;
  if (Number(stored.n) !== 0) return 0;
  db.exec(`PRAGMA user_version = ${EXACT_LONGS}`);
  return EXACT_LONGS;
}
/**
 * WAL size that triggers a checkpoint, and the size SQLite cuts the WAL file back to when it
 * starts over from the beginning after one (`journal_size_limit`).
 */
const CHECKPOINT_BYTES = 4 * 1024 * 1024;
/**
 * WAL syncs that may run at once. When a sync takes long (a busy disk), the group gathered
 * meanwhile is committed and synced without waiting for it to end: the disk takes the next
 * flush while the previous one is in progress, and the writes of the earlier group are
 * answered (and their clients send more work) while the later group's sync still runs, so
 * the process does not sit idle with every write waiting on one slow sync.
 */
const SYNCS_IN_FLIGHT = 2;
/**
 * How long a sync runs before a second may start. Below it, the group waits for the sync
 * to end, as with one sync at a time: on a quick disk a group then gathers every write of a
 * whole sync, and commits and syncs stay few (each costs CPU time: the WAL frames written
 * again, the sync itself).
 */
const SECOND_SYNC_AFTER_MS = 2;
/**
 * A WAL sync runs on the main thread, instead of off it, when that delays nobody: no sync
 * is running, the process is serving one client (one request being handled, and lately
 * from one connection only: see src/util/in_flight.ts), and syncs have lately taken less
 * than this many ms. A sync off the main thread hands the work to another thread and its
 * end back, and each hand-off wakes a thread: measured on a 2-core VM, 0.2-0.3 ms over an
 * fdatasync of 0.3-0.4, the better part of a lone POST's latency. Blocking is bounded by
 * the recent syncs' time; a request arriving meanwhile waits at most that long. The count
 * alone is not enough: under a load of many connections, a sync on the main thread keeps
 * the others' requests unread, so each write found itself alone and the writes went one
 * by one (a third of the throughput). Writes made outside any request (the store used
 * directly, background work) always sync off the main thread.
 */
const INLINE_SYNC_MAX_MS = 2;
const PID_FILE = "store.pid";

/** Prepared statements, compiled once per open database. */
export interface Statements {
  insertCollection: StatementSync;
  listCollections: StatementSync;
  deleteCollection: StatementSync;
  insertDoc: StatementSync;
  /** Two rows in one statement (a document and its oplog entry): all or nothing. */
  insertTwoDocs: StatementSync;
  /**
   * A stored document's new text and a new row beside it (an edit and its oplog entry) in one
   * statement: all or nothing, so with no savepoint around it. The caller has checked that
   * the first row exists and the second does not (the loaded collections mirror the table).
   */
  replaceAndInsert: StatementSync;
  /** Three rows in one statement (a document, its oplog entry and its version copy). */
  insertThreeDocs: StatementSync;
  /** {@link replaceAndInsert} with two new rows beside the stored one (its version copy too). */
  replaceAndInsertTwo: StatementSync;
  updateDoc: StatementSync;
  deleteDoc: StatementSync;
  deleteDocs: StatementSync;
  loadIndexes: StatementSync;
  /** Every collection's TTL indexes (`expireAfterSeconds`), for the TTL sweep. */
  ttlIndexes: StatementSync;
  insertIndex: StatementSync;
  deleteIndexes: StatementSync;
  deleteIndex: StatementSync;
}

/** A write of the open group waiting for the group's COMMIT. */
interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/** Why `dir` cannot be the data directory, in the user's terms; null when it can. */
function pathProblem(dir: string, error: unknown): string | null {
  if (error instanceof Deno.errors.NotCapable) {
    return `data directory ${dir}: this process may not read and write it ` +
      "(deno run needs --allow-read and --allow-write for it; deno task start gives both)";
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return `data directory ${dir}: permission denied (the user running the service ` +
      "must be able to create, read and write it: check its owner and mode)";
  }
  if (error instanceof Deno.errors.AlreadyExists || error instanceof Deno.errors.NotADirectory) {
    return `data directory ${dir}: a part of that path is a file, not a directory`;
  }
  return null;
}

/** Creates the data directory if needed; a path that cannot be one is a StoreError. */
function prepareDirectory(dir: string) {
  try {
    const info = Deno.statSync(dir);
    if (!info.isDirectory) {
      throw new StoreError(`data directory ${dir} exists and is not a directory`);
    }
    return;
  } catch (error) {
    if (error instanceof StoreError) throw error;
    if (!(error instanceof Deno.errors.NotFound)) {
      const problem = pathProblem(dir, error);
      if (problem) throw new StoreError(problem, { cause: error });
    }
  }
  try {
    Deno.mkdirSync(dir, { recursive: true });
  } catch (error) {
    const problem = pathProblem(dir, error);
    throw new StoreError(problem ?? `cannot create data directory ${dir}: ${error}`, {
      cause: error,
    });
  }
}

/** Why the service cannot write in `dir` (tried with a scratch file), or null. */
function writeProblem(dir: string): string | null {
  const probe = join(dir, `.write-check-${Deno.pid}`);
  try {
    Deno.writeTextFileSync(probe, "");
    Deno.removeSync(probe);
    return null;
  } catch (error) {
    return pathProblem(dir, error);
  }
}

/** An open, exclusively locked data directory. */
export class Database {
  readonly stmts: Statements;
  #closed = false;
  /** Writes of the open group commit (null: no group transaction open). */
  #group: Waiter[] | null = null;
  /** Called when a group commit fails: memory holds writes the file does not. */
  onGroupFailure: (() => void) | null = null;
  /** Committed writes waiting for the next sync of the WAL. */
  #unsynced: Waiter[] = [];
  /** WAL syncs in progress (at most {@link SYNCS_IN_FLIGHT}). */
  #syncing = 0;
  /** Whether the WAL is due for a checkpoint (see #checkpoint); cleared by one that completes. */
  #walFull = false;
  /** The WAL file's size when last looked at (see #checkpoint). */
  #walSize = 0;
  /** How long syncs of the WAL take lately, in ms (a moving average; see #tookMs). */
  #syncMs = 0;
  /** When the latest WAL sync started (`performance.now()`). */
  #syncStarted = 0;
  /** The timer that starts a second sync for the open group, if set. */
  #secondSync: ReturnType<typeof setTimeout> | undefined;
  /** The WAL file, opened for syncing it off the main thread. */
  #wal: Deno.FsFile | null = null;
  /** The savepoint of one write inside the group (prepared once: exec parses every time). */
  readonly #savepoint: { begin: StatementSync; release: StatementSync; undo: StatementSync };
  /** The group transaction's own statements, prepared once for the same reason. */
  readonly #groupSql: {
    begin: StatementSync;
    commit: StatementSync;
    unsynced: StatementSync;
    synced: StatementSync;
  };

  /**
   * Whether stored `{"$numberLong": ...}` text always means a Long (see the codec's
   * DecodeOptions): true for databases this version created (user_version 1 or more),
   * false for older ones, whose text cannot tell a large plain number from a Long.
   */
  readonly exactLongs: boolean;

  private constructor(readonly db: DatabaseSync, readonly dir: string) {
    db.exec(SCHEMA);
    this.exactLongs = textFormat(db) >= EXACT_LONGS;
    const p = (sql: string) => db.prepare(sql);
    this.#savepoint = {
      begin: p("SAVEPOINT w"),
      release: p("RELEASE w"),
      undo: p("ROLLBACK TO w"),
    };
    this.#groupSql = {
      begin: p("BEGIN"),
      commit: p("COMMIT"),
      // NORMAL, not OFF: no sync at COMMIT (the group's sync follows it), but SQLite still
      // syncs the WAL's new header before the first frames when the WAL starts over after a
      // checkpoint, as it needs to (frames written after a header the disk may not have yet).
      unsynced: p("PRAGMA synchronous = NORMAL"),
      synced: p("PRAGMA synchronous = FULL"),
    };
    this.stmts = {
      insertCollection: p("INSERT OR IGNORE INTO collections (name) VALUES (?)"),
      listCollections: p("SELECT name FROM collections ORDER BY name"),
      deleteCollection: p("DELETE FROM collections WHERE name = ?"),
      insertDoc: p("INSERT INTO docs (coll, id, body) VALUES (?, ?, ?)"),
      insertTwoDocs: p("INSERT INTO docs (coll, id, body) VALUES (?, ?, ?), (?, ?, ?)"),
      // The existing row is updated in place (it keeps its `seq`, the natural order).
      replaceAndInsert: p(
        "INSERT INTO docs (coll, id, body) VALUES (?, ?, ?), (?, ?, ?) " +
          "ON CONFLICT (coll, id) DO UPDATE SET body = excluded.body",
      ),
      insertThreeDocs: p(
        "INSERT INTO docs (coll, id, body) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?)",
      ),
      replaceAndInsertTwo: p(
        "INSERT INTO docs (coll, id, body) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?) " +
          "ON CONFLICT (coll, id) DO UPDATE SET body = excluded.body",
      ),
      updateDoc: p("UPDATE docs SET body = ? WHERE coll = ? AND id = ?"),
      deleteDoc: p("DELETE FROM docs WHERE coll = ? AND id = ?"),
      deleteDocs: p("DELETE FROM docs WHERE coll = ?"),
      loadIndexes: p("SELECT spec FROM indexes WHERE coll = ? ORDER BY rowid"),
      ttlIndexes: p(
        "SELECT coll, spec FROM indexes WHERE spec LIKE '%\"expireAfterSeconds\"%' ORDER BY rowid",
      ),
      insertIndex: p("INSERT OR REPLACE INTO indexes (coll, name, spec) VALUES (?, ?, ?)"),
      deleteIndexes: p("DELETE FROM indexes WHERE coll = ?"),
      deleteIndex: p("DELETE FROM indexes WHERE coll = ? AND name = ?"),
    };
  }

  /**
   * Opens (creating if needed) the database in `dir` and locks it for this process.
   * Throws StoreError naming the holder when another process has it open.
   */
  static open(dir: string): Database {
    prepareDirectory(dir);
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(join(dir, DB_FILE));
      db.exec("PRAGMA busy_timeout = 50");
      // EXCLUSIVE before WAL: the WAL index then lives in heap memory and the lock taken
      // by the first write transaction is held until close.
      db.exec("PRAGMA locking_mode = EXCLUSIVE");
      db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = FULL");
      // Each write of a group runs in a savepoint, whose journal of the pages it changes
      // would otherwise go to a temporary file once past 64 KiB, which it is once the
      // trees are three levels deep (some 16,000 documents): six more write calls per
      // document, several times the cost of the write's own statements. The journal holds
      // the pages one write changes and is emptied when the write ends.
      db.exec("PRAGMA temp_store = MEMORY");
      // Checkpoints run from flush() with full sync (see #checkpoint).
      db.exec("PRAGMA wal_autocheckpoint = 0");
      // After a checkpoint the WAL starts over from its beginning, writing over the file's
      // blocks; a WAL grown past this size by one large transaction is cut back to it then.
      db.exec(`PRAGMA journal_size_limit = ${CHECKPOINT_BYTES}`);
      db.exec("BEGIN EXCLUSIVE; COMMIT");
    } catch (err) {
      try {
        db?.close();
      } catch { /* already failing */ }
      if (/locked|busy/i.test(String((err as Error)?.message))) {
        throw new StoreError(
          `data directory ${dir} is in use by another process${holder(dir)}`,
          { cause: err },
        );
      }
      const unwritable = writeProblem(dir);
      throw new StoreError(
        unwritable ?? `cannot open data directory ${dir}: ${(err as Error)?.message}`,
        { cause: err },
      );
    }
    // Informational only: the SQLite lock is what excludes, and dies with the process.
    try {
      Deno.writeTextFileSync(join(dir, PID_FILE), String(Deno.pid));
    } catch { /* read-only directory: the message just lacks the pid */ }
    return new Database(db, dir);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Throws StoreError once the database is closed. */
  assertOpen(): void {
    if (this.#closed) throw new StoreError("embedded store is closed");
  }

  /**
   * Group commit: runs `fn` now, inside a savepoint of the open group transaction (all of
   * its writes or none; a throw rolls back just this write and is rethrown). The returned
   * promise settles once the group's COMMIT is on disk: acknowledge the write only then.
   *
   * A write made while no sync of the WAL is running commits at once and starts its sync:
   * the disk works while the request finishes (its memory update, its answer). While a sync
   * runs, writes join the open group, which commits when that sync ends (or once it has run
   * {@link SECOND_SYNC_AFTER_MS}: a second sync then takes the group): under load one COMMIT
   * and one sync serve every write that arrived during the previous sync. (Waiting for the
   * end of the event loop's turn instead, for writes read in the same turn to join, made an
   * idle service's sequential write about 0.1 ms slower, the time of its memory update.)
   * The COMMIT itself writes the WAL without syncing; the WAL is then synced (fdatasync)
   * off the main thread, one sync covering every group committed before it started, so the
   * process keeps serving while the disk works. Checkpoints, which copy the WAL into the
   * database file, run with full sync between groups (see #checkpoint).
   */
  grouped(fn: () => void, options: { oneStatement?: boolean } = {}): Promise<void> {
    this.assertOpen();
    /** Whether this write commits (and syncs) as soon as it has run. */
    let now = false;
    if (this.#group === null) {
      // The safety level cannot change inside a transaction.
      this.#groupSql.unsynced.run();
      this.#groupSql.begin.run();
      this.#group = [];
      // No sync running: this write commits at once. A sync that has run long: after this
      // turn of the event loop, with every request already read (a zero-delay setTimeout
      // waits 1-4 ms under Deno), a second sync takes the group. Otherwise the running sync
      // commits it when it ends, or a second sync takes it once that one has run long.
      const group = this.#group;
      if (this.#syncing === 0) now = true;
      else if (this.#canSync()) setImmediate(() => this.#canSync() && this.flush());
      else if (this.#mayPipeline()) {
        // Never below zero: a negative delay is a runtime warning on stderr.
        const wait = Math.max(0, SECOND_SYNC_AFTER_MS - (performance.now() - this.#syncStarted));
        this.#secondSync = setTimeout(() => {
          this.#secondSync = undefined;
          if (this.#group === group && this.#canSync()) this.flush();
        }, wait);
      }
    }
    try {
      if (options.oneStatement) {
        // A failing statement leaves no trace of itself: no savepoint is needed around it.
        try {
          fn();
        } catch (err) {
          throw failure(err);
        }
      } else this.#inSavepoint(fn);
    } catch (err) {
      // The group may hold nothing else: it is committed all the same (an empty COMMIT).
      if (now) this.flush();
      throw err;
    }
    const group = this.#group;
    const done = new Promise<void>((resolve, reject) => group.push({ resolve, reject }));
    if (now) this.flush();
    return done;
  }

  /** Runs `fn` all or nothing inside the open group. */
  #inSavepoint(fn: () => void): void {
    const savepoint = this.#savepoint;
    savepoint.begin.run();
    try {
      fn();
      savepoint.release.run();
    } catch (err) {
      try {
        savepoint.undo.run();
        savepoint.release.run();
      } catch { /* the group is failing: flush reports it */ }
      throw failure(err);
    }
  }

  /** Commits the open group (if any) and settles its writes once synced. */
  flush(): void {
    this.#commit();
    this.#sync();
  }

  /** Commits the open group (if any): its writes wait for the next sync. */
  #commit(): void {
    const group = this.#group;
    if (group === null) return;
    this.#group = null;
    clearTimeout(this.#secondSync);
    this.#secondSync = undefined;
    try {
      this.#groupSql.commit.run();
    } catch (err) {
      try {
        this.db.exec("ROLLBACK");
      } catch { /* no transaction left to roll back */ }
      this.#groupSql.synced.run();
      this.onGroupFailure?.();
      const error = failure(err);
      for (const w of group) w.reject(error);
      return;
    }
    this.#groupSql.synced.run();
    for (const w of group) this.#unsynced.push(w);
  }

  /**
   * Whether another WAL sync may start now: none runs, or fewer than {@link SYNCS_IN_FLIGHT}
   * and the latest has run {@link SECOND_SYNC_AFTER_MS}; none at all while any runs when the
   * WAL is due for a checkpoint (which runs only once no sync does, so the
   * WAL cannot grow without bound under a steady load).
   */
  #canSync(): boolean {
    return this.#syncing === 0 ||
      (this.#mayPipeline() && performance.now() - this.#syncStarted >= SECOND_SYNC_AFTER_MS);
  }

  /** Whether a sync may start while others run (once the latest has run long enough). */
  #mayPipeline(): boolean {
    return this.#syncing < SYNCS_IN_FLIGHT && !this.#walFull;
  }

  /**
   * Starts a WAL sync for the committed, unsynced writes when one may start. A sync covers
   * every write committed before it started (each group's COMMIT has written its frames to
   * the file by then), so each batch is settled by its own sync, whatever the order in
   * which syncs running at once end.
   */
  #sync(): void {
    if (!this.#canSync() || this.#unsynced.length === 0) return;
    const batch = this.#unsynced;
    this.#unsynced = [];
    let wal: Deno.FsFile;
    try {
      wal = this.#wal ??= Deno.openSync(join(this.dir, `${DB_FILE}-wal`), { read: true });
    } catch (err) {
      for (const w of batch) w.reject(failure(err));
      return;
    }
    if (this.#syncing === 0 && this.#syncMs < INLINE_SYNC_MAX_MS && servingOneClient()) {
      this.#syncHere(wal, batch);
      return;
    }
    this.#syncing++;
    const started = this.#syncStarted = performance.now();
    wal.syncData().then(
      () => {
        for (const w of batch) w.resolve();
      },
      (err) => {
        for (const w of batch) w.reject(failure(err));
      },
    ).finally(() => {
      this.#syncing--;
      // Off the main thread the time also holds the wait for the event loop's next turn: it
      // may tell the disk is quicker than thought, never that it is slower.
      const took = performance.now() - started;
      if (took < this.#syncMs) this.#tookMs(took);
      if (this.#closed) {
        if (this.#syncing === 0) this.#closeWal();
        return;
      }
      this.#commit();
      this.#checkpoint();
      this.#sync();
    });
  }

  /**
   * Syncs the WAL on the main thread and settles `batch`: see {@link INLINE_SYNC_MAX_MS}
   * for when. Nothing can join a group meanwhile, so nothing is left to commit after it.
   */
  #syncHere(wal: Deno.FsFile, batch: Waiter[]): void {
    const started = performance.now();
    try {
      wal.syncDataSync();
      for (const w of batch) w.resolve();
    } catch (err) {
      for (const w of batch) w.reject(failure(err));
    }
    this.#tookMs(performance.now() - started);
    this.#checkpoint();
  }

  /** Records how long a sync took (a moving average of the latest few). */
  #tookMs(ms: number): void {
    this.#syncMs += (ms - this.#syncMs) / 4;
  }

  /**
   * Copies the WAL into the database file once it has grown past a few MiB, with full sync
   * (WAL synced before, database file after). Runs only between syncs and outside
   * transactions.
   *
   * The WAL file is not truncated: the next COMMIT starts the WAL over from its beginning,
   * writing over blocks the file already has. A sync after writes that grow a file also
   * writes the file system's record of the new size and blocks (a journal commit on ext4):
   * measured here, 1.5 to 3 times the sync of the same writes over existing blocks. So the
   * file's size tells how far the WAL has got only while it grows: the WAL is due once the
   * file has grown since it was last looked at (the WAL has gone past the file's end) and
   * is past {@link CHECKPOINT_BYTES}. Between checkpoints the file stays at about that size
   * (`journal_size_limit`).
   */
  #checkpoint(): void {
    if (this.#group !== null) return;
    let size = this.#walSize;
    try {
      size = (this.#wal?.statSync() ?? Deno.statSync(join(this.dir, `${DB_FILE}-wal`))).size;
    } catch { /* unknown: skip */ }
    if (size > this.#walSize && size >= CHECKPOINT_BYTES) this.#walFull = true;
    this.#walSize = size;
    if (!this.#walFull || this.#syncing !== 0) return;
    try {
      // (busy, log, checkpointed): busy when it could not complete (nothing here reads or
      // writes meanwhile, so not expected): it is then tried again after the next sync.
      const result = this.db.prepare("PRAGMA wal_checkpoint(RESTART)").get();
      if (Number(result?.busy) === 0) this.#walFull = false;
    } catch { /* retried after the next sync */ }
  }

  #closeWal(): void {
    try {
      this.#wal?.close();
    } catch { /* already closed */ }
    this.#wal = null;
  }

  /** Runs `fn` in one transaction: all of its writes or none. */
  transaction<T>(fn: () => T): T {
    this.assertOpen();
    this.flush();
    this.db.exec("BEGIN");
    let result: T;
    try {
      result = fn();
      this.db.exec("COMMIT");
    } catch (err) {
      try {
        this.db.exec("ROLLBACK");
      } catch { /* no transaction left to roll back */ }
      throw failure(err);
    }
    this.#checkpoint();
    return result;
  }

  close(): void {
    if (this.#closed) return;
    this.flush();
    // Writes still waiting for a sync: one last sync here, then closing checkpoints.
    const waiting = this.#unsynced;
    this.#unsynced = [];
    try {
      this.#wal?.syncDataSync();
      for (const w of waiting) w.resolve();
    } catch (err) {
      for (const w of waiting) w.reject(failure(err));
    }
    this.#closed = true;
    // A sync in flight closes the file when the last one ends.
    if (this.#syncing === 0) this.#closeWal();
    this.db.close();
    try {
      const pidFile = join(this.dir, PID_FILE);
      if (Deno.readTextFileSync(pidFile) === String(Deno.pid)) Deno.removeSync(pidFile);
    } catch { /* gone already */ }
  }
}

/**
 * Rows as arrays of values: no object with named properties is built per row. (The method
 * exists in Deno's node:sqlite; its bundled type declarations predate it.)
 */
export function rowsAsArrays(stmt: StatementSync): StatementSync {
  (stmt as StatementSync & { setReturnArrays(on: boolean): void }).setReturnArrays(true);
  return stmt;
}

function failure(err: unknown): Error {
  return err instanceof StoreError || err instanceof DuplicateKeyError ? err : new StoreError(
    `embedded store write failed: ${(err as Error)?.message}`,
    { cause: err },
  );
}

function holder(dir: string): string {
  try {
    const pid = Deno.readTextFileSync(join(dir, PID_FILE)).trim();
    return /^\d+$/.test(pid) ? ` (pid ${pid})` : "";
  } catch {
    return "";
  }
}
