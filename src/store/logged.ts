/**
 * A store decorator that logs every exception of the database layer, then rethrows it
 * unchanged (the HTTP layer still decides the response). Records carry the operation, the
 * collection, the error with its stack, and the request fields (`clientip`, `url`,
 * `method`) of the request being handled.
 *
 * A unique-index violation (`DuplicateKeyError`) is logged at "warn": the client gets a
 * validation error for it; anything else at "error".
 *
 * An optional `observe` hook hears of every operation, failed or not, with its duration
 * (the metrics use it).
 */
import { describeError, type Level, logContext, type Logger } from "../log.ts";
import {
  type Collection,
  DuplicateKeyError,
  type FileStore,
  InvalidQueryError,
  QueryTimeoutError,
  type Store,
} from "./store.ts";

type AsyncFn = (...args: never[]) => Promise<unknown>;

/** Logs a database error of `operation` on `target`. */
function logFailure(log: Logger, at: { target: string; operation: string }, error: unknown) {
  const level: Level = error instanceof DuplicateKeyError ? "warn" : "error";
  log.log(level, `database error in ${at.operation} on ${at.target}`, {
    ...logContext(),
    operation: at.operation,
    collection: at.target,
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

interface Target {
  log: Logger;
  name: string;
  observe?: LoggedStoreOptions["observe"];
}

/** Wraps `fn` so that a rejection is logged (as `target`.`operation`) and rethrown. */
function guard<F extends AsyncFn>(target: Target, operation: string, fn: F): F {
  const { log, observe } = target;
  const collection = target.name;
  if (!observe) {
    // Without an observer, only a failure has something to do: no closure, and no async
    // step of its own, per call (the operation's promise with a rejection handler).
    const failed = (error: unknown) => {
      logFailure(log, { target: collection, operation }, error);
      throw error;
    };
    return ((...args: Parameters<F>) => {
      try {
        return fn(...args).then(undefined, failed);
      } catch (error) {
        // Thrown rather than rejected: still logged, and answered as a rejection.
        return Promise.reject(error).then(undefined, failed);
      }
    }) as F;
  }
  return (async (...args: Parameters<F>) => {
    const started = performance.now();
    const done = (outcome: StoreObservation["outcome"]) =>
      observe({ operation, collection, outcome, seconds: (performance.now() - started) / 1000 });
    try {
      const result = await fn(...args);
      done("ok");
      return result;
    } catch (error) {
      done(outcomeOf(error));
      logFailure(log, { target: collection, operation }, error);
      throw error;
    }
  }) as F;
}

function loggedCollection(inner: Collection, options: Omit<Target, "name">): Collection {
  const target = { ...options, name: inner.name };
  const g = <F extends AsyncFn>(operation: string, fn: F) =>
    guard(target, operation, fn.bind(inner) as F);
  return {
    name: inner.name,
    find: g("find", inner.find),
    findOne: g("findOne", inner.findOne),
    count: g("count", inner.count),
    insertMany: g("insertMany", inner.insertMany),
    replaceOne: g("replaceOne", inner.replaceOne),
    updateOne: g("updateOne", inner.updateOne),
    updateMany: g("updateMany", inner.updateMany),
    deleteOne: g("deleteOne", inner.deleteOne),
    deleteMany: g("deleteMany", inner.deleteMany),
    aggregate: g("aggregate", inner.aggregate),
    distinct: g("distinct", inner.distinct),
    createIndex: g("createIndex", inner.createIndex),
    drop: g("drop", inner.drop),
  };
}

function loggedFiles(inner: FileStore, options: Omit<Target, "name">): FileStore {
  const target = { ...options, name: "files" };
  const g = <F extends AsyncFn>(operation: string, fn: F) =>
    guard(target, operation, fn.bind(inner) as F);
  return {
    put: g("put", inner.put),
    // An error of the source (a refused or aborted upload) is the caller's, not the store's.
    async putStream(source, info) {
      const started = performance.now();
      const observe = (outcome: StoreObservation["outcome"]) =>
        options.observe?.({
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
        const result = await inner.putStream(watched, info);
        observe("ok");
        return result;
      } catch (error) {
        if (error !== sourceError) {
          observe(outcomeOf(error));
          logFailure(options.log, { target: "files", operation: "putStream" }, error);
        }
        throw error;
      }
    },
    stat: g("stat", inner.stat),
    read: g("read", inner.read),
    stream: g("stream", inner.stream),
    delete: g("delete", inner.delete),
    count: g("count", inner.count),
  };
}

/** Returns `store` with every database exception logged to `log` (and `observe`d). */
export function loggedStore(store: Store, log: Logger, options: LoggedStoreOptions = {}): Store {
  const base = { log, observe: options.observe };
  const self = { ...base, name: "store" };
  const collections = new Map<string, Collection>();
  let files: FileStore | undefined;
  return {
    kind: store.kind,
    storedDocuments: store.storedDocuments,
    atomicAlongside: store.atomicAlongside,
    ...(store.changeMark ? { changeMark: (name: string) => store.changeMark!(name) } : {}),
    collection(name) {
      let collection = collections.get(name);
      if (!collection) {
        collection = loggedCollection(store.collection(name), base);
        collections.set(name, collection);
      }
      return collection;
    },
    get files() {
      return files ??= loggedFiles(store.files, base);
    },
    collectionNames: guard(self, "collectionNames", () => store.collectionNames()),
    ping: guard(self, "ping", () => store.ping()),
    close: () => store.close(),
    watch: store.watch ? (collections, handlers) => store.watch!(collections, handlers) : undefined,
  };
}
