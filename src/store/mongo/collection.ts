/**
 * `Collection` on a MongoDB collection: every operation is executed by the server.
 */
import { MongoError, MongoNetworkError, ObjectId } from "mongodb";
import type {
  ClientSession,
  Collection as DriverCollection,
  Db,
  Document,
  FindOptions as DriverFind,
  MongoClient,
} from "mongodb";
import type {
  AggregateOptions,
  Alongside,
  Collection,
  Doc,
  Filter,
  FindOptions,
  IndexSpec,
  WriteOptions,
} from "../store.ts";
import { PartialWriteError, StoreError } from "../store.ts";
import { driverFields, isWriteConcernError, translateError } from "./errors.ts";
import { findNear, type NearCondition } from "../../doc/near.ts";

/** Server error codes handled specially. */
const NAMESPACE_NOT_FOUND = 26;
const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

/**
 * Server error codes on which the driver retries a read (its retryable reads specification:
 * host unreachable or not found, network timeout, shutdown, primary stepped down, socket
 * exception, not writable primary, interrupted at shutdown or by a replica set state change,
 * not primary, exceeded time limit, majority read concern not yet available).
 */
const RETRYABLE_READ_CODES = new Set([
  6,
  7,
  89,
  91,
  189,
  9001,
  10107,
  11600,
  11602,
  13435,
  13436,
  262,
  134,
]);

/** A read failure the driver would retry: the network, or a server that was changing roles. */
export function retryableRead(err: unknown): boolean {
  if (err instanceof MongoNetworkError) return true;
  if (!(err instanceof MongoError)) return false;
  if (typeof err.code === "number" && RETRYABLE_READ_CODES.has(err.code)) return true;
  return /not master|node is recovering/i.test(err.message);
}

/** Runs a driver call, translating its errors. */
async function run<T>(call: () => Promise<T>, secret?: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw translateError(err, secret);
  }
}

function findOptions(options: FindOptions | undefined, maxTimeMS?: number): DriverFind {
  const out: DriverFind = {};
  if (maxTimeMS) out.maxTimeMS = maxTimeMS;
  if (!options) return out;
  if (options.sort && Object.keys(options.sort).length > 0) out.sort = options.sort;
  if (options.skip) out.skip = options.skip;
  if (options.limit) out.limit = options.limit;
  if (options.projection && Object.keys(options.projection).length > 0) {
    out.projection = options.projection;
  }
  return out;
}

/**
 * Operators that run code or a pattern on the server: a filter holding one keeps its time
 * bound (a pattern's backtracking on one large document is slow too).
 */
const CODE_OPERATORS = new Set(["$where", "$function", "$accumulator", "$expr", "$regex"]);

/** How deep {@link holdsCode} looks; a deeper filter counts as holding code. */
const CODE_SCAN_DEPTH = 32;

function holdsCode(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== "object") return false;
  if (value instanceof ObjectId || value instanceof Date) return false;
  if (value instanceof RegExp || depth > CODE_SCAN_DEPTH) return true;
  const bsonType = (value as { _bsontype?: unknown })._bsontype;
  if (bsonType === "BSONRegExp" || bsonType === "Code") return true;
  if (Array.isArray(value)) return value.some((v) => holdsCode(v, depth + 1));
  for (const key of Object.keys(value)) {
    if (CODE_OPERATORS.has(key)) return true;
    if (holdsCode((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/** One `_id` value: a scalar, an ObjectId or a Date (not an operator object). */
function singleId(value: unknown): boolean {
  if (value === null || typeof value !== "object") return value !== undefined;
  return value instanceof ObjectId || value instanceof Date;
}

/**
 * The filter names one `_id` value, at its top level or in a top-level `$and`, and runs no
 * code or pattern: the server reads at most one document through the `_id` index, so a time bound
 * protects nothing there (a loop of driver calls alone on the wire stub measured a find 8-10%
 * cheaper without one; served, the difference is within the emulator's spread).
 */
export function pinsOneId(filter: Filter): boolean {
  const and = filter.$and;
  const pinned = singleId(filter._id) ||
    (Array.isArray(and) && and.some((part) =>
      part !== null && typeof part === "object" &&
      singleId((part as Record<string, unknown>)._id)
    ));
  return pinned && !holdsCode(filter, 0);
}

/** What a collection needs of its store for writes with {@link Alongside} documents. */
export interface MongoContext {
  client: MongoClient;
  db: Db;
  /** The deployment runs multi-document transactions (a replica set or sharded cluster). */
  transactions: boolean;
  /** Server-side time bound of every read and aggregation (QUERY_TIMEOUT_MS); 0: none. */
  maxTimeMS?: number;
  /**
   * The same collection for `find`, `findOne`, `count` and `distinct`: a handle without a
   * write concern. The driver drops an inherited write concern from each read's options with
   * `delete`, which turns them into a slow dictionary for the rest of the read (a few
   * microseconds and 3.6 KiB of garbage a single-item read); without one there is nothing to
   * drop.
   */
  reads?: DriverCollection<Document>;
}

/** A store collection backed by a driver collection. */
export class MongoCollection implements Collection {
  constructor(
    private readonly coll: DriverCollection<Document>,
    private readonly secret?: string,
    private readonly ctx?: MongoContext,
  ) {}

  /** The handle reads go through (see {@link MongoContext.reads}). */
  private get reader(): DriverCollection<Document> {
    return this.ctx?.reads ?? this.coll;
  }

  private get maxTimeMS(): number | undefined {
    const ms = this.ctx?.maxTimeMS;
    return ms && ms > 0 ? ms : undefined;
  }

  /** Options carrying `maxTimeMS` when one is set. */
  private timed<T extends object>(options: T): T & { maxTimeMS?: number } {
    const maxTimeMS = this.maxTimeMS;
    return maxTimeMS ? { ...options, maxTimeMS } : options;
  }

  /**
   * Runs the driver call `write` and inserts the `alongside` documents when it changed
   * something: both in one transaction where the deployment supports it, otherwise the
   * inserts right after. Errors are translated once, outside the transaction (so the
   * driver still sees its retry labels).
   */
  #withAlongside<T>(
    alongside: WriteOptions["alongside"],
    write: (session?: ClientSession) => Promise<T>,
    changed: (result: T) => boolean,
  ): Promise<T> {
    return run(async () => {
      const ctx = this.ctx;
      const sides = (Array.isArray(alongside) ? alongside : alongside ? [alongside] : [])
        .filter((side: Alongside) => side.docs.length > 0) as Alongside[];
      if (sides.length === 0 || !ctx) return await write();
      const insert = async (session?: ClientSession) => {
        for (const side of sides) {
          await ctx.db.collection(side.collection).insertMany(
            side.docs,
            session ? { session } : {},
          );
        }
      };
      if (!ctx.transactions) {
        const result = await write();
        if (changed(result)) await insert();
        return result;
      }
      const session = ctx.client.startSession();
      try {
        let result: T | undefined;
        await session.withTransaction(async () => {
          result = await write(session);
          if (changed(result)) await insert(session);
        });
        return result as T;
      } finally {
        await session.endSession();
      }
    }, this.secret);
  }

  get name(): string {
    return this.coll.collectionName;
  }

  find(filter: Filter, options?: FindOptions): Promise<Doc[]> {
    return run(
      () => this.reader.find(filter, findOptions(options, this.maxTimeMS)).toArray(),
      this.secret,
    );
  }

  /**
   * One document, read with a `find` command of its own (`db.command`, which takes nothing from
   * the database handle: the read concern, read preference and BSON options are the read
   * handle's) rather than through a driver cursor. The driver's own `findOne` builds a cursor
   * for the one document (its options, a listener on the client, the cursor's clean-up): on the
   * wire stub a loop of them cost 61 us of CPU a read, the same command 44 us. An error the
   * driver would retry a read on sends the read through the driver's `findOne`, which retries
   * it as usual.
   */
  findOne(filter: Filter, options?: FindOptions): Promise<Doc | null> {
    const maxTimeMS = pinsOneId(filter) ? undefined : this.maxTimeMS;
    const db = this.ctx?.db;
    const reader = this.reader;
    const driverOptions = findOptions(options, maxTimeMS);
    const viaDriver = () => reader.findOne(filter, driverOptions);
    if (!db) return run(viaDriver, this.secret);
    // The options as the driver's own `findOne` would send them (sort, skip, projection,
    // maxTimeMS), one document in a single batch.
    const command: Document = {
      find: reader.collectionName,
      filter,
      ...driverOptions,
      limit: 1,
      singleBatch: true,
      batchSize: 1,
    };
    const level = reader.readConcern?.level;
    if (level) command.readConcern = { level };
    this.#commandOptions ??= { ...reader.bsonOptions, readPreference: reader.readPreference };
    const commandOptions = this.#commandOptions;
    const retries = this.ctx?.client.options?.retryReads !== false;
    return run(async () => {
      let reply: Document;
      try {
        reply = await db.command(command, commandOptions);
      } catch (err) {
        if (retries && retryableRead(err)) return await viaDriver();
        throw err;
      }
      return (reply.cursor?.firstBatch?.[0] as Doc | undefined) ?? null;
    }, this.secret);
  }

  /** The options of {@link findOne}'s command: the read handle's BSON options and preference. */
  #commandOptions?: Document;

  count(filter: Filter, options?: { limit?: number; skip?: number }): Promise<number> {
    let near: NearCondition | null;
    try {
      near = findNear(filter);
    } catch (err) {
      return Promise.reject(err);
    }
    if (near) return this.#countNear(near, options);
    const opts: { limit?: number; skip?: number } = {};
    if (options?.limit) opts.limit = options.limit;
    if (options?.skip) opts.skip = options.skip;
    return run(() => this.reader.countDocuments(filter, this.timed(opts)), this.secret);
  }

  /**
   * The count of a filter holding a `$near` or `$nearSphere`, which `countDocuments` (a
   * `$match`) refuses: a `$geoNear` stage on the same field, centre, bounds and units, with
   * the rest of the filter as its query, then `$count`. The server checks the condition and
   * its index as it does for the find beside it.
   */
  #countNear(
    near: NearCondition,
    options?: { limit?: number; skip?: number },
  ): Promise<number> {
    const { op, condition } = near;
    const value = condition[op];
    const stage: Document = {
      key: near.field,
      distanceField: "_near_distance",
      query: near.rest,
    };
    const geometry = value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Document).$geometry
      : undefined;
    if (geometry !== undefined) {
      // The GeoJSON form: the point and its bounds (meters) inside the operator. Only these
      // are taken: any other key is the client's, and the server refuses it in the find.
      const { $maxDistance, $minDistance } = value as Document;
      Object.assign(stage, { near: geometry, spherical: true });
      if ($maxDistance !== undefined) stage.maxDistance = $maxDistance;
      if ($minDistance !== undefined) stage.minDistance = $minDistance;
    } else {
      // A point as the operator's value, its bounds beside it: a GeoJSON point measures
      // meters, a legacy pair radians with $nearSphere and the plane's units with $near.
      const geoJson = (value as Document | null)?.type === "Point";
      const pair = Array.isArray(value) && value.length === 3 ? value.slice(0, 2) : value;
      Object.assign(stage, { near: pair, spherical: geoJson || op === "$nearSphere" });
      if (Array.isArray(value) && value.length === 3) stage.maxDistance = value[2];
      if (condition.$maxDistance !== undefined) stage.maxDistance = condition.$maxDistance;
      if (condition.$minDistance !== undefined) stage.minDistance = condition.$minDistance;
    }
    const pipeline: Document[] = [{ $geoNear: stage }];
    if (options?.skip) pipeline.push({ $skip: options.skip });
    if (options?.limit) pipeline.push({ $limit: options.limit });
    pipeline.push({ $count: "n" });
    return run(async () => {
      const [row] = await this.reader.aggregate(pipeline, this.timed({})).toArray();
      return (row?.n as number | undefined) ?? 0;
    }, this.secret);
  }

  /**
   * Ordered insert with compensation: when the insert fails part way, the documents it
   * did store are deleted again before the error is rethrown. A transaction would make
   * this atomic for readers too, but needs a replica set; the compensation works on every
   * deployment, at the price of the partial batch being briefly visible.
   */
  async insertMany(docs: Doc[], options: WriteOptions = {}): Promise<void> {
    if (docs.length === 0) return;
    if (options.alongside && this.ctx?.transactions) {
      return this.#withAlongside(options.alongside, async (session) => {
        await this.coll.insertMany(docs, { ordered: true, session });
      }, () => true);
    }
    await this.#insertCompensated(docs);
    await this.#withAlongside(options.alongside, () => Promise.resolve(), () => true);
  }

  /**
   * When the clean-up itself fails, the error says so and names the documents that may
   * remain (a `PartialWriteError`, logged by the logged store and told to the client).
   */
  async #insertCompensated(docs: Doc[]): Promise<void> {
    try {
      await this.coll.insertMany(docs, { ordered: true });
    } catch (err) {
      const inserted = insertedIds(err, docs);
      if (inserted.length > 0) {
        try {
          const stored: Filter = { _id: { $in: inserted } };
          await this.coll.deleteMany(stored);
        } catch (cleanup) {
          // A write concern error comes after the primary applied the write: the documents
          // are removed there (the insert failed the same way and is answered as such).
          if (isWriteConcernError(cleanup)) throw translateError(err, this.secret);
          const original = translateError(err, this.secret);
          throw new PartialWriteError(inserted, {
            cause: original,
            cleanup: translateError(cleanup, this.secret),
          });
        }
      }
      throw translateError(err, this.secret);
    }
  }

  replaceOne(
    filter: Filter,
    doc: Doc,
    options?: { upsert?: boolean } & WriteOptions,
  ): Promise<{ matched: number }> {
    return this.#withAlongside(
      options?.alongside,
      async (session) => {
        const res = await this.coll.replaceOne(filter, doc, { upsert: !!options?.upsert, session });
        return { matched: res.matchedCount, upserted: res.upsertedCount };
      },
      (r) => r.matched + r.upserted > 0,
    ).then((r) => ({ matched: r.matched }));
  }

  updateOne(
    filter: Filter,
    update: Doc,
    options?: { upsert?: boolean },
  ): Promise<{ matched: number }> {
    return run(async () => {
      const res = await this.coll.updateOne(filter, update, { upsert: !!options?.upsert });
      return { matched: res.matchedCount };
    }, this.secret);
  }

  updateMany(filter: Filter, update: Doc): Promise<number> {
    return run(async () => (await this.coll.updateMany(filter, update)).matchedCount, this.secret);
  }

  deleteOne(filter: Filter, options: WriteOptions = {}): Promise<number> {
    return this.#withAlongside(
      options.alongside,
      async (session) => (await this.coll.deleteOne(filter, { session })).deletedCount,
      (n) => n > 0,
    );
  }

  deleteMany(filter: Filter, options: WriteOptions = {}): Promise<number> {
    return this.#withAlongside(
      options.alongside,
      async (session) => (await this.coll.deleteMany(filter, { session })).deletedCount,
      (n) => n > 0,
    );
  }

  aggregate(pipeline: Doc[], options: AggregateOptions = {}): Promise<Doc[]> {
    // Disk use is allowed unless the options say otherwise; a `maxTimeMS` of the options
    // below QUERY_TIMEOUT_MS wins.
    const given: Document = { allowDiskUse: true, ...options };
    const bound = this.maxTimeMS;
    if (bound !== undefined && !(given.maxTimeMS > 0 && given.maxTimeMS < bound)) {
      given.maxTimeMS = bound;
    }
    return run(() => this.coll.aggregate(pipeline, given).toArray(), this.secret);
  }

  distinct(field: string, filter?: Filter): Promise<unknown[]> {
    return run(() => this.reader.distinct(field, filter ?? {}, this.timed({})), this.secret);
  }

  /**
   * Creates the index. When an index with the same keys (or name) already exists: an
   * equivalent one is kept as is; a different one (the settings changed, e.g. a field
   * became unique) is dropped and created again.
   */
  async createIndex(spec: IndexSpec): Promise<void> {
    const options = indexOptions(spec);
    try {
      await this.coll.createIndex(spec.keys, options);
      return;
    } catch (err) {
      const code = driverFields(err).code;
      if (code !== INDEX_OPTIONS_CONFLICT && code !== INDEX_KEY_SPECS_CONFLICT) {
        throw translateError(err, this.secret);
      }
    }
    await run(async () => {
      const existing = (await this.coll.listIndexes().toArray()).find((ix) =>
        sameKeys(ix.key, spec.keys) || (spec.name !== undefined && ix.name === spec.name)
      );
      if (!existing) throw new StoreError(`cannot create index on ${this.name}: conflict`);
      if (sameKeys(existing.key, spec.keys) && equivalentOptions(existing, spec)) return;
      await this.coll.dropIndex(existing.name);
      await this.coll.createIndex(spec.keys, options);
    }, this.secret);
  }

  async drop(): Promise<void> {
    try {
      await this.coll.drop();
    } catch (err) {
      const e = driverFields(err);
      if (e.code === NAMESPACE_NOT_FOUND || /ns not found/i.test(String(e.message))) return;
      throw translateError(err, this.secret);
    }
  }
}

/**
 * `_id`s of the documents an ordered insert stored before failing: those before the first
 * write error, else the first `insertedCount` (batches the driver sent before a
 * command-level failure). The driver's `insertedIds` is not used: after a command-level
 * error it lists every attempted id, including ones that clashed with existing documents.
 * Errors without a bulk result (e.g. a dropped connection) leave nothing to compensate.
 */
function insertedIds(err: unknown, docs: Doc[]): unknown[] {
  const e = driverFields(err);
  const writeErrors = e.writeErrors;
  let stored = 0;
  if (Array.isArray(writeErrors) && writeErrors.length > 0) {
    stored = Number(writeErrors[0]?.index);
  } else if (typeof e.result?.insertedCount === "number") {
    stored = e.result.insertedCount;
  }
  if (!Number.isInteger(stored) || stored <= 0) return [];
  return docs.slice(0, stored).map((d) => d._id);
}

/** Key specs are equal in field order and direction. */
function sameKeys(a: Record<string, unknown> | undefined, b: Record<string, unknown>): boolean {
  if (!a) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length &&
    ka.every((k, i) => k === kb[i] && String(a[k]) === String(b[k]));
}

/** The `createIndexes` options of `spec`: its name, flags and bounds, and its other options. */
function indexOptions(spec: IndexSpec): Document {
  const options: Document = { ...spec.options };
  if (spec.name) options.name = spec.name;
  if (spec.unique) options.unique = true;
  if (spec.sparse) options.sparse = true;
  if (spec.expireAfterSeconds !== undefined) options.expireAfterSeconds = spec.expireAfterSeconds;
  if (spec.partialFilterExpression) {
    options.partialFilterExpression = spec.partialFilterExpression;
  }
  return options;
}

/**
 * Options an existing index must have to stand for `spec` (the server reports others of its
 * own, such as `v` and `key`): the flags compared as flags, the rest as written.
 */
const COMPARED_OPTIONS = ["expireAfterSeconds", "partialFilterExpression", "collation", "weights"];

function equivalentOptions(existing: Document, spec: IndexSpec): boolean {
  if (!!existing.unique !== !!spec.unique || !!existing.sparse !== !!spec.sparse) return false;
  const wanted = indexOptions(spec);
  for (const name of COMPARED_OPTIONS) {
    const a = existing[name];
    const b = wanted[name];
    if (name === "collation" || name === "weights") {
      // The server fills a collation's defaults and every text field's weight in: only the
      // values asked for are compared.
      if (b === undefined) continue;
      if (a === null || typeof a !== "object") return false;
      for (const [key, value] of Object.entries(b as Document)) {
        if (JSON.stringify((a as Document)[key]) !== JSON.stringify(value)) return false;
      }
    } else if (a === undefined || b === undefined) {
      if (a !== b) return false;
    } else if (JSON.stringify(a) !== JSON.stringify(b)) return false;
  }
  return true;
}
