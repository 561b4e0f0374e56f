/**
 * In-process data access: reads and writes on any resource, internal ones included, for
 * the application embedding the service (hooks keeping an audit trail in an internal
 * resource, jobs, seeding). Each call runs the same service code as HTTP: validation,
 * defaults, versioning, soft delete, the operation log and the database events. It skips
 * what belongs to HTTP: authentication, allowed methods, request events
 * (`on_pre_*`/`on_post_*`) and rendering.
 *
 * ```ts
 * const service = await createService(settings);
 * service.events.on("on_inserted_people", async (items) => {
 *   for (const item of items) await service.data.post("audit", { action: "create", who: item._id });
 * });
 * const { body } = await service.data.get("audit", { query: { where: '{"action": "create"}' } });
 * ```
 */
import { notFound, ServiceError } from "./errors.ts";
import type { Method, Resource } from "../domain/types.ts";
import { ObjectId } from "../doc/bson.ts";
import type { Doc } from "../store/store.ts";
import { castUrlValue } from "./meta.ts";
import { getCollection, getItem } from "./read.ts";
import type { RequestContext, Runtime } from "./runtime.ts";
import { postCollection } from "./methods/post.ts";
import { putItem } from "./methods/put.ts";
import { patchItem } from "./methods/patch.ts";
import { deleteCollection, deleteItem } from "./methods/delete.ts";
import { checkValueBudget } from "./value_budget.ts";
import { isPlainObject } from "../util/plain.ts";

/** Where a call applies: an item (`id`) and sub-resource URL variables. */
export interface Target {
  /** The document's id (an ObjectId, or its hex string for ObjectId ids). */
  id?: unknown;
  /** Values of a sub-resource's URL variables, by field. */
  urlValues?: Doc;
  /**
   * The ETag the document must still have (like `If-Match`). Without it the write is
   * unconditional, as Eve's internal calls are (the store still refuses a write racing
   * with another one).
   */
  etag?: string;
}

/** What an in-process call answers: the reply HTTP would render, before rendering. */
export interface DataReply {
  status: number;
  /** The body as documents (a write response, an item or a collection envelope). */
  // deno-lint-ignore no-explicit-any -- the embedding app reads the documents of its own schema
  body?: any;
  headers?: Record<string, string>;
}

/**
 * The in-process API. Every call resolves with the reply HTTP would render (`status`,
 * `body` as documents: dates are `Date`s, ids `ObjectId`s) and rejects with the
 * `HttpError` HTTP would answer (404, 412, 422 with `_issues` in `extra.body` ...).
 */
export interface DataAccess {
  /** A resource's items (`query`: `where`, `sort`, `page`, ...) or, with `id`, one item. */
  get(resource: string, options?: Target & { query?: Record<string, string> }): Promise<DataReply>;
  /** Creates one document, or several from a list. */
  post(
    resource: string,
    body: Doc | Doc[],
    options?: Pick<Target, "urlValues">,
  ): Promise<DataReply>;
  /** Changes the named fields of the item `id`. */
  patch(resource: string, options: Target & { id: unknown; changes: Doc }): Promise<DataReply>;
  /** Replaces the item `id` (creating it when UPSERT_ON_PUT). */
  put(resource: string, options: Target & { id: unknown; doc: Doc }): Promise<DataReply>;
  /** Deletes the item `id`, or without `id` every document of the resource. */
  delete(resource: string, options?: Target): Promise<DataReply>;
}

/** The in-process API over a runtime. */
export function createDataAccess(rt: Runtime): DataAccess {
  const run = (
    method: Method,
    name: string,
    options: Target & { query?: Record<string, string>; body?: unknown },
  ) => {
    const resource = rt.domain.get(name);
    if (!resource) throw new ServiceError("not-found", `no resource named "${name}"`);
    if (method !== "GET" && isOplog(rt, resource)) {
      throw new ServiceError("method-not-allowed", "the operation log is read-only");
    }
    const item = options.id !== undefined && options.id !== null;
    if (!item && (method === "PATCH" || method === "PUT")) {
      throw new ServiceError("bad-request", `${method} needs the id of the document`);
    }
    // HTTP bodies are checked on their bytes; these never were bytes.
    if (options.body !== undefined) checkValueBudget(options.body, rt.settings);
    const ctx = contextFor(resource, method, options);
    switch (method) {
      case "GET":
        return item ? getItem(rt, ctx) : getCollection(rt, ctx);
      case "POST":
        return postCollection(rt, ctx);
      case "PATCH":
        return patchItem(rt, ctx);
      case "PUT":
        return putItem(rt, ctx);
      default:
        return item ? deleteItem(rt, ctx) : deleteCollection(rt, ctx);
    }
  };
  // Errors thrown while building the context reject the promise like service errors.
  const call = (...args: Parameters<typeof run>) => Promise.resolve().then(() => run(...args));
  return {
    get: (name, options = {}) => call("GET", name, options),
    post: (name, body, options = {}) => call("POST", name, { ...options, id: undefined, body }),
    patch: (name, { changes, ...options }) => call("PATCH", name, { ...options, body: changes }),
    put: (name, { doc, ...options }) => call("PUT", name, { ...options, body: doc }),
    delete: (name, options = {}) => call("DELETE", name, options),
  };
}

function isOplog(rt: Runtime, resource: Resource): boolean {
  return rt.settings.OPLOG === true && resource.name === rt.settings.OPLOG_NAME;
}

/** Whether `v` is one value, not an object or list (which a lookup would take as operators). */
function isOneValue(v: unknown): boolean {
  return !isPlainObject(v) && !Array.isArray(v);
}

/** The request context of an in-process call. */
function contextFor(
  resource: Resource,
  method: Method,
  options: Target & { query?: Record<string, string>; body?: unknown },
): RequestContext {
  const urlValues: Doc = { ...options.urlValues };
  for (const [field, value] of Object.entries(urlValues)) {
    // Each is matched as a value in the lookup, as a URL's text is: never an operator.
    if (!isOneValue(value)) {
      throw new ServiceError("bad-request", `the URL variable "${field}" must be one value`);
    }
  }
  const resourcePath = resource.urlParts.map((part) => {
    if (typeof part === "string") return part;
    const value = urlValues[part.field];
    if (value === undefined) {
      throw new ServiceError(
        "bad-request",
        `the URL variable "${part.field}" of ${resource.name} is needed`,
      );
    }
    return value instanceof ObjectId ? value.toHexString() : encodeURIComponent(String(value));
  }).join("/");
  const lookup: Doc = {};
  // An id is one value: an object or a list here would be an operator in the lookup (a hook
  // passing on a client's `{"$gt": ""}` would reach whatever document sorts first).
  if (!isOneValue(options.id)) {
    throw new ServiceError("bad-request", "id must be one value (a string, number or ObjectId)");
  }
  if (options.id !== undefined && options.id !== null) {
    const id = typeof options.id === "string"
      ? castUrlValue(resource, { field: resource.idField, raw: options.id })
      : options.id;
    if (id === null) throw notFound();
    lookup[resource.idField] = id;
  }
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (typeof value !== "string") {
      throw new ServiceError("bad-request", `query parameter "${name}" must be a string`);
    }
  }
  const query = new URLSearchParams(options.query ?? {});
  const headers = new Headers(options.etag ? { "if-match": `"${options.etag}"` } : {});
  const url = `http://in-process.invalid/${resourcePath}?${query}`;
  return {
    method,
    resource,
    request: new Request(url, { method: method === "GET" ? "GET" : "POST", headers }),
    preconditions: options.etag ? { ifMatch: [options.etag] } : undefined,
    urlValues,
    lookup,
    query,
    body: options.body,
    ip: "",
    resourcePath,
    internal: true,
  };
}
