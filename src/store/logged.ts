/**
 * A store decorator that logs every exception of the database layer, then rethrows it
 * unchanged (the HTTP layer still decides the response). Records carry the operation, the
 * collection, the error with its stack, and the request fields (`clientip`, `url`,
 * `method`) of the request being handled.
 *
 * A unique-index violation (`DuplicateKeyError`) is logged at "warn": the client gets a
 * validation error for it; anything else at "error".
 */
import { describeError, type Level, logContext, type Logger } from "../log.ts";
import { type Collection, DuplicateKeyError, type FileStore, type Store } from "./store.ts";

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

/** Wraps `fn` so that a rejection is logged (as `target`.`operation`) and rethrown. */
function guard<F extends AsyncFn>(log: Logger, target: string, operation: string, fn: F): F {
  return (async (...args: Parameters<F>) => {
    try {
      return await fn(...args);
    } catch (error) {
      logFailure(log, { target, operation }, error);
      throw error;
    }
  }) as F;
}

function loggedCollection(inner: Collection, log: Logger): Collection {
  const g = <F extends AsyncFn>(operation: string, fn: F) =>
    guard(log, inner.name, operation, fn.bind(inner) as F);
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

function loggedFiles(inner: FileStore, log: Logger): FileStore {
  const g = <F extends AsyncFn>(operation: string, fn: F) =>
    guard(log, "files", operation, fn.bind(inner) as F);
  return {
    put: g("put", inner.put),
    // An error of the source (a refused or aborted upload) is the caller's, not the store's.
    async putStream(source, info) {
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
        return await inner.putStream(watched, info);
      } catch (error) {
        if (error !== sourceError) {
          logFailure(log, { target: "files", operation: "putStream" }, error);
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

/** Returns `store` with every database exception logged to `log`. */
export function loggedStore(store: Store, log: Logger): Store {
  const collections = new Map<string, Collection>();
  let files: FileStore | undefined;
  return {
    kind: store.kind,
    collection(name) {
      let collection = collections.get(name);
      if (!collection) {
        collection = loggedCollection(store.collection(name), log);
        collections.set(name, collection);
      }
      return collection;
    },
    get files() {
      return files ??= loggedFiles(store.files, log);
    },
    collectionNames: guard(log, "store", "collectionNames", () => store.collectionNames()),
    ping: guard(log, "store", "ping", () => store.ping()),
    close: () => store.close(),
    watch: store.watch ? (collections, handlers) => store.watch!(collections, handlers) : undefined,
  };
}
