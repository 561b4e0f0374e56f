/**
 * The event bus: in-process callbacks registered by an embedding application.
 *
 * ```ts
 * const service = await createService(settings);
 * service.events
 *   .on("on_pre_GET_people", (request, lookup) => { lookup.owner = userOf(request); })
 *   .on("on_insert", (resource, items) => { for (const item of items) item.source = "api"; })
 *   .on("on_delete_item_people", () => { throw new HttpError(403, "people are forever"); });
 * ```
 *
 * For events with a resource-specific form both forms are raised: the generic one first
 * (`on_insert(resource, items)`), then `on_insert_<resource>(items)`, which omits the
 * resource argument. Several callbacks may share an event; they run one after the other
 * in registration order, and may be sync or async (each is awaited before the next).
 *
 * A callback that throws stops the request: an `HttpError` becomes the response with its
 * status (a before event thrown this way aborts the write, so nothing is stored);
 * anything else becomes a 500 with a generic body, and its stack is logged.
 *
 * Every event of the catalogue below is part of the API. `on_oplog_push` is raised with
 * OPLOG on, before the entries of a write are stored (throwing aborts the write).
 *
 * During a request, callbacks run with its log context: `logContext()` (`src/log.ts`) gives
 * them the request's fields, and `createLogger` loggers add those to their records.
 */
import type { Doc } from "./store/store.ts";
import { type RequestFields, withLogContext } from "./log.ts";

// deno-lint-ignore no-explicit-any
export type Callback = (...args: any[]) => unknown;

/** The settled answer of a raise nobody listens to. */
const DONE: Promise<void> = Promise.resolve();

/** Methods with request events; HEAD raises the GET events. */
export type EventMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/**
 * What `on_post_<METHOD>` callbacks receive as `payload`: the reply about to be rendered
 * (status, headers, and the body as a document, before JSON/XML rendering). Changes made
 * to it reach the client. Error responses do not raise `on_post_<METHOD>`.
 */
export interface Payload {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

type Hook<Args extends unknown[]> = (...args: Args) => unknown;

/**
 * Every event and the arguments of its generic form. The `_<resource>` form of an event
 * (see {@linkcode RESOURCE_EVENTS}) takes the same arguments without the first one.
 */
export interface EventSignatures {
  /** A GET or HEAD request was received; `lookup` may be altered (a dynamic filter). */
  on_pre_GET: Hook<[resource: string, request: Request, lookup: Doc]>;
  /** A POST request was received (its body is already read). */
  on_pre_POST: Hook<[resource: string, request: Request]>;
  on_pre_PATCH: Hook<[resource: string, request: Request, lookup: Doc]>;
  on_pre_PUT: Hook<[resource: string, request: Request, lookup: Doc]>;
  on_pre_DELETE: Hook<[resource: string, request: Request, lookup: Doc]>;
  /** A GET or HEAD request was answered successfully; `payload` may be altered. */
  on_post_GET: Hook<[resource: string, request: Request, payload: Payload]>;
  on_post_POST: Hook<[resource: string, request: Request, payload: Payload]>;
  on_post_PATCH: Hook<[resource: string, request: Request, payload: Payload]>;
  on_post_PUT: Hook<[resource: string, request: Request, payload: Payload]>;
  on_post_DELETE: Hook<[resource: string, request: Request, payload: Payload]>;
  /** The collection envelope (`_items`, `_meta`, `_links`) about to be sent; may be altered. */
  on_fetched_resource: Hook<[resource: string, response: Doc]>;
  /** The item about to be sent; may be altered (`ETag`/`Last-Modified` keep the stored state). */
  on_fetched_item: Hook<[resource: string, response: Doc]>;
  /** Diffs of a versioned item (`version=diffs`); not raised until versioning serves them. */
  on_fetched_diffs: Hook<[resource: string, response: Doc]>;
  /** Valid documents about to be inserted; changes are stored. Throw to abort. */
  on_insert: Hook<[resource: string, items: Doc[]]>;
  on_inserted: Hook<[resource: string, items: Doc[]]>;
  /** The validated replacement about to be stored, and the stored original. Throw to abort. */
  on_replace: Hook<[resource: string, item: Doc, original: Doc]>;
  on_replaced: Hook<[resource: string, item: Doc, original: Doc]>;
  /** The validated updates about to be applied, and the stored original. Throw to abort. */
  on_update: Hook<[resource: string, updates: Doc, original: Doc]>;
  on_updated: Hook<[resource: string, updates: Doc, original: Doc]>;
  /** The stored document about to be deleted. Throw to abort. */
  on_delete_item: Hook<[resource: string, item: Doc]>;
  on_deleted_item: Hook<[resource: string, item: Doc]>;
  /** Every document of the endpoint is about to be deleted. Throw to abort. */
  on_delete_resource: Hook<[resource: string]>;
  /** The documents about to be deleted (soft-deleted ones included), and the lookup. */
  on_delete_resource_originals: Hook<[resource: string, originals: Doc[], lookup: Doc]>;
  on_deleted_resource: Hook<[resource: string]>;
  /** The pipeline of an aggregation endpoint about to run; may be altered in place. */
  before_aggregation: Hook<[endpoint: string, pipeline: Doc[]]>;
  /** The documents an aggregation returned; may be altered in place. */
  after_aggregation: Hook<[endpoint: string, documents: Doc[]]>;
  /**
   * Operation-log entries about to be written with their change; callbacks may set `extra`
   * (any value) on each. Only the generic form exists.
   */
  on_oplog_push: Hook<[resource: string, entries: Doc[]]>;
}

/** Names of every event of the catalogue (generic forms). */
export type EventName = keyof EventSignatures;

/** Events that also have the `_<resource_name>` form. */
export const RESOURCE_EVENTS: readonly EventName[] = [
  "on_pre_GET",
  "on_pre_POST",
  "on_pre_PATCH",
  "on_pre_PUT",
  "on_pre_DELETE",
  "on_post_GET",
  "on_post_POST",
  "on_post_PATCH",
  "on_post_PUT",
  "on_post_DELETE",
  "on_fetched_resource",
  "on_fetched_item",
  "on_fetched_diffs",
  "on_insert",
  "on_inserted",
  "on_replace",
  "on_replaced",
  "on_update",
  "on_updated",
  "on_delete_item",
  "on_deleted_item",
  "on_delete_resource",
  "on_delete_resource_originals",
  "on_deleted_resource",
  "before_aggregation",
  "after_aggregation",
];

/** Every event of the catalogue (generic forms). */
export const EVENTS: readonly EventName[] = [...RESOURCE_EVENTS, "on_oplog_push"];

/** Awaits each callback of `list` in turn, with `args`. */
async function runAll(list: Callback[], args: unknown[]): Promise<void> {
  // A callback that (un)registers others does not change the current round (`list` is a copy).
  for (const callback of list) await callback(...args);
}

/** The name of the resource-specific form of `event`: `on_insert` + `people` → `on_insert_people`. */
export function resourceEvent(event: string, resource: string): string {
  return `${event}_${resource}`;
}

export class Events {
  #callbacks = new Map<string, Callback[]>();
  /** The request fields callbacks run with (a request's view, {@linkcode inRequest}). */
  #fields: RequestFields | undefined;

  /**
   * These registrations as one request raises them: callbacks run inside the request's log
   * context. Registering through the view registers for every request.
   */
  inRequest(fields: RequestFields): Events {
    const view = new Events();
    view.#callbacks = this.#callbacks;
    view.#fields = fields;
    return view;
  }

  /**
   * Registers `callback` for `event` (a generic name of the catalogue, or a
   * `<event>_<resource>` form); several callbacks may share one event.
   */
  on<E extends EventName>(event: E, callback: EventSignatures[E]): this;
  on(event: string, callback: Callback): this;
  on(event: string, callback: Callback): this {
    if (typeof callback !== "function") {
      throw new TypeError(`callback for ${event} must be a function`);
    }
    const list = this.#callbacks.get(event);
    if (list) list.push(callback);
    else this.#callbacks.set(event, [callback]);
    return this;
  }

  /** Removes one registration of `callback` (the latest one when registered several times). */
  off(event: string, callback: Callback): this {
    const list = this.#callbacks.get(event);
    const at = list?.lastIndexOf(callback) ?? -1;
    if (at >= 0) list!.splice(at, 1);
    return this;
  }

  /** True when anything listens to any event (most services listen to none). */
  get listening(): boolean {
    return this.#callbacks.size > 0;
  }

  /** True when anything listens to `event` or its `_<resource>` form. */
  has(event: string, resource?: string): boolean {
    if (this.#callbacks.size === 0) return false;
    return !!(this.#callbacks.get(event)?.length ||
      (resource && this.#callbacks.get(resourceEvent(event, resource))?.length));
  }

  /**
   * Raises `event` alone, with `args`: each callback is awaited in registration order;
   * the first one that throws stops the others and the error propagates.
   */
  emit(event: string, ...args: unknown[]): Promise<void> {
    const list = this.#callbacks.get(event);
    if (!list?.length) return DONE;
    return this.#run([...list], args);
  }

  #run(list: Callback[], args: unknown[]): Promise<void> {
    const fields = this.#fields;
    return fields ? withLogContext(fields, () => runAll(list, args)) : runAll(list, args);
  }

  /** Raises the generic form with the resource name first, then the `_<resource>` form. */
  emitFor(event: string, resource: string, ...args: unknown[]): Promise<void> {
    // Every request raises events; most services listen to none of them.
    if (this.#callbacks.size === 0) return DONE;
    return this.#emitBoth(event, resource, args);
  }

  async #emitBoth(event: string, resource: string, args: unknown[]): Promise<void> {
    await this.emit(event, resource, ...args);
    await this.emit(resourceEvent(event, resource), ...args);
  }
}
