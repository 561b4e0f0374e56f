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
import { type ReferenceVisitor, visitReferences } from "../query/references.ts";
import type { Account, Runtime } from "./runtime.ts";

/** Key fields every projection of `resource` keeps. */
export function keyFieldsOf(rt: Runtime, resource: Resource): string[] {
  const settings = rt.settings;
  return [
    resource.idField,
    settings.DATE_CREATED,
    settings.DATE_UPDATED,
    settings.ETAG,
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
  // A query's `a.0.b` reads `a.b` of an array's first element: both spellings are checked.
  const segments = path.split(".");
  const unindexed = segments.filter((p) => !/^\d+$/.test(p)).join(".");
  const forms = unindexed === path ? [path] : [path, unindexed];
  const hidden = resource.hidden ?? [];
  const touches = (p: string) =>
    hidden.some((h) => p === "" || p === h || p.startsWith(h + ".") || h.startsWith(p + "."));
  if (forms.some(touches)) return false;
  const readable = resource.readable;
  if (!readable) return true;
  if (keyFieldsOf(rt, resource).includes(segments[0])) return true;
  return forms.some((p) => readable.some((field) => p === field || p.startsWith(field + ".")));
}

/** Whether some field of `resource` is not readable: hidden, or outside an inclusive projection. */
export function hasUnreadable(resource: Resource): boolean {
  return resource.readable !== undefined || (resource.hidden?.length ?? 0) > 0;
}

/**
 * Whether `path` lies in a field no resource on `resource`'s shared collection declares: the
 * projection a shared collection implies keeps such fields out of answers, but filters and
 * sorts may name them, as in Eve. Fields another resource declares, and hidden ones, stay out
 * of reach.
 */
function isUndeclared(resource: Resource, path: string): boolean {
  const siblings = resource.siblingFields;
  const top = path.split(".")[0];
  return siblings !== undefined && !siblings.has(top) && !Object.hasOwn(resource.schema, top) &&
    !(resource.hidden ?? []).some((h) => h === top || h.startsWith(top + "."));
}

/**
 * What refuses (400) a reference to a field `resource` does not let a read see, for the
 * filter checker (`WhereOptions.references`): a field that is not readable, or a whole-
 * document read on a resource with any such field. Undefined when every field is readable.
 * The message names `options.param`, never the field.
 */
export function referenceGuard(
  rt: Runtime,
  resource: Resource,
  options: { param: string },
): ReferenceVisitor | undefined {
  if (!hasUnreadable(resource)) return undefined;
  const { param } = options;
  return {
    field(path) {
      if (!isReadable(rt, resource, { path }) && !isUndeclared(resource, path)) {
        throw new QueryError(
          `${param}: names a field that is not readable on this resource`,
          param,
        );
      }
    },
    whole(what) {
      throw new QueryError(
        `${param}: ${what} reads whole documents, which this resource does not allow`,
        param,
      );
    },
  };
}

/**
 * Refuses (400) a filter or sort that can read a field the policy hides, so a hidden value
 * can't be read one guess at a time. Every reference is resolved (query field names, `$expr`
 * field paths, `$$ROOT`/`$$CURRENT` sub-paths, `$getField`, variables; see
 * query/references.ts); a whole-document read (`$$ROOT`, `$$CURRENT`, `$getField` of a computed
 * name, `$jsonSchema`, `$where`, `$text`) is refused on a resource with any unreadable field.
 * The message names the parameter, never the field.
 */
export function assertReadable(
  rt: Runtime,
  resource: Resource,
  query: { where?: Filter; sort?: Sort },
): void {
  if (!hasUnreadable(resource)) return;
  if (query.where) {
    visitReferences(query.where, "where", referenceGuard(rt, resource, { param: "where" })!);
  }
  if (query.sort) {
    const sort = referenceGuard(rt, resource, { param: "sort" })!;
    for (const path of Object.keys(query.sort)) sort.field(path);
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
