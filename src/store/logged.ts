/**
 * A store decorator that logs every exception of the database layer, then rethrows it
 * unchanged (the HTTP layer still decides the response). Records carry the operation, the
 * collection, the error with its stack, and the request fields (`clientip`, `url`,
 * `method`, `requestid`) of the request being handled: a request's runtime uses the store's
 * view for that request (`forRequest`).
 *
 * A unique-index violation (`DuplicateKeyError`) is logged at "warn": the client gets a
 * validation error for it; anything else at "error".
 *
 * An optional `observe` hook hears of every operation, failed or not, with its duration
 * (the metrics use it).
 */
import { describeError, type Level, logContext, type Logger, type RequestFields } from "../log.ts";
import type { ObjectId } from "../doc/bson.ts";
import {
  type AggregateOptions,
  type ByteRange,
  type Collection,
  type Doc,
  DuplicateKeyError,
  type FileInfo,
  type FileStore,
  type Filter,
  type FindOptions,
  type IndexSpec,
  InvalidQueryError,
  QueryTimeoutError,
  type Store,
  type WriteOptions,
} from "./store.ts";

/** Where an operation runs, as its records and observations name it. */
interface Target {
  log: Logger;
  /** The collection's name, "files" for the file store, "store" for the store itself. */
  name: string;
  observe?: LoggedStoreOptions["observe"];
}

/** Logs a database error of `operation` on `target`, with the request's fields. */
function logFailure(
  target: Target,
  operation: string,
  fields: RequestFields | undefined,
  error: unknown,
) {
  const level: Level = error instanceof DuplicateKeyError ? "warn" : "error";
  target.log.log(level, `database error in ${operation} on ${target.name}`, {
    // Outside a request's view (in-process calls), a hook's or the application's context.
    ...(fields ?? logContext()),
    operation,
    collection: target.name,
    error: describeError(error),
  });
}

/** One store operation as the `observe` hook hears of it. */
export interface StoreObservation {
  operation: string;
  /** The collection's name, "files" for the file store, "store" for the store itself. */
  collection: string;
  seconds: number;
  outcome: "ok" | "duplicate_key" | "invalid_query" | "timeout" | "error";
}

/** Options of {@link loggedStore}. */
export interface LoggedStoreOptions {
  /** Called after every operation; must not throw. */
  observe?: (observation: StoreObservation) => void;
}

function outcomeOf(error: unknown): StoreObservation["outcome"] {
  if (error instanceof DuplicateKeyError) return "duplicate_key";
  if (error instanceof InvalidQueryError) return "invalid_query";
  if (error instanceof QueryTimeoutError) return "timeout";
  return "error";
}

/**
 * Runs `start` (one operation of `target`): a rejection, or a throw, is logged with `fields`
 * and rethrown as a rejection; an observer hears of the outcome.
 */
function guard<T>(
  target: Target,
  operation: string,
  fields: RequestFields | undefined,
  start: () => Promise<T>,
): Promise<T> {
  if (!target.observe) {
    // Without an observer only a failure has something to do: no async step of its own,
    // per call (the operation's promise with a rejection handler).
    let promise: Promise<T>;
    try {
      promise = start();
    } catch (error) {
      promise = Promise.reject(error);
    }
    return promise.then(undefined, (error: unknown) => {
      logFailure(target, operation, fields, error);
      throw error;
    });
  }
  return observed(target, operation, fields, start);
}

async function observed<T>(
  target: Target,
  operation: string,
  fields: RequestFields | undefined,
  start: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const done = (outcome: StoreObservation["outcome"]) =>
    target.observe!({
      operation,
      collection: target.name,
      outcome,
      seconds: (performance.now() - started) / 1000,
    });
  try {
    const result = await start();
    done("ok");
    return result;
  } catch (error) {
    done(outcomeOf(error));
    logFailure(target, operation, fields, error);
    throw error;
  }
}

/** A collection whose operations are guarded ({@link guard}) with a request's fields. */
class LoggedCollection implements Collection {
  readonly name: string;
  constructor(
    readonly inner: Collection,
    readonly target: Target,
    readonly fields?: RequestFields,
  ) {
    this.name = inner.name;
  }
  #guard<T>(operation: string, start: () => Promise<T>): Promise<T> {
    return guard(this.target, operation, this.fields, start);
  }
  find(filter: Filter, options?: FindOptions) {
    return this.#guard("find", () => this.inner.find(filter, options));
  }
  findOne(filter: Filter, options?: FindOptions) {
    return this.#guard("findOne", () => this.inner.findOne(filter, options));
  }
  count(filter: Filter, options?: { limit?: number; skip?: number }) {
    return this.#guard("count", () => this.inner.count(filter, options));
  }
  insertMany(docs: Doc[], options?: WriteOptions) {
    return this.#guard("insertMany", () => this.inner.insertMany(docs, options));
  }
  replaceOne(...args: Parameters<Collection["replaceOne"]>) {
    return this.#guard("replaceOne", () => this.inner.replaceOne(...args));
  }
  updateOne(...args: Parameters<Collection["updateOne"]>) {
    return this.#guard("updateOne", () => this.inner.updateOne(...args));
  }
  updateMany(filter: Filter, update: Doc) {
    return this.#guard("updateMany", () => this.inner.updateMany(filter, update));
  }
  deleteOne(filter: Filter, options?: WriteOptions) {
    return this.#guard("deleteOne", () => this.inner.deleteOne(filter, options));
  }
  deleteMany(filter: Filter, options?: WriteOptions) {
    return this.#guard("deleteMany", () => this.inner.deleteMany(filter, options));
  }
  aggregate(pipeline: Doc[], options?: AggregateOptions) {
    return this.#guard("aggregate", () => this.inner.aggregate(pipeline, options));
  }
  distinct(field: string, filter?: Filter) {
    return this.#guard("distinct", () => this.inner.distinct(field, filter));
  }
  createIndex(spec: IndexSpec) {
    return this.#guard("createIndex", () => this.inner.createIndex(spec));
  }
  drop() {
    return this.#guard("drop", () => this.inner.drop());
  }
}

/** The file store, guarded ({@link guard}) with a request's fields. */
class LoggedFiles implements FileStore {
  constructor(
    readonly inner: FileStore,
    readonly target: Target,
    readonly fields: RequestFields | undefined,
  ) {}
  #guard<T>(operation: string, start: () => Promise<T>): Promise<T> {
    return guard(this.target, operation, this.fields, start);
  }
  put(data: Uint8Array, info: FileInfo) {
    return this.#guard("put", () => this.inner.put(data, info));
  }
  /** An error of the source (a refused or aborted upload) is the caller's, not the store's. */
  async putStream(source: AsyncIterable<Uint8Array>, info: FileInfo) {
    const { target, fields } = this;
    const started = performance.now();
    const observe = (outcome: StoreObservation["outcome"]) =>
      target.observe?.({
        operation: "putStream",
        collection: "files",
        outcome,
        seconds: (performance.now() - started) / 1000,
      });
    let sourceError: unknown;
    const watched = (async function* () {
      try {
        yield* source;
      } catch (error) {
        sourceError = error;
        throw error;
      }
    })();
    try {
      const result = await this.inner.putStream(watched, info);
      observe("ok");
      return result;
    } catch (error) {
      if (error !== sourceError) {
        observe(outcomeOf(error));
        logFailure(target, "putStream", fields, error);
      }
      throw error;
    }
  }
  stat(id: ObjectId) {
    return this.#guard("stat", () => this.inner.stat(id));
  }
  read(id: ObjectId, range?: ByteRange) {
    return this.#guard("read", () => this.inner.read(id, range));
  }
  stream(id: ObjectId, range?: ByteRange) {
    return this.#guard("stream", () => this.inner.stream(id, range));
  }
  delete(id: ObjectId) {
    return this.#guard("delete", () => this.inner.delete(id));
  }
  count() {
    return this.#guard("count", () => this.inner.count());
  }
}

/** A store whose every exception is logged (and observed); see {@link loggedStore}. */
export interface LoggedStore extends Store {
  /**
   * The same store for one request: its failure records carry `fields` (the request's
   * runtime uses it, `requestRuntime` in `src/services/runtime.ts`).
   */
  forRequest(fields: RequestFields): Store;
}

/** What every view of one logged store shares. */
class Shared {
  readonly self: Target;
  readonly files: Target;
  readonly targets = new Map<string, Target>();
  readonly collections = new Map<string, LoggedCollection>();
  sharedFiles?: LoggedFiles;
  readonly changeMark?: (name: string) => number;
  readonly watch?: Store["watch"];
  constructor(readonly store: Store, readonly base: Omit<Target, "name">) {
    this.self = { ...base, name: "store" };
    this.files = { ...base, name: "files" };
    if (store.changeMark) this.changeMark = (name) => store.changeMark!(name);
    if (store.watch) this.watch = (collections, handlers) => store.watch!(collections, handlers);
  }
  target(name: string): Target {
    let target = this.targets.get(name);
    if (!target) this.targets.set(name, target = { ...this.base, name });
    return target;
  }
}

/** The logged store as seen with a request's fields (none: outside any request). */
class LoggedStoreView implements LoggedStore {
  readonly kind: string;
  readonly storedDocuments?: boolean;
  readonly atomicAlongside?: boolean;
  readonly changeMark?: (name: string) => number;
  readonly watch?: Store["watch"];
  readonly #shared: Shared;
  readonly #fields: RequestFields | undefined;
  constructor(shared: Shared, fields: RequestFields | undefined) {
    this.#shared = shared;
    this.#fields = fields;
    const { store } = shared;
    this.kind = store.kind;
    this.storedDocuments = store.storedDocuments;
    this.atomicAlongside = store.atomicAlongside;
    this.changeMark = shared.changeMark;
    this.watch = shared.watch;
  }
  forRequest(fields: RequestFields): Store {
    return new LoggedStoreView(this.#shared, fields);
  }
  collection(name: string): Collection {
    const shared = this.#shared;
    let collection = shared.collections.get(name);
    if (!collection) {
      collection = new LoggedCollection(shared.store.collection(name), shared.target(name));
      shared.collections.set(name, collection);
    }
    const fields = this.#fields;
    return fields ? new LoggedCollection(collection.inner, collection.target, fields) : collection;
  }
  get files(): FileStore {
    const shared = this.#shared;
    if (this.#fields) return new LoggedFiles(shared.store.files, shared.files, this.#fields);
    return shared.sharedFiles ??= new LoggedFiles(shared.store.files, shared.files, undefined);
  }
  collectionNames(): Promise<string[]> {
    const { self, store } = this.#shared;
    return guard(self, "collectionNames", this.#fields, () => store.collectionNames());
  }
  ping(): Promise<void> {
    const { self, store } = this.#shared;
    return guard(self, "ping", this.#fields, () => store.ping());
  }
  close(): Promise<void> {
    return this.#shared.store.close();
  }
}

/** Returns `store` with every database exception logged to `log` (and `observe`d). */
export function loggedStore(
  store: Store,
  log: Logger,
  options: LoggedStoreOptions = {},
): LoggedStore {
  return new LoggedStoreView(new Shared(store, { log, observe: options.observe }), undefined);
}
