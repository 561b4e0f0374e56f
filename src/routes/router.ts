/**
 * Matches request paths to the domain's endpoints (domain/endpoints.ts, each compiled once
 * into an anchored regular expression).
 */
import { freshString } from "../util/strings.ts";
import type { Endpoint } from "../domain/endpoints.ts";
import type { Doc } from "../doc/types.ts";
import { castUrlValue } from "../services/meta.ts";

export { buildRoutes, type Endpoint, type EndpointKind } from "../domain/endpoints.ts";

export interface RouteMatch {
  endpoint: Endpoint;
  /** Raw URL variable values by field. */
  variables: Record<string, string>;
  /** Raw item identifier, for item endpoints. */
  id?: string;
  /** The resource endpoint path as requested (`people/1/invoices`). */
  resourcePath: string;
}

/** Finds the endpoint for `path` (no leading or trailing slash), or null. */
export function matchRoute(endpoints: Endpoint[], path: string): RouteMatch | null {
  const slash = path.indexOf("/");
  const candidates = candidatesOf(endpoints, slash === -1 ? path : path.slice(0, slash));
  for (let e = 0; e < candidates.length; e++) {
    const endpoint = candidates[e];
    const match = endpoint.regex.exec(path);
    if (!match) continue;
    const groups = match.groups ?? {};
    const variables: Record<string, string> = {};
    const parts = endpoint.resource.urlParts;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (typeof part !== "string") variables[part.field] = groups[`v${i}`];
    }
    // A capture of 13 characters or more is a slice of the URL (V8's SlicedString), which
    // slows down serializing the links that carry it (see flatConcat); shorter ones are
    // copies already. (A one-element join returns the same string: no copy.)
    const captured = groups.path;
    const resourcePath = captured.length < 13 ? captured : freshString(captured);
    return { endpoint, variables, id: groups.id, resourcePath };
  }
  return null;
}

/**
 * The endpoints that may match a path whose first segment is `first`, in their order: those
 * whose url starts with that literal segment and those starting with a variable (which may
 * match anything). An endpoint's expression is anchored and its first literal segment is
 * followed by `/` or the end, so no other endpoint can match (a path of `customers/...` is
 * tried against the endpoints of `customers`, not every collection's first).
 */
function candidatesOf(endpoints: Endpoint[], first: string): Endpoint[] {
  let index = FIRST_SEGMENTS.get(endpoints);
  if (index === undefined) {
    index = { bySegment: new Map(), others: endpoints.filter((e) => firstLiteral(e) === null) };
    for (const endpoint of endpoints) {
      const literal = firstLiteral(endpoint);
      if (literal === null || index.bySegment.has(literal)) continue;
      index.bySegment.set(
        literal,
        endpoints.filter((e) => {
          const other = firstLiteral(e);
          return other === null || other === literal;
        }),
      );
    }
    FIRST_SEGMENTS.set(endpoints, index);
  }
  return index.bySegment.get(first) ?? index.others;
}

/** The literal first segment of an endpoint's url; null when the url starts with a variable. */
function firstLiteral(endpoint: Endpoint): string | null {
  const first = endpoint.resource.urlParts[0];
  return typeof first === "string" ? first : null;
}

/** Each endpoint table's endpoints by the first segment of the paths they may match. */
const FIRST_SEGMENTS = new WeakMap<
  Endpoint[],
  { bySegment: Map<string, Endpoint[]>; others: Endpoint[] }
>();

/**
 * A matched endpoint's URL values, each cast to its field's type: `urlValues` (the resource
 * URL's variables) and `lookup` (the item id or additional lookup value); either is null
 * when one of its values is not a value of its field's type (the route answers 404 once
 * the method is known to be allowed).
 */
export interface UrlValues {
  urlValues: Doc | null;
  lookup: Doc | null;
}

/** Casts a route match's raw URL values to their fields' types. */
export function castValues(match: RouteMatch): UrlValues {
  const { resource, lookupField } = match.endpoint;
  let urlValues: Doc | null = {};
  for (const [field, raw] of Object.entries(match.variables)) {
    const value = castUrlValue(resource, { field, raw });
    if (value === null) {
      urlValues = null;
      break;
    }
    urlValues[field] = value;
  }
  let lookup: Doc | null = {};
  if (match.id !== undefined) {
    const value = castUrlValue(resource, { field: lookupField!, raw: match.id });
    lookup = value === null ? null : { [lookupField!]: value };
  }
  return { urlValues, lookup };
}
