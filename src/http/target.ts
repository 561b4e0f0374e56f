/**
 * What a request addresses, worked out once per request: {@link resolveTarget} classifies
 * the path (API prefix, the description and docs page, media, change feeds, home, schema,
 * then the domain's endpoint table) into a typed {@link Target}, with the resource, the
 * raw and typed URL values and lookup of a resource endpoint, the query parameters and the
 * JSONP callback asked for. The resolving middleware (`middleware/resolve.ts`) stores it
 * on the Hono context as `target`; authentication, metrics and the route table
 * (`dispatch.ts`) read it from there.
 *
 * A new kind of endpoint is a branch here and an entry in `dispatch.ts`'s table.
 */
import type { ObjectId } from "../doc/bson.ts";
import type { Resource } from "../domain/types.ts";
import type { Runtime } from "../services/runtime.ts";
import {
  castValues,
  type Endpoint,
  matchRoute,
  type RouteMatch,
  type UrlValues,
} from "../routes/router.ts";
import { schemaTarget } from "../routes/schema.ts";
import { mediaTarget } from "../routes/media.ts";
import { changesTarget } from "../routes/changes.ts";
import type { OpenApiEndpoints } from "../routes/openapi.ts";
import { apiPath, queryOf } from "./urls.ts";
import { jsonpArgument } from "./jsonp.ts";

/** The endpoint a request addresses, by kind. */
export type Endpointed =
  /** The path is not under the API prefix (404). */
  | { kind: "outside" }
  /** Under the prefix, but no endpoint has the path (404). */
  | { kind: "none" }
  | { kind: "home" }
  /** The OpenAPI description (OPENAPI_PATH). */
  | { kind: "openapi" }
  /** The docs page or one of its files (DOCS_PATH). */
  | { kind: "docs" }
  /** The schema endpoint; `name` is "" for every resource's schema. */
  | { kind: "schema"; name: string }
  /** A stored file at the media endpoint. */
  | { kind: "media"; id: ObjectId }
  /** A resource's change feed; `match` is its collection endpoint. */
  | { kind: "changes"; resource: Resource; match: RouteMatch; values: UrlValues }
  /** A collection, item or additional-lookup endpoint of the domain. */
  | {
    kind: "collection" | "item" | "lookup";
    resource: Resource;
    match: RouteMatch;
    values: UrlValues;
  };

/** What a request addresses, and what its URL asks for besides the endpoint. */
export type Target = Endpointed & {
  /** The path without the API prefix and surrounding slashes; null when outside it. */
  path: string | null;
  /** The query parameters, null when the URL has none. */
  query: URLSearchParams | null;
  /** The JSONP callback asked for (JSONP_ARGUMENT), unchecked; null when none. */
  jsonp: string | null;
};

/** The endpoints a target is resolved against, built once at start-up. */
export interface Endpoints {
  endpoints: Endpoint[];
  openapi: OpenApiEndpoints | null;
}

/** The endpoint `path` (API prefix removed) addresses, in the order the endpoints win. */
function endpointOf(rt: Runtime, routes: Endpoints, path: string | null): Endpointed {
  if (path === null) return { kind: "outside" };
  const owned = routes.openapi?.owns(path);
  if (owned === "document") return { kind: "openapi" };
  if (owned === "docs") return { kind: "docs" };
  const media = mediaTarget(rt, path);
  if (media) return { kind: "media", id: media };
  const feed = changesTarget(rt, routes.endpoints, path);
  if (feed) {
    const { resource } = feed.endpoint;
    return { kind: "changes", resource, match: feed, values: castValues(feed) };
  }
  if (path === "") return { kind: "home" };
  const schema = schemaTarget(rt, path);
  if (schema !== null) return { kind: "schema", name: schema };
  const match = matchRoute(routes.endpoints, path);
  if (!match) return { kind: "none" };
  const { resource } = match.endpoint;
  return { kind: match.endpoint.kind, resource, match, values: castValues(match) };
}

/** What the request at `url` (its `pathname`) addresses. Never throws. */
export function resolveTarget(
  rt: Runtime,
  routes: Endpoints,
  request: { pathname: string; url: string },
): Target {
  const path = apiPath(rt.settings, request.pathname);
  const query = queryOf(request.url);
  const jsonp = jsonpArgument(rt.settings, query);
  return { ...endpointOf(rt, routes, path), path, query, jsonp };
}
