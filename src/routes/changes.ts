/**
 * The change feed endpoint, `GET /<resource>/<CHANGES_ENDPOINT>` (docs/oplog-and-change-feed.md): a
 * Server-Sent Events stream of the resource's inserts, updates, replaces and deletes, with
 * the same authentication, roles and read policy as a GET on the resource.
 *
 * Events: `ready` first (its `id:` is the current position; on a resume it carries none),
 * or `reset` when a `Last-Event-ID` can't be resumed (the client must re-read); then one
 * event per change, named by its operation, with `id:` usable as `Last-Event-ID`. Comment
 * lines every CHANGES_HEARTBEAT_MS.
 */
import { methodNotAllowed, notFound, ServiceError } from "../services/errors.ts";
import { SSE_HEADERS, sseComment, sseEvent } from "../render/sse.ts";
import { renderJson } from "../render/json.ts";
import { accountOf } from "../auth/types.ts";
import type { Doc } from "../store/store.ts";
import {
  type ChangeHub,
  type FeedEvent,
  FeedsFullError,
  parsePosition,
  type Position,
  type Subscribed,
} from "../services/changes.ts";
import { feedView } from "../services/changes_view.ts";
import { assertReadable } from "../services/policy.ts";
import { flag, requestProjection, whereFilter } from "../services/read.ts";
import type { RequestContext, Runtime } from "../services/runtime.ts";
import { type Endpoint, matchRoute, type RouteMatch, type UrlValues } from "./router.ts";
import { typeHookLookup } from "./resource.ts";
import { READ_ONLY_ALLOW } from "../domain/methods.ts";

/** The query flag asking for documents in events. */
const DOCUMENTS_PARAM = "documents";
/** Longest `Last-Event-ID` accepted. */
const MAX_EVENT_ID = 64;
const ALLOW = READ_ONLY_ALLOW;

/**
 * The collection endpoint whose feed `path` (API prefix removed) addresses; null when it
 * is not a feed path, or the resource has no feed (the path is then routed as usual).
 */
export function changesTarget(
  rt: Runtime,
  endpoints: Endpoint[],
  path: string,
): RouteMatch | null {
  const hub = rt.changes;
  if (!hub) return null;
  const suffix = "/" + hub.config.endpoint;
  if (!path.endsWith(suffix)) return null;
  const match = matchRoute(endpoints, path.slice(0, -suffix.length));
  if (match?.endpoint.kind !== "collection") return null;
  return hub.config.resources.has(match.endpoint.resource.name) ? match : null;
}

/** The position a client resumes from: `Last-Event-ID`, or `last_event_id` in the query. */
function resumePosition(request: Request, query: URLSearchParams): Position | undefined {
  const raw = request.headers.get("last-event-id") ?? query.get("last_event_id");
  if (raw === null || raw === "") return undefined;
  const position = raw.length <= MAX_EVENT_ID ? parsePosition(raw.trim()) : null;
  if (!position) {
    throw new ServiceError("bad-request", "Last-Event-ID: not an event id of this feed");
  }
  return position;
}

/**
 * Answers a feed request (`match` from {@link changesTarget}, `values` its URL values cast
 * by `castValues`).
 */
export async function changesRoute(
  rt: Runtime,
  options: { match: RouteMatch; values: UrlValues; request: Request; method: string; ip: string },
): Promise<Response> {
  const hub = rt.changes!;
  const { match, request, method } = options;
  const { resource } = match.endpoint;
  if (method === "OPTIONS") return new Response(null, { status: 200, headers: { allow: ALLOW } });
  if (!resource.resourceMethods.includes("GET") || (method !== "GET" && method !== "HEAD")) {
    throw methodNotAllowed(resource.resourceMethods.includes("GET") ? ["GET", "HEAD"] : []);
  }
  const { urlValues } = options.values;
  if (urlValues === null) throw notFound();
  const query = new URL(request.url).searchParams;
  const ctx: RequestContext = {
    method: "GET",
    resource,
    request,
    urlValues,
    lookup: {},
    query,
    ip: options.ip,
    resourcePath: match.resourcePath,
    account: accountOf(request),
  };
  const documents = flag(query, DOCUMENTS_PARAM);
  if (documents && !hub.config.resources.get(resource.name)!.documents) {
    throw new ServiceError(
      "bad-request",
      "This feed does not carry documents (changes_documents is off).",
    );
  }
  const where = whereFilter(rt, ctx);
  assertReadable(rt, resource, { where });
  const projection = requestProjection(rt, ctx);
  const after = resumePosition(request, query);
  // As for a GET: hooks may narrow what the requester sees (a dynamic filter).
  await rt.events.emitFor("on_pre_GET", resource.name, request, ctx.lookup);
  typeHookLookup(resource, ctx.lookup);
  if (method === "HEAD") return new Response(null, { status: 200, headers: { ...SSE_HEADERS } });
  const view = feedView(rt, ctx, { where, projection, documents });
  let subscribed: Subscribed;
  try {
    subscribed = hub.subscribe(resource.source, { select: view.select, after });
  } catch (error) {
    if (!(error instanceof FeedsFullError)) throw error;
    throw new ServiceError("unavailable", "Too many change feeds are open; try again later.", {
      headers: { "retry-after": "5" },
    });
  }
  const stream = feedStream(rt, hub, {
    subscribed,
    render: view.render,
    resumed: after !== undefined,
    log: { resource: resource.name, clientip: options.ip },
  });
  return new Response(stream, { status: 200, headers: { ...SSE_HEADERS } });
}

/** The response body of one feed: pulled by the server as fast as the client reads. */
function feedStream(
  rt: Runtime,
  hub: ChangeHub,
  options: {
    subscribed: Subscribed;
    render: (event: FeedEvent) => Promise<Doc>;
    resumed: boolean;
    log: Record<string, unknown>;
  },
): ReadableStream<Uint8Array> {
  const { subscription, position, reset } = options.subscribed;
  const encoder = new TextEncoder();
  const json = (body: unknown) => renderJson(body, { pretty: false, formatDate: rt.formatDate });
  let pending: Promise<FeedEvent | null> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let done = false;
  const finish = () => {
    done = true;
    clearTimeout(timer);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const opening = reset
        ? sseEvent({
          id: position,
          event: "reset",
          data: json({ reason: reset, message: "Changes were missed: read the resource again." }),
        })
        : sseEvent({
          id: options.resumed ? undefined : position,
          event: "ready",
          data: json({ resumed: options.resumed }),
        });
      controller.enqueue(encoder.encode(opening));
      void subscription.ended.then((reason) => {
        if (done) return;
        finish();
        if (reason === "behind") {
          rt.log.log("warn", "change feed client dropped: it fell behind", options.log);
          // Ends the response unfinished: the connection is closed, nothing more is queued.
          // The server prints the error: one line, no stack.
          const error = new Error("change feed client fell behind");
          error.stack = "change feed: a client fell behind and was dropped";
          controller.error(error);
        } else if (reason === "shutdown") controller.close();
      });
    },
    async pull(controller) {
      if (done) return;
      pending ??= subscription.next();
      const beat = new Promise<"beat">((resolve) => {
        timer = setTimeout(() => resolve("beat"), hub.config.heartbeatMs);
      });
      const next = await Promise.race([pending, beat]);
      clearTimeout(timer);
      if (done) return;
      if (next === "beat") {
        controller.enqueue(encoder.encode(sseComment("heartbeat")));
        return;
      }
      pending = undefined;
      if (next === null) return; // closed: `ended` finishes the stream
      try {
        const data = json(await options.render(next));
        if (done) return;
        const id = `${hub.boot}-${next.change.seq}`;
        controller.enqueue(encoder.encode(sseEvent({ id, event: next.kind, data })));
      } catch (error) {
        rt.log.log("error", "change feed event could not be rendered", {
          ...options.log,
          error: error instanceof Error ? error.message : String(error),
        });
        finish();
        subscription.close("client");
        controller.error(error);
      }
    },
    cancel() {
      finish();
      subscription.close("client");
    },
  }, { highWaterMark: 0 });
}
