/**
 * The data-layer interface: MongoDB dialect in, plain documents out.
 *
 * Both stores (MongoDB and embedded) implement it and know nothing of resources, links or
 * HTTP. Filters, updates, sorts, projections and pipelines are MongoDB documents.
 */
import type { ObjectId } from "../doc/bson.ts";
import type { Doc, Filter, Projection, Sort } from "../doc/types.ts";

// The document and query types live below every layer that speaks of documents
// (src/doc/); the data layer re-exports them as its own vocabulary.
export type { Doc, Filter, Projection, Sort } from "../doc/types.ts";
export { InvalidQueryError } from "../doc/types.ts";

export interface FindOptions {
  sort?: Sort;
  skip?: number;
  limit?: number;
  projection?: Projection;
  /**
   * The caller changes no more than the top-level members of the documents it gets: their
   * nested objects, arrays and dates may be the store's own (the embedded store then copies
   * one level of each document instead of all of it).
   */
  shared?: boolean;
  /**
   * Filled, by a store of {@link Store.storedDocuments}, with the stored document behind each
   * one found, by position: the same object until the document is written again (a write
   * replaces it, never changes it), so its identity stands for its content.
   */
  stored?: Doc[];
  /**
   * Called, by a store of {@link Store.storedDocuments}, with each stored document found,
   * when the result is plain copies or top-level projections of them: what it returns, when
   * not undefined, is returned in that document's place as it is (no copy made): the
   * caller's own value for a stored document it has seen before.
   */
  known?: (stored: Doc) => Doc | undefined;
}

/**
 * Options of an aggregation, as MongoDB's `aggregate` takes them (a resource's
 * `datasource.aggregation.options`). The embedded store applies `let` (the pipeline's
 * variables) and `maxTimeMS`; the others are MongoDB's.
 */
export interface AggregateOptions {
  /** Variables of the pipeline (`$$name`), each an expression evaluated once. */
  let?: Doc;
  /** A time bound below QUERY_TIMEOUT_MS, in ms. */
  maxTimeMS?: number;
  allowDiskUse?: boolean;
  collation?: Doc;
  hint?: string | Doc;
  comment?: unknown;
  batchSize?: number;
  bypassDocumentValidation?: boolean;
}

export interface IndexSpec {
  /** Index keys, e.g. `{ email: 1 }`, `{ location: "2dsphere" }` or `{ spot: "2d" }`. */
  keys: Record<string, 1 | -1 | "2d" | "2dsphere" | "text" | "hashed">;
  unique?: boolean;
  /** Documents holding none of the keys are left out of the index (MongoDB sparse index). */
  sparse?: boolean;
  /**
   * A TTL index (one key): a document whose value there is a date (or a list holding one)
   * older than this many seconds is deleted, by the store in the background.
   */
  expireAfterSeconds?: number;
  /** Documents the index applies to (MongoDB partial index). */
  partialFilterExpression?: Filter;
  name?: string;
  /**
   * Other options of MongoDB's `createIndexes` (`collation`, `weights`, `hidden`...), passed
   * to MongoDB as given; the embedded store keeps them and has no use for them.
   */
  options?: Record<string, unknown>;
}

/** Thrown by writes that break a unique index; never reaches a client as a 500. */
export class DuplicateKeyError extends Error {
  constructor(
    /** Fields of the violated index, when the store knows them. */
    readonly fields: string[],
    message = "duplicate key",
  ) {
    super(message);
    this.name = "DuplicateKeyError";
  }
}

/** Thrown when the store cannot be reached or fails; the HTTP layer answers 503. */
export class StoreError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StoreError";
  }
}

/**
 * Thrown when a write's write concern cannot be acknowledged (a resource's
 * `mongo_write_concern` asking more nodes or tags than the deployment has): a fault of the
 * server's configuration, answered 500 with a generic message. The embedded store (one node)
 * throws it before it changes anything; MongoDB reports it after the primary wrote.
 */
export class WriteConcernError extends StoreError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "WriteConcernError";
  }
}

/**
 * Thrown when a write failed part way and undoing what it stored failed too: the documents
 * `remaining` (their `_id`s) may still be stored. `cause` is the write's error, `cleanup`
 * the clean-up's. The HTTP layer tells the client both.
 */
export class PartialWriteError extends StoreError {
  readonly cleanup: unknown;
  constructor(
    readonly remaining: unknown[],
    options: { cause: unknown; cleanup: unknown },
  ) {
    const why = options.cleanup instanceof Error
      ? options.cleanup.message
      : String(options.cleanup);
    super(
      `the write failed part way and its clean-up failed (${why}); ` +
        `${remaining.length} document(s) may remain stored`,
      { cause: options.cause },
    );
    this.name = "PartialWriteError";
    this.cleanup = options.cleanup;
  }
}

/**
 * Documents to insert into another collection as part of a write, in the same atomic unit
 * where the store can (the operation log). They are inserted only when the write stored,
 * replaced or removed at least one document.
 */
export interface Alongside {
  collection: string;
  docs: Doc[];
}

/**
 * Options of the writes that can carry {@link Alongside} documents: inserts into one other
 * collection, or into several (an oplog entry and a version copy), all in the write's atomic
 * unit.
 */
export interface WriteOptions {
  alongside?: Alongside | readonly Alongside[];
}

/**
 * Thrown when a query ran past its time bound (QUERY_TIMEOUT_MS: MongoDB's `maxTimeMS`, the
 * embedded store's scan deadline); the HTTP layer answers 503.
 */
export class QueryTimeoutError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "QueryTimeoutError";
  }
}

export interface Collection {
  readonly name: string;
  find(filter: Filter, options?: FindOptions): Promise<Doc[]>;
  findOne(filter: Filter, options?: FindOptions): Promise<Doc | null>;
  /** Number of matching documents; `limit` bounds the work when only "more than n" matters. */
  count(filter: Filter, options?: { limit?: number; skip?: number }): Promise<number>;
  /**
   * Inserts all documents or none: on any failure (a duplicate key, a store error) no
   * document of the call remains stored. Documents must carry their `_id`.
   */
  insertMany(docs: Doc[], options?: WriteOptions): Promise<void>;
  /** Replaces the first document matching `filter`; with `upsert`, inserts `doc` if none. */
  replaceOne(
    filter: Filter,
    doc: Doc,
    options?: { upsert?: boolean } & WriteOptions,
  ): Promise<{ matched: number }>;
  /** Applies MongoDB update operators (`$set`, `$unset`, `$inc`, ...) to the first match. */
  updateOne(
    filter: Filter,
    update: Doc,
    options?: { upsert?: boolean },
  ): Promise<{ matched: number }>;
  /** Applies update operators to every match; returns how many matched. */
  updateMany(filter: Filter, update: Doc): Promise<number>;
  deleteOne(filter: Filter, options?: WriteOptions): Promise<number>;
  deleteMany(filter: Filter, options?: WriteOptions): Promise<number>;
  /** Runs an aggregation pipeline and returns every resulting document. */
  aggregate(pipeline: Doc[], options?: AggregateOptions): Promise<Doc[]>;
  distinct(field: string, filter?: Filter): Promise<unknown[]>;
  /** Creates an index if it does not exist yet (idempotent). */
  createIndex(spec: IndexSpec): Promise<void>;
  /** Removes the collection and its indexes. */
  drop(): Promise<void>;
}

export interface StoredFile {
  id: ObjectId;
  filename: string;
  contentType: string;
  length: number;
  uploadDate: Date;
  /** Extra metadata given at upload. */
  metadata?: Doc;
}

/** What a file is stored with besides its bytes. */
export interface FileInfo {
  filename: string;
  contentType: string;
  metadata?: Doc;
}

/** An inclusive byte range `[start, end]` of a file. */
export interface ByteRange {
  start: number;
  end: number;
}

/** File storage (GridFS on MongoDB, chunk rows on the embedded store). */
export interface FileStore {
  /** Stores a file held in memory. */
  put(data: Uint8Array, info: FileInfo): Promise<StoredFile>;
  /**
   * Stores a file as its bytes arrive, chunk by chunk, without holding it whole. The file
   * exists (for `stat`, `read`, `count`) only once `source` has ended and every chunk is
   * written. When `source` throws, or a write fails, whatever was written is removed and
   * the error is rethrown (a source's error unchanged). A piece of `source` may be reused
   * by it once the next is asked for: copy or write a piece before asking for the next.
   */
  putStream(source: AsyncIterable<Uint8Array>, info: FileInfo): Promise<StoredFile>;
  /** File metadata, or null when no such file exists. */
  stat(id: ObjectId): Promise<StoredFile | null>;
  /** The file's bytes, or the inclusive byte range `[start, end]` of them. */
  read(id: ObjectId, range?: ByteRange): Promise<Uint8Array | null>;
  /**
   * The file's bytes (or the inclusive range, clamped to the file) as a stream read from
   * the store one stored chunk at a time; null when no such file exists. The stream errors
   * if the file is deleted while it is read.
   */
  stream(id: ObjectId, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>;
  /** Removes the file; removing a missing file is not an error. */
  delete(id: ObjectId): Promise<void>;
  /** How many files are stored (uploads still streaming are not counted). */
  count(): Promise<number>;
}

/** A document change reported by a store's own change stream. */
export interface StoreChange {
  collection: string;
  op: "insert" | "update" | "replace" | "delete";
  id: unknown;
  /** The document after the change; null once removed (or when no longer found). */
  doc: Doc | null;
  /** The document before the change, when the deployment records it; else undefined. */
  before?: Doc | null;
}

/** Callbacks of {@link Store.watch}. */
export interface WatchHandlers {
  change(change: StoreChange): void;
  /** The stream lost its place (it restarted without a resume point): changes were missed. */
  lost(): void;
  /** A stream error (it keeps retrying). */
  error(error: unknown): void;
}

/** An open change stream. */
export interface ChangeWatcher {
  close(): Promise<void>;
}

export interface Store {
  /** `"mongo"` or `"embedded"`. */
  readonly kind: string;
  /**
   * Reads hand out copies of documents the store keeps as objects it never changes (a write
   * replaces them), and honour FindOptions.stored and FindOptions.known (the embedded store;
   * MongoDB's documents are read afresh every time).
   */
  readonly storedDocuments?: boolean;
  /**
   * A number that differs after any change to the documents of `collection` (stores of
   * {@link Store.storedDocuments}): what a text made from several collections' documents is
   * checked against (services/read.ts, embedded item reads).
   */
  changeMark?(collection: string): number;
  /**
   * A write and its {@link Alongside} inserts are stored all or nothing, on every deployment
   * (the embedded store: one transaction). Elsewhere the inserts follow the write.
   */
  readonly atomicAlongside?: boolean;
  /**
   * Follows every change to `collections`, whoever writes them, on stores whose deployment
   * has change streams (a MongoDB replica set or sharded cluster); null elsewhere.
   */
  watch?(collections: string[], handlers: WatchHandlers): ChangeWatcher | null;
  collection(name: string): Collection;
  readonly files: FileStore;
  /** Names of existing collections (may be approximate on emulators). */
  collectionNames(): Promise<string[]>;
  /** Liveness probe for health checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
