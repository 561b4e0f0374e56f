/**
 * The embedded store: MongoDB semantics (via mingo) over documents kept in memory and
 * written through to an SQLite file in a data directory.
 *
 * @module
 */
import type { Options } from "mingo/types";
import type { Collection, FileStore, IndexSpec, Store } from "../store.ts";
import { EJSON } from "../../doc/bson.ts";
import { EmbeddedCollection, type StoreContext } from "./collection.ts";
import { engineOptions } from "../../doc/match/engine.ts";
import { cloneValue } from "../../doc/clone.ts";
import { EmbeddedFileStore } from "./files.ts";
import { Database } from "./sqlite.ts";
import { CollectionState } from "./state.ts";
import { refusingWrites, unsatisfiableOnOneNode } from "../write_concern.ts";

class EmbeddedStore implements Store, StoreContext {
  readonly kind = "embedded";
  readonly storedDocuments = true;
  readonly atomicAlongside = true;
  readonly files: FileStore;
  readonly options: Partial<Options>;
  readonly #states = new Map<string, CollectionState>();
  readonly #ttlTimer: ReturnType<typeof setInterval> | undefined;

  /**
   * @param queryTimeoutMs scan deadline of one query in ms (QUERY_TIMEOUT_MS); 0 = none.
   */
  /**
   * @param refused collections whose writes are refused, with the reason (write concerns a
   * single node cannot acknowledge, see ../write_concern.ts).
   */
  /**
   * @param ttlIntervalMs how often documents past a TTL index's `expireAfterSeconds` are
   * deleted (MongoDB's TTL monitor runs every 60 s); 0: never.
   */
  constructor(
    readonly db: Database,
    readonly queryTimeoutMs: number,
    readonly refused: ReadonlyMap<string, string> = new Map(),
    ttlIntervalMs = 60_000,
  ) {
    this.files = new EmbeddedFileStore(db);
    // A failed group commit leaves memory ahead of the file: reload from the file.
    db.onGroupFailure = () => this.#drop();
    // Copies: stages of a $lookup sub-pipeline may edit their input in place.
    this.options = engineOptions((name) => this.state(name).snapshot().map(cloneValue));
    if (ttlIntervalMs > 0) {
      const timer = setInterval(() => this.expire().catch(() => {}), ttlIntervalMs);
      // The sweep keeps no process alive.
      Deno.unrefTimer(timer);
      this.#ttlTimer = timer;
    }
  }

  /**
   * Deletes the documents past their TTL, as MongoDB's TTL monitor does: for each index with
   * `expireAfterSeconds` (one key), those whose value there is a date, or a list holding one,
   * older than that many seconds, within the index's partial filter. The deletions are the
   * store's own: no oplog entry, no event. Answers how many documents went.
   */
  async expire(now = Date.now()): Promise<number> {
    if (this.db.closed) return 0;
    let deleted = 0;
    const rows = this.db.stmts.ttlIndexes.all() as Array<{ coll: string; spec: string }>;
    for (const { coll, spec: text } of rows) {
      const spec = EJSON.parse(text, { relaxed: false }) as IndexSpec;
      const keys = Object.keys(spec.keys);
      if (spec.expireAfterSeconds === undefined || keys.length !== 1) continue;
      const expired = { [keys[0]]: { $lt: new Date(now - spec.expireAfterSeconds * 1000) } };
      const filter = spec.partialFilterExpression
        ? { $and: [spec.partialFilterExpression, expired] }
        : expired;
      deleted += await new EmbeddedCollection(coll, this).deleteMany(filter);
    }
    return deleted;
  }

  state(name: string): CollectionState {
    let state = this.#states.get(name);
    if (!state) {
      this.db.assertOpen();
      state = CollectionState.load(this.db, name, this.options);
      this.#states.set(name, state);
      state.warm();
    }
    return state;
  }

  changeMark(collection: string): number {
    return this.state(collection).mark;
  }

  reset(name: string): void {
    this.#states.get(name)?.stopWarming();
    this.#states.delete(name);
  }

  /** Drops every collection's memory (reloaded from the file on next use). */
  #drop(): void {
    for (const state of this.#states.values()) state.stopWarming();
    this.#states.clear();
  }

  collection(name: string): Collection {
    if (!name || name.includes("\u0000") || name.length > 255) {
      throw new Error(`invalid collection name: ${JSON.stringify(name)}`);
    }
    const collection = new EmbeddedCollection(name, this);
    const reason = this.refused.get(name);
    return reason === undefined ? collection : refusingWrites(collection, reason);
  }

  collectionNames(): Promise<string[]> {
    this.db.assertOpen();
    const rows = this.db.stmts.listCollections.all() as Array<{ name: string }>;
    return Promise.resolve(rows.map((r) => r.name));
  }

  ping(): Promise<void> {
    this.db.assertOpen();
    this.db.db.prepare("SELECT 1").get();
    return Promise.resolve();
  }

  close(): Promise<void> {
    clearInterval(this.#ttlTimer);
    this.db.close();
    this.#drop();
    return Promise.resolve();
  }
}

/**
 * Opens the embedded store in data directory `dir` (created if missing). Only one process
 * may have a directory open: a second opener gets a StoreError
 * "data directory DIR is in use by another process (pid N)".
 */
export function openEmbeddedStore(
  dir: string,
  options: {
    queryTimeoutMs?: number;
    writeConcerns?: Record<string, Record<string, unknown>>;
    /** How often TTL indexes are applied, in ms (60,000 by default, as MongoDB; 0: never). */
    ttlIntervalMs?: number;
  } = {},
): Promise<Store> {
  const refused = new Map<string, string>();
  for (const [name, concern] of Object.entries(options.writeConcerns ?? {})) {
    const reason = unsatisfiableOnOneNode(concern);
    if (reason !== null) refused.set(name, reason);
  }
  try {
    return Promise.resolve(
      new EmbeddedStore(
        Database.open(dir),
        options.queryTimeoutMs ?? 0,
        refused,
        options.ttlIntervalMs,
      ),
    );
  } catch (err) {
    return Promise.reject(err);
  }
}
