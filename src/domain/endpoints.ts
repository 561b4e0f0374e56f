/**
 * The endpoint table of a domain: every public collection, item and lookup endpoint.
 * Resource `url` values may hold regex-typed variables, so every endpoint is compiled once
 * into an anchored regular expression. The router matches requests against it; the
 * OpenAPI document describes it.
 */
import type { Domain } from "./build.ts";
import type { Method, Resource } from "./types.ts";
import { partsToRegex } from "./url.ts";

export type EndpointKind = "collection" | "item" | "lookup";

export interface Endpoint {
  kind: EndpointKind;
  resource: Resource;
  regex: RegExp;
  /** Field an item endpoint looks documents up by. */
  lookupField?: string;
  methods: Method[];
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
