/**
 * The MongoDB store: the `Store` interface on the official `mongodb` driver.
 *
 * @module
 */
import { type Db, MongoClient, type MongoClientOptions } from "mongodb";
import type { ChangeWatcher, Collection, FileStore, Store, WatchHandlers } from "../store.ts";
import { StoreError } from "../store.ts";
import { MongoCollection } from "./collection.ts";
import { translateError } from "./errors.ts";
import { GridFsFileStore } from "./files.ts";
import { watchCollections } from "./watch.ts";
import { type MongoOptions, passwordOf, resolveTarget, scrubSecret } from "./uri.ts";

export type { MongoOptions } from "./uri.ts";

/** Fail fast at start-up instead of the driver's 30 s default; overridable via `options`. */
const DEFAULT_SERVER_SELECTION_MS = 10_000;

class MongoStore implements Store {
  readonly kind = "mongo";
  readonly files: FileStore;
  private readonly collections = new Map<string, Collection>();

  private readonly secret: string | undefined;
  private readonly transactions: boolean;
  private readonly maxTimeMS?: number;
  private readonly writeConcerns: Record<string, Record<string, unknown>>;
  /** The database without a write concern, for reads (see `MongoContext.reads`). */
  private readonly reads: Db;

  /**
   * `secret`: the password, scrubbed from error messages; `transactions`: whether the
   * server has them; `maxTimeMS`: the query time bound.
   */
  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    options: {
      secret: string | undefined;
      transactions: boolean;
      maxTimeMS?: number;
      writeConcerns?: Record<string, Record<string, unknown>>;
    },
  ) {
    this.writeConcerns = options.writeConcerns ?? {};
    this.reads = client.db(db.databaseName, { writeConcern: undefined });
    this.secret = options.secret;
    this.transactions = options.transactions;
    this.maxTimeMS = options.maxTimeMS;
    this.files = new GridFsFileStore(db, this.secret);
  }

  collection(name: string): Collection {
    let coll = this.collections.get(name);
    if (!coll) {
      const writeConcern = Object.hasOwn(this.writeConcerns, name)
        ? this.writeConcerns[name]
        : undefined;
      coll = new MongoCollection(this.db.collection(name, { writeConcern }), this.secret, {
        client: this.client,
        db: this.db,
        reads: this.reads.collection(name),
        transactions: this.transactions,
        maxTimeMS: this.maxTimeMS,
      });
      this.collections.set(name, coll);
    }
    return coll;
  }

  /**
   * Change streams need what transactions need: a replica set or a sharded cluster
   * (detected at start-up with `hello`); null on a standalone server.
   */
  watch(collections: string[], handlers: WatchHandlers): ChangeWatcher | null {
    if (!this.transactions) return null;
    return watchCollections(this.db, collections, handlers);
  }

  /** Names from `listCollections`; a server that cannot list them fails the call. */
  async collectionNames(): Promise<string[]> {
    try {
      const infos = await this.db.listCollections({}, { nameOnly: true }).toArray();
      return infos.map((c) => c.name).filter((n) => !n.startsWith("system."));
    } catch (err) {
      throw translateError(err, this.secret);
    }
  }

  async ping(): Promise<void> {
    try {
      await this.db.command({ ping: 1 });
    } catch (err) {
      throw translateError(err, this.secret);
    }
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/**
 * Whether the deployment runs multi-document transactions: a replica set member (`setName`)
 * or a sharded cluster's router (`msg: "isdbgrid"`). A standalone server does not.
 */
async function supportsTransactions(db: Db): Promise<boolean> {
  try {
    const hello = await db.command({ hello: 1 });
    return typeof hello.setName === "string" || hello.msg === "isdbgrid";
  } catch {
    return false;
  }
}

/**
 * Connects to MongoDB and returns a `Store` (kind `"mongo"`).
 *
 * `options.uri` wins; otherwise the URI is built from host (default `localhost`), port
 * (27017), URL-encoded credentials and `authSource`. The database is `dbName`, else the one
 * named in the URI, else `"eve"`. Driver options (e.g. `directConnection: true`, needed for
 * the jongodb emulator) go in `options.options` or the URI query.
 *
 * @throws StoreError when the server cannot be reached; the message never holds the password.
 */
export async function openMongoStore(options: MongoOptions): Promise<Store> {
  const secret = passwordOf(options);
  let redacted = "MongoDB";
  let client: MongoClient | undefined;
  try {
    const target = resolveTarget(options);
    redacted = target.redacted;
    const clientOptions: MongoClientOptions = {
      serverSelectionTimeoutMS: DEFAULT_SERVER_SELECTION_MS,
      ...(options.options as MongoClientOptions | undefined),
    };
    client = new MongoClient(target.uri, clientOptions);
    await client.connect();
    const db = client.db(target.dbName);
    await db.command({ ping: 1 });
    return new MongoStore(client, db, {
      secret,
      transactions: await supportsTransactions(db),
      maxTimeMS: options.queryTimeoutMs,
      writeConcerns: options.writeConcerns,
    });
  } catch (err) {
    await client?.close().catch(() => {});
    const reason = scrubSecret(err instanceof Error ? err.message : String(err), secret);
    throw new StoreError(`cannot connect to MongoDB at ${redacted}: ${reason}`, {
      cause: secret ? undefined : err,
    });
  }
}
