/**
 * The effective read policy of a resource: what any read of it may see. One place decides,
 * and every read path (item, collection, lookup, sub-resource, embedding, versions,
 * aggregation) asks it:
 * - the rows: the predefined filter, the soft-delete rule (and, per request, the URL
 *   variables and hook lookups, see `endpointFilter`);
 * - the fields: the default projection. An inclusive default projection (or, for a
 *   resource sharing its collection, its schema fields) makes every other field
 *   unreadable: no projection, filter or sort may name it. `hidden` fields are never
 *   readable at all.
 * Internal resources are never read over HTTP, embedding included.
 */
import type { Resource } from "../domain/types.ts";
import { effectiveProjection } from "../query/projection.ts";
import { QueryError } from "../query/errors.ts";
import type { Filter, Projection, Sort } from "../store/store.ts";
import { andFilters } from "./filters.ts";
import { softDeleteOf } from "./soft-delete.ts";
import { versionFields } from "./versions.ts";
import { isPlainObject } from "../util/plain.ts";
import type { Account, Runtime } from "./runtime.ts";

/** Key fields every projection of `resource` keeps. */
export function keyFieldsOf(rt: Runtime, resource: Resource): string[] {
  const s = rt.settings;
  return [
    resource.idField,
    s.DATE_CREATED,
    s.DATE_UPDATED,
    s.ETAG,
    ...softDeleteOf(rt, resource).fields,
    ...versionFields(rt, resource),
  ];
}

/** The rows any read of `resource` may return, before request-specific conditions. */
export function policyFilter(rt: Runtime, resource: Resource): Filter {
  return andFilters(resource.filter, softDeleteOf(rt, resource).liveOnly);
}

/** The projection of `resource`'s documents when nobody asks for one (embedding). */
export function defaultProjection(rt: Runtime, resource: Resource): Projection | undefined {
  return readProjection(rt, resource);
}

/**
 * The projection a read of `resource` runs: the client's (`options.client`, if any) combined
 * with the default by Eve's rule, then with every `hidden` field removed whatever was asked.
 */
export function readProjection(
  rt: Runtime,
  resource: Resource,
  options: { client?: Projection } = {},
): Projection | undefined {
  const { client } = options;
  if (client === undefined) {
    // Without a client projection the answer is the resource's alone: worked out once.
    let known = DEFAULTS.get(resource);
    if (!known) {
      const value = combine(rt, resource, undefined);
      known = { value: value && Object.freeze(value) };
      DEFAULTS.set(resource, known);
    }
    return known.value;
  }
  return combine(rt, resource, client);
}

/** Each resource's projection when the client asks for none (see {@link readProjection}). */
const DEFAULTS = new WeakMap<Resource, { value: Projection | undefined }>();

function combine(
  rt: Runtime,
  resource: Resource,
  client: Projection | undefined,
): Projection | undefined {
  const projection = effectiveProjection(client, resource.projection, keyFieldsOf(rt, resource));
  const hidden = resource.hidden;
  if (!hidden?.length) return projection;
  const within = (path: string) => hidden.some((h) => path === h || path.startsWith(h + "."));
  if (projection && Object.values(projection).includes(1)) {
    return Object.fromEntries(Object.entries(projection).filter(([path]) => !within(path)));
  }
  const out: Projection = { ...projection };
  for (const field of hidden) out[field] = 0;
  return out;
}

/**
 * Whether `options.path` (dotted) is readable on `resource`: always, unless the default
 * projection is inclusive, in which case the path must lie within an included field. Key
 * fields and meta fields stay readable.
 */
export function isReadable(rt: Runtime, resource: Resource, options: { path: string }): boolean {
  const { path } = options;
  const hidden = resource.hidden ?? [];
  if (hidden.some((h) => path === h || path.startsWith(h + ".") || h.startsWith(path + "."))) {
    return false;
  }
  const readable = resource.readable;
  if (!readable) return true;
  const top = path.split(".")[0];
  if (keyFieldsOf(rt, resource).includes(top)) return true;
  return readable.some((field) => path === field || path.startsWith(field + "."));
}

/**
 * Refuses (400) a filter or sort naming a field the policy hides, so a hidden value can't
 * be read one guess at a time. Expression paths (`"$field"` inside `$expr`) and whole-
 * document variables (`$$ROOT`, `$$CURRENT`) count too.
 */
export function assertReadable(
  rt: Runtime,
  resource: Resource,
  query: { where?: Filter; sort?: Sort },
): void {
  if (!resource.readable && !resource.hidden?.length) return;
  const check = (param: string) => (path: string) => {
    if (!isReadable(rt, resource, { path })) {
      throw new QueryError(`${param}: the field "${path}" is not available`, param);
    }
  };
  if (query.where) walkFilter(query.where, 0, { visit: check("where") });
  if (query.sort) Object.keys(query.sort).forEach(check("sort"));
}

/**
 * Calls `options.visit` with every field path a filter names (keys and expression paths).
 * `depth` is the nesting depth of `node` (0: the filter itself); past 64, 400.
 */
function walkFilter(
  node: unknown,
  depth: number,
  options: { visit: (path: string) => void },
): void {
  if (depth > 64) throw new QueryError("where: too deeply nested", "where");
  const { visit } = options;
  if (typeof node === "string") {
    if (node === "$$ROOT" || node === "$$CURRENT" || node.startsWith("$$ROOT.")) {
      visit("$$ROOT");
    } else if (node.startsWith("$$CURRENT.")) visit(node.slice("$$CURRENT.".length));
    else if (node.startsWith("$") && !node.startsWith("$$") && node.length > 1) {
      visit(node.slice(1));
    }
    return;
  }
  if (Array.isArray(node)) {
    for (const item of node) walkFilter(item, depth + 1, options);
    return;
  }
  if (!isPlainObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    // Below a field name, strings are values and sub-fields lie within the field itself.
    if (!key.startsWith("$")) visit(key);
    else walkFilter(value, depth + 1, options);
  }
}

/**
 * Whether `account` (null: anonymous) may read `resource`: never an internal resource;
 * always without authentication; otherwise by its public methods and read roles.
 */
export function canRead(rt: Runtime, account: Account | null, resource: Resource): boolean {
  if (resource.internal) return false;
  return rt.auth ? rt.auth.canRead(account, resource) : true;
}
