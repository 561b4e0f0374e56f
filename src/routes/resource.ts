/**
 * Resource, item and additional-lookup endpoints: method checks, typed URL values, body
 * reading, request events, and the hand-off to the resource services.
 */
import { methodNotAllowed, notFound } from "../services/errors.ts";
import type { Method, Resource } from "../domain/types.ts";
import { ruleMethod } from "../domain/methods.ts";
import type { Doc } from "../store/store.ts";
import { castUrlValue } from "../services/meta.ts";
import { singleType } from "../domain/schema.ts";
import { getCollection, getItem } from "../services/read.ts";
import { RequestUploads } from "../services/uploads.ts";
import type { Preconditions, Reply, RequestContext, Runtime } from "../services/runtime.ts";
import { postCollection } from "../services/methods/post.ts";
import { putItem } from "../services/methods/put.ts";
import { patchItem } from "../services/methods/patch.ts";
import { deleteCollection, deleteItem } from "../services/methods/delete.ts";
import type { RouteMatch, UrlValues } from "./router.ts";
import { accountOf } from "../auth/types.ts";

type Service = (rt: Runtime, ctx: RequestContext) => Promise<Reply>;

const SERVICES: Record<string, Partial<Record<Method, Service>>> = {
  collection: {
    GET: getCollection,
    HEAD: getCollection,
    POST: postCollection,
    DELETE: deleteCollection,
  },
  item: { GET: getItem, HEAD: getItem, PATCH: patchItem, PUT: putItem, DELETE: deleteItem },
  lookup: { GET: getItem, HEAD: getItem },
};

/** A request at a resource endpoint, as the HTTP layer hands it over. */
export interface ResourceRequest {
  /** The endpoint the request addresses and its raw URL values. */
  match: RouteMatch;
  /** The URL values cast to their fields' types (`castValues`). */
  values: UrlValues;
  request: Request;
  /** The effective method (after method override). */
  method: string;
  /** The client's address. */
  ip: string;
  /** The request's query parameters, parsed once by the HTTP layer. */
  query: URLSearchParams;
  /** The request's conditional headers, read by the HTTP layer. */
  preconditions: Preconditions;
  /**
   * Reads and parses the body (within the body budgets), streaming multipart files through
   * `saveFile`; called for writes only.
   */
  readBody(options: { saveFile: RequestUploads["save"] }): Promise<unknown>;
}

/** Handles a request for a resource, item or additional-lookup endpoint. */
export async function resourceRoute(rt: Runtime, options: ResourceRequest): Promise<Reply> {
  const { match, values, request, method, ip } = options;
  const { endpoint } = match;
  const { resource } = endpoint;
  if (method === "OPTIONS") {
    return { status: 200, headers: { allow: [...endpoint.methods, "OPTIONS"].join(", ") } };
  }
  const service = SERVICES[endpoint.kind][method as Method];
  if (!endpoint.methods.includes(method as Method) || !service) {
    throw methodNotAllowed(endpoint.methods);
  }
  const { urlValues, lookup } = values;
  if (urlValues === null || lookup === null) throw notFound();
  const ctx: RequestContext = {
    method: method as Method,
    resource,
    request,
    urlValues,
    lookup,
    query: options.query,
    ip,
    resourcePath: match.resourcePath,
    account: accountOf(request),
    preconditions: options.preconditions,
  };
  if (method !== "POST" && method !== "PATCH" && method !== "PUT") {
    return await withRequestEvents(rt, service, ctx);
  }
  // Files stream into the store while the body is read: whatever the write does not keep
  // is removed once the request is done, whether it succeeded or not.
  const uploads = new RequestUploads(rt);
  let failed = true;
  try {
    ctx.body = await options.readBody({ saveFile: uploads.save });
    const reply = await withRequestEvents(rt, service, ctx);
    failed = false;
    return reply;
  } finally {
    await uploads.settle(failed);
  }
}

/** Runs the service between the request events (`on_pre_<METHOD>`, `on_post_<METHOD>`). */
function withRequestEvents(
  rt: Runtime,
  service: Service,
  ctx: RequestContext,
): Promise<Reply> {
  // With no listener at all, the events are not raised (no step awaits them).
  if (!rt.events.listening) {
    typeHookLookup(ctx.resource, ctx.lookup);
    return service(rt, ctx);
  }
  return withEvents(rt, service, ctx);
}

/** {@link withRequestEvents} raising its events. */
async function withEvents(rt: Runtime, service: Service, ctx: RequestContext): Promise<Reply> {
  const { method, request, resource } = ctx;
  const eventMethod = ruleMethod(method);
  const preArgs = method === "POST" ? [request] : [request, ctx.lookup];
  await rt.events.emitFor(`on_pre_${eventMethod}`, resource.name, ...preArgs);
  typeHookLookup(resource, ctx.lookup);
  const reply = await service(rt, ctx);
  await rt.events.emitFor(`on_post_${eventMethod}`, resource.name, request, reply);
  return reply;
}

/**
 * As in Eve, a value a hook put in the lookup as a 24-hex string on an ObjectId field is
 * converted as if the client had sent it.
 */
export function typeHookLookup(resource: Resource, lookup: Doc) {
  for (const [field, value] of Object.entries(lookup)) {
    if (typeof value !== "string" || value.length !== 24 || !/^[0-9a-f]{24}$/i.test(value)) {
      continue;
    }
    const type = singleType(resource.schemaModel.root.fields.get(field));
    if (type === "objectid") lookup[field] = castUrlValue(resource, { field, raw: value });
  }
}
