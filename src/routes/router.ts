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
