/**
 * The change hub behind every change feed (docs/oplog-and-change-feed.md): it numbers each change of
 * a document (from the service's write path, or from a MongoDB change stream), keeps the
 * recent ones for `Last-Event-ID` resume (a count and an age bound), and fans them out to
 * the open feeds.
 *
 * Each feed is a {@link Subscription} with its own bounded queue of the events it may see
 * (its filter runs when a change is published). A client that does not read falls behind:
 * once its queue is full it is dropped, never buffered without bound.
 */
import type { ChangeWatcher, Doc, Store } from "../store/store.ts";
import { describeError, type Logger } from "../log.ts";
import type { ChangesConfig } from "./changes_config.ts";
import { idToString } from "../doc/bson.ts";

/** What a write did to one document. */
export type ChangeOp = "insert" | "update" | "replace" | "delete";

/** One written document, as the write path or a change stream reports it. */
export interface ChangeInput {
  /** The collection written (`datasource.source`). */
  collection: string;
  op: ChangeOp;
  id: unknown;
  /** The document as stored after the write; null once removed. */
  doc: Doc | null;
  /**
   * The document before the write: null for an insert, undefined when unknown (a change
   * stream without pre-images).
   */
  before?: Doc | null;
}

/** A numbered change. */
export interface Change extends ChangeInput {
  seq: number;
  /** When the hub received it (ms since the epoch). */
  time: number;
}

/** What a feed shows of a change: its event name, or null when the feed must not see it. */
export type Selector = (change: Change) => ChangeOp | null;

/** An event waiting in a subscription's queue. */
export interface FeedEvent {
  change: Change;
  /** The event name this feed shows (a document leaving the feed's view is a `delete`). */
  kind: ChangeOp;
}

/** Why a subscription ended. */
export type CloseReason = "client" | "behind" | "shutdown";

/** Thrown by {@link ChangeHub.subscribe} past CHANGES_MAX_CONNECTIONS. */
export class FeedsFullError extends Error {
  constructor(limit: number) {
    super(`at most ${limit} change feeds may be open`);
    this.name = "FeedsFullError";
  }
}

/** An event position (`Last-Event-ID`): the hub's boot id and a change number. */
export interface Position {
  boot: string;
  seq: number;
}

/** One open feed: a bounded queue of the events it may see. */
export class Subscription {
  #queue: FeedEvent[] = [];
  /** Replayed events still queued: they do not count against the limit. */
  #replayed = 0;
  #wake: (() => void) | undefined;
  #closed: CloseReason | undefined;
  #ended = Promise.withResolvers<CloseReason>();

  constructor(
    readonly collection: string,
    readonly select: Selector,
    private readonly options: { limit: number; onClose: (sub: Subscription) => void },
  ) {}

  /** Why the subscription ended; undefined while open. */
  get closed(): CloseReason | undefined {
    return this.#closed;
  }

  /** Resolves with the reason once the subscription is closed. */
  get ended(): Promise<CloseReason> {
    return this.#ended.promise;
  }

  /** Queues `change` when this feed may see it; drops the feed when its queue is full. */
  offer(change: Change, replay = false): void {
    if (this.#closed || change.collection !== this.collection) return;
    const kind = this.select(change);
    if (!kind) return;
    if (replay) this.#replayed++;
    else if (this.#queue.length - this.#replayed >= this.options.limit) {
      this.close("behind");
      return;
    }
    this.#queue.push({ change, kind });
    this.#notify();
  }

  /** The next event, waiting for one; null once the subscription is closed. */
  async next(): Promise<FeedEvent | null> {
    while (!this.#closed) {
      const event = this.#queue.shift();
      if (event) {
        if (this.#replayed > 0) this.#replayed--;
        return event;
      }
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    return null;
  }

  /** Ends the subscription (idempotent); queued events are dropped. */
  close(reason: CloseReason): void {
    if (this.#closed) return;
    this.#closed = reason;
    this.#queue = [];
    this.#notify();
    this.options.onClose(this);
    this.#ended.resolve(reason);
  }

  #notify() {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** What {@link ChangeHub.subscribe} answers. */
export interface Subscribed {
  subscription: Subscription;
  /** The position before any live event: the id of the feed's opening event. */
  position: string;
  /**
   * Set when a resume was asked from a position the hub no longer holds (outside the
   * retention window, or from another run of the service): the client must re-read.
   */
  reset?: string;
}

/** Retained changes: a queue trimmed from the front by count and age. */
class Retained {
  #items: Change[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  /** The oldest retained change, if any. */
  first(): Change | undefined {
    return this.#items[this.#head];
  }

  push(change: Change) {
    this.#items.push(change);
  }

  /** Changes with a number above `seq`, oldest first. */
  after(seq: number): Change[] {
    const out: Change[] = [];
    for (let i = this.#head; i < this.#items.length; i++) {
      if (this.#items[i].seq > seq) out.push(this.#items[i]);
    }
    return out;
  }

  trim(options: { max: number; olderThan: number }) {
    while (
      this.size > 0 && (this.size > options.max || this.#items[this.#head].time < options.olderThan)
    ) {
      this.#head++;
    }
    // Compact once the dead front outgrows the live part.
    if (this.#head > 1024 && this.#head > this.size) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }

  clear() {
    this.#items = [];
    this.#head = 0;
  }
}

/** How many of its own writes the hub remembers for a change stream (see `written`). */
const KNOWN_MAX = 10_000;

/** Where the hub's changes come from (logged at start-up). */
export type HubSource = "writes" | "stream";

/** The service's change hub: numbering, retention and fan-out. */
export class ChangeHub {
  /** Tells this run of the service apart in event ids: ids of another run are not resumed. */
  readonly boot: string = crypto.randomUUID().slice(0, 8);
  /** `writes` until a change stream is opened; the write path is ignored meanwhile. */
  source: HubSource = "writes";
  #seq = 0;
  /** Positions below this one lost their history (a reset). */
  #floor = 0;
  #retained = new Retained();
  #subscribers = new Set<Subscription>();
  #watcher: ChangeWatcher | null = null;
  /** The state before each recent write of this service, until the stream reports it. */
  #known = new Map<string, Doc | null>();

  /**
   * `collections`: the collections of the resources with a feed; `etagField`: where
   * documents keep their ETag (ETAG), to match the stream's events with the writes.
   */
  constructor(
    readonly config: ChangesConfig,
    readonly options: { collections: ReadonlySet<string>; etagField: string },
  ) {}

  get collections(): ReadonlySet<string> {
    return this.options.collections;
  }

  /** Whether writes to `collection` concern any feed. */
  watches(collection: string): boolean {
    return this.collections.has(collection);
  }

  /**
   * Picks the source, once at start-up, and logs it: the store's change stream where the
   * deployment has one (unless CHANGES_SOURCE is `writes`), else the service's write path.
   */
  start(store: Store, log: Logger): void {
    const collections = [...this.collections];
    if (this.config.source === "auto" && store.watch) {
      this.#watcher = store.watch(collections, {
        change: (change) => this.publish(change),
        lost: () => {
          log.log("warn", "change feed: the change stream lost its place; feeds restart", {});
          this.reset();
        },
        error: (error) => {
          log.log("error", "change feed: change stream error", { error: describeError(error) });
        },
      });
    }
    this.source = this.#watcher ? "stream" : "writes";
    const why = this.#watcher
      ? "MongoDB change streams"
      : this.config.source === "writes"
      ? "the service's write path (CHANGES_SOURCE)"
      : `the service's write path (the ${store.kind} store has no change streams here)`;
    log.log("info", `change feed source: ${why}`, { collections });
  }

  /** Closes every feed and the change stream. */
  async close(): Promise<void> {
    this.closeAll();
    await this.#watcher?.close();
    this.#watcher = null;
  }

  /** Open feeds. */
  get connections(): number {
    return this.#subscribers.size;
  }

  /** The current position as an event id. */
  position(): string {
    return `${this.boot}-${this.#seq}`;
  }

  /**
   * Changes acknowledged by the service's write path. With a change stream as the source
   * they are not published (the stream reports them) but the state before each is kept
   * for a while: a stream without pre-images does not tell it, and feeds need it to see a
   * document leave their view, or to know whose document a delete removed.
   */
  written(changes: ChangeInput[]): void {
    if (this.source === "writes") {
      for (const change of changes) this.publish(change);
      return;
    }
    for (const change of changes) {
      if (change.before === undefined) continue;
      this.#known.set(this.#knownKey(change), change.before);
      if (this.#known.size > KNOWN_MAX) this.#known.delete(this.#known.keys().next().value!);
    }
  }

  /** Numbers `input`, retains it and offers it to every open feed. */
  publish(input: ChangeInput): void {
    let before = input.before;
    if (before === undefined && this.#known.size > 0) {
      const key = this.#knownKey(input);
      before = this.#known.get(key);
      this.#known.delete(key);
    }
    const change: Change = { ...input, before, seq: ++this.#seq, time: Date.now() };
    this.#retained.push(change);
    this.#trim();
    for (const subscription of this.#subscribers) subscription.offer(change);
  }

  /**
   * Forgets the history (a change stream lost its place): positions from before cannot be
   * resumed, and open feeds are closed so their clients reconnect and re-read.
   */
  reset(): void {
    this.#retained.clear();
    this.#floor = ++this.#seq;
    for (const subscription of [...this.#subscribers]) subscription.close("shutdown");
  }

  /**
   * Opens a feed on `collection`. With `after` (a `Last-Event-ID`), the retained events after
   * it are queued first; a position the hub no longer holds answers `reset`.
   * @throws FeedsFullError past CHANGES_MAX_CONNECTIONS.
   */
  subscribe(
    collection: string,
    options: { select: Selector; after?: Position },
  ): Subscribed {
    if (this.#subscribers.size >= this.config.maxConnections) {
      throw new FeedsFullError(this.config.maxConnections);
    }
    this.#trim();
    const subscription = new Subscription(collection, options.select, {
      limit: this.config.queueLimit,
      onClose: (sub) => this.#subscribers.delete(sub),
    });
    const position = this.position();
    let reset: string | undefined;
    const after = options.after;
    if (after) {
      reset = this.#gap(after);
      if (!reset) {
        for (const change of this.#retained.after(after.seq)) subscription.offer(change, true);
      }
    }
    this.#subscribers.add(subscription);
    return { subscription, position, reset };
  }

  /** Identifies one write: the document and its ETag after it (a removal has none). */
  #knownKey(change: ChangeInput): string {
    const etag = change.op === "delete" ? "" : String(change.doc?.[this.options.etagField] ?? "");
    return `${change.collection}\u0000${idToString(change.id)}\u0000${
      change.op === "delete"
    }\u0000${etag}`;
  }

  /** Closes every open feed (shutdown). */
  closeAll(): void {
    for (const subscription of [...this.#subscribers]) subscription.close("shutdown");
  }

  /** Why the events after `after` cannot be replayed; undefined when they can. */
  #gap(after: Position): string | undefined {
    if (after.boot !== this.boot) return "the service restarted since that event";
    if (after.seq > this.#seq) return "that event is unknown";
    if (after.seq < this.#floor) return "the change history was lost since that event";
    const oldest = this.#retained.first()?.seq ?? this.#seq + 1;
    if (after.seq + 1 < oldest) {
      return "that event is older than the retention window";
    }
    return undefined;
  }

  #trim() {
    this.#retained.trim({
      max: this.config.retention,
      olderThan: Date.now() - this.config.retentionMs,
    });
  }
}

/** Parses a `Last-Event-ID` value; null when it is not one of ours. */
export function parsePosition(text: string): Position | null {
  const match = /^([0-9a-f]{8})-(\d{1,15})$/.exec(text);
  return match ? { boot: match[1], seq: Number(match[2]) } : null;
}
