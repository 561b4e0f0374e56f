/**
 * Matches request paths to endpoints. Resource `url` values may hold regex-typed
 * variables, so every endpoint is compiled once into an anchored regular expression.
 */
import { freshString } from "../util/strings.ts";
import type { Domain } from "../domain/build.ts";
import type { Method, Resource } from "../domain/types.ts";
import { partsToRegex } from "../domain/url.ts";

export type EndpointKind = "collection" | "item" | "lookup";

export interface Endpoint {
  kind: EndpointKind;
  resource: Resource;
  regex: RegExp;
  /** Field an item endpoint looks documents up by. */
  lookupField?: string;
  methods: Method[];
}

export interface RouteMatch {
  endpoint: Endpoint;
  /** Raw URL variable values by field. */
  variables: Record<string, string>;
  /** Raw item identifier, for item endpoints. */
  id?: string;
  /** The resource endpoint path as requested (`people/1/invoices`). */
  resourcePath: string;
}

/** Methods answered at an endpoint: HEAD with GET, OPTIONS always. */
function withImplied(methods: Method[]): Method[] {
  const out = new Set(methods);
  if (out.has("GET")) out.add("HEAD");
  return [...out];
}

/** Compiles every public endpoint of the domain. */
export function buildRoutes(domain: Domain): Endpoint[] {
  const endpoints: Endpoint[] = [];
  for (const resource of domain.values()) {
    if (resource.internal) continue;
    const base = partsToRegex(resource.urlParts);
    endpoints.push({
      kind: "collection",
      resource,
      regex: new RegExp(`^(?<path>${base})$`),
      methods: withImplied(resource.resourceMethods),
    });
    // An aggregation endpoint has no items to address.
    if (resource.aggregation) continue;
    if (resource.itemLookup && resource.itemUrl) {
      endpoints.push({
        kind: "item",
        resource,
        regex: new RegExp(`^(?<path>${base})/(?<id>${resource.itemUrl})$`),
        lookupField: resource.itemLookupField,
        methods: withImplied(resource.itemMethods),
      });
    }
    if (resource.additionalLookup) {
      const { url, field } = resource.additionalLookup;
      endpoints.push({
        kind: "lookup",
        resource,
        regex: new RegExp(`^(?<path>${base})/(?<id>${url})$`),
        lookupField: field,
        methods: resource.itemMethods.includes("GET") ? ["GET", "HEAD"] : [],
      });
    }
  }
  // As in Eve, a resource url (`users/overseas`) wins over another resource's item or
  // lookup endpoint that would also match it: collections first, then items, then lookups.
  const rank: Record<EndpointKind, number> = { collection: 0, item: 1, lookup: 2 };
  return endpoints.sort((a, b) => rank[a.kind] - rank[b.kind]);
}

/** Finds the endpoint for `path` (no leading or trailing slash), or null. */
export function matchRoute(endpoints: Endpoint[], path: string): RouteMatch | null {
  for (const endpoint of endpoints) {
    const match = endpoint.regex.exec(path);
    if (!match) continue;
    const groups = match.groups ?? {};
    const variables: Record<string, string> = {};
    endpoint.resource.urlParts.forEach((part, i) => {
      if (typeof part !== "string") variables[part.field] = groups[`v${i}`];
    });
    // A capture of 13 characters or more is a slice of the URL (V8's SlicedString), which
    // slows down serializing the links that carry it (see flatConcat); shorter ones are
    // copies already. (A one-element join returns the same string: no copy.)
    const captured = groups.path;
    const resourcePath = captured.length < 13 ? captured : freshString(captured);
    return { endpoint, variables, id: groups.id, resourcePath };
  }
  return null;
}
