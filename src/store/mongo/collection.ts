/**
 * `Collection` on a MongoDB collection: every operation is executed by the server.
 */
import type { Collection as DriverCollection, Document, FindOptions as DriverFind } from "mongodb";
import type { Collection, Doc, Filter, FindOptions, IndexSpec } from "../store.ts";
import { StoreError } from "../store.ts";
import { translateError } from "./errors.ts";

/** Server error codes handled specially. */
const NAMESPACE_NOT_FOUND = 26;
const INDEX_OPTIONS_CONFLICT = 85;
const INDEX_KEY_SPECS_CONFLICT = 86;

/** Runs a driver call, translating its errors. */
async function run<T>(call: () => Promise<T>, secret?: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw translateError(err, secret);
  }
}

function findOptions(options: FindOptions | undefined): DriverFind {
  const out: DriverFind = {};
  if (!options) return out;
  if (options.sort && Object.keys(options.sort).length > 0) out.sort = options.sort;
  if (options.skip) out.skip = options.skip;
  if (options.limit) out.limit = options.limit;
  if (options.projection && Object.keys(options.projection).length > 0) {
    out.projection = options.projection;
  }
  return out;
}

/** A store collection backed by a driver collection. */
export class MongoCollection implements Collection {
  constructor(
    private readonly coll: DriverCollection<Document>,
    private readonly secret?: string,
  ) {}

  get name(): string {
    return this.coll.collectionName;
  }

  find(filter: Filter, options?: FindOptions): Promise<Doc[]> {
    return run(() => this.coll.find(filter, findOptions(options)).toArray(), this.secret);
  }

  findOne(filter: Filter, options?: FindOptions): Promise<Doc | null> {
    return run(() => this.coll.findOne(filter, findOptions(options)), this.secret);
  }

  count(filter: Filter, options?: { limit?: number; skip?: number }): Promise<number> {
    const opts: { limit?: number; skip?: number } = {};
    if (options?.limit) opts.limit = options.limit;
    if (options?.skip) opts.skip = options.skip;
    return run(() => this.coll.countDocuments(filter, opts), this.secret);
  }

  /**
   * Ordered insert with compensation: when the insert fails part way, the documents it
   * did store are deleted again before the error is rethrown. A transaction would make
   * this atomic for readers too, but needs a replica set; the compensation works on every
   * deployment, at the price of the partial batch being briefly visible.
   */
  async insertMany(docs: Doc[]): Promise<void> {
    if (docs.length === 0) return;
    try {
      await this.coll.insertMany(docs, { ordered: true });
    } catch (err) {
      const inserted = insertedIds(err, docs);
      if (inserted.length > 0) {
        try {
          await this.coll.deleteMany({ _id: { $in: inserted as any[] } });
        } catch {
          // The original error is the one worth reporting.
        }
      }
      throw translateError(err, this.secret);
    }
  }

  replaceOne(
    filter: Filter,
    doc: Doc,
    options?: { upsert?: boolean },
  ): Promise<{ matched: number }> {
    return run(async () => {
      const res = await this.coll.replaceOne(filter, doc, { upsert: !!options?.upsert });
      return { matched: res.matchedCount };
    }, this.secret);
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

  deleteOne(filter: Filter): Promise<number> {
    return run(async () => (await this.coll.deleteOne(filter)).deletedCount, this.secret);
  }

  deleteMany(filter: Filter): Promise<number> {
    return run(async () => (await this.coll.deleteMany(filter)).deletedCount, this.secret);
  }

  aggregate(pipeline: Doc[]): Promise<Doc[]> {
    return run(() => this.coll.aggregate(pipeline, { allowDiskUse: true }).toArray(), this.secret);
  }

  distinct(field: string, filter?: Filter): Promise<unknown[]> {
    return run(() => this.coll.distinct(field, filter ?? {}), this.secret);
  }

  /**
   * Creates the index. When an index with the same keys (or name) already exists: an
   * equivalent one is kept as is; a different one (the settings changed, e.g. a field
   * became unique) is dropped and created again.
   */
  async createIndex(spec: IndexSpec): Promise<void> {
    const options: Document = {};
    if (spec.name) options.name = spec.name;
    if (spec.unique) options.unique = true;
    if (spec.partialFilterExpression) {
      options.partialFilterExpression = spec.partialFilterExpression;
    }
    try {
      await this.coll.createIndex(spec.keys, options);
      return;
    } catch (err) {
      const code = (err as any)?.code;
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
      const e = err as any;
      if (e?.code === NAMESPACE_NOT_FOUND || /ns not found/i.test(String(e?.message))) return;
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
  const e = err as any;
  const writeErrors = e?.writeErrors;
  let stored = 0;
  if (Array.isArray(writeErrors) && writeErrors.length > 0) {
    stored = Number(writeErrors[0]?.index);
  } else if (e?.result && typeof e.result.insertedCount === "number") {
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

function equivalentOptions(existing: Document, spec: IndexSpec): boolean {
  if (!!existing.unique !== !!spec.unique) return false;
  const a = existing.partialFilterExpression;
  const b = spec.partialFilterExpression;
  if (!a || !b) return !a && !b;
  return JSON.stringify(a) === JSON.stringify(b);
}
