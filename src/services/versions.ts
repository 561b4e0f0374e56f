/**
 * Document versioning: every POST, PUT, PATCH (and soft delete) of a versioned resource
 * stores a copy in the shadow collection `<source><VERSIONS>` (`people_versions`), keyed
 * by the document id (`_id_document`) and the version number. Reads of `?version=<n>`,
 * `all` and `diffs` come from there.
 */
import { HttpError } from "../http/errors.ts";
import { ObjectId } from "../store/bson.ts";
import type { Doc, Filter, Projection, Sort } from "../store/store.ts";
import { andFilters } from "./filters.ts";
import type { Resource } from "../domain/types.ts";
import type { Runtime } from "./runtime.ts";

/** The shadow collection of a resource. */
export function versionsSource(rt: Runtime, resource: Resource): string {
  return `${resource.source}${rt.settings.VERSIONS}`;
}

/** The field of a shadow document that holds the primary document's id. */
export function documentIdField(rt: Runtime, resource: Resource): string {
  return `${resource.idField}${rt.settings.VERSION_ID_SUFFIX}`;
}

/**
 * Sets the version number of a document about to be stored: 1 on create, one more than
 * the original's otherwise (an original stored before versioning was enabled is version 1,
 * see {@link legacyVersion}).
 */
export function nextVersion(rt: Runtime, resource: Resource, doc: Doc, original?: Doc): void {
  if (!resource.versioning) return;
  const field = rt.settings.VERSION;
  const previous = original?.[field];
  doc[field] = typeof previous === "number" ? previous + 1 : original ? 2 : 1;
}

/**
 * A document stored before versioning was enabled has no number and no stored version: it
 * reads as version 1, and its first edit keeps its content as version 1. Returns that
 * version 1 copy to store with the edit, or undefined when the original is numbered.
 */
export function legacyVersion(rt: Runtime, resource: Resource, original: Doc): Doc | undefined {
  if (!resource.versioning || typeof original[rt.settings.VERSION] === "number") return undefined;
  return { ...original, [rt.settings.VERSION]: 1 };
}

/**
 * Runs `write` for `docs` (already carrying their version numbers) and keeps their shadow
 * copies. The copies are stored first and removed again if the write fails, so a failed
 * request leaves no version behind.
 */
export async function withVersions(
  rt: Runtime,
  resource: Resource,
  docs: Doc[],
  write: () => Promise<void>,
): Promise<void> {
  if (!resource.versioning) return write();
  const idField = documentIdField(rt, resource);
  const skipped = resource.schemaModel.unversioned;
  const shadows = docs.map((doc) => {
    const { [resource.idField]: id, ...rest } = doc;
    for (const field of skipped) delete rest[field];
    return { ...rest, _id: new ObjectId(), [idField]: id };
  });
  const versions = rt.store.collection(versionsSource(rt, resource));
  await versions.insertMany(shadows);
  try {
    await write();
  } catch (error) {
    await versions.deleteMany({ _id: { $in: shadows.map((shadow) => shadow._id) } });
    throw error;
  }
}

/** Every stored version of the documents with `ids`, as stored (shadow documents). */
export function storedVersions(rt: Runtime, resource: Resource, ids: unknown[]): Promise<Doc[]> {
  if (!resource.versioning || ids.length === 0) return Promise.resolve([]);
  return rt.store.collection(versionsSource(rt, resource)).find({
    [documentIdField(rt, resource)]: { $in: ids },
  });
}

/**
 * As in Eve, an old version shows the current value of the fields that are not versioned
 * (`versioned: false`), taken from the primary document.
 */
export function withCurrentFields(resource: Resource, version: Doc, primary: Doc): Doc {
  for (const field of resource.schemaModel.unversioned) {
    if (primary[field] !== undefined) version[field] = primary[field];
  }
  return version;
}

/** Removes every stored version of the documents with `ids`. */
export async function dropVersions(rt: Runtime, resource: Resource, ids: unknown[]) {
  if (!resource.versioning || ids.length === 0) return;
  await rt.store.collection(versionsSource(rt, resource)).deleteMany({
    [documentIdField(rt, resource)]: { $in: ids },
  });
}

/** Turns a shadow document back into the primary document's shape. */
function fromShadow(rt: Runtime, resource: Resource, shadow: Doc): Doc {
  const idField = documentIdField(rt, resource);
  const { _id: _shadowId, [idField]: id, ...rest } = shadow;
  return { [resource.idField]: id, ...rest };
}

/** Parses the `version` parameter: a positive integer, `all` or `diffs`. */
export function parseVersionParam(raw: string): number | "all" | "diffs" {
  if (raw === "all" || raw === "diffs") return raw;
  if (/^[1-9]\d{0,8}$/.test(raw)) return Number(raw);
  throw new HttpError(400, `version: must be a positive integer, "all" or "diffs"`);
}

/** What a version read may see: the endpoint's filter and projection (the read policy). */
export interface VersionScope {
  /** Conditions on the primary document's fields (predefined filter, URL variables). */
  filter?: Filter;
  projection?: Projection;
}

/** One stored version of a document, or null. */
export async function findVersion(
  rt: Runtime,
  resource: Resource,
  options: { id: unknown; version: number } & VersionScope,
): Promise<Doc | null> {
  const filter = andFilters(
    { [documentIdField(rt, resource)]: options.id, [rt.settings.VERSION]: options.version },
    options.filter && onShadowFilter(rt, resource, options.filter),
  );
  const shadow = await rt.store.collection(versionsSource(rt, resource)).findOne(filter, {
    projection: shadowProjection(rt, resource, options.projection),
  });
  return shadow && fromShadow(rt, resource, shadow);
}

/**
 * Stored versions of `resource` matching any of `or` (conditions on the primary document's
 * fields), under the resource's predefined filter, in the primary documents' shape.
 */
export async function versionsMatching(
  rt: Runtime,
  resource: Resource,
  options: { or: Filter[]; projection?: Projection; filter?: Filter },
): Promise<Doc[]> {
  const filter = andFilters(
    { $or: options.or.map((part) => onShadowFilter(rt, resource, part)) },
    onShadowFilter(rt, resource, resource.filter),
    options.filter && onShadowFilter(rt, resource, options.filter),
  );
  const shadows = await rt.store.collection(versionsSource(rt, resource)).find(filter, {
    projection: shadowProjection(rt, resource, options.projection),
  });
  return shadows.map((shadow) => fromShadow(rt, resource, shadow));
}

/** How many stored versions of `resource` match `filter` (on the primary's fields), at most `limit`. */
export function countVersions(
  rt: Runtime,
  resource: Resource,
  options: { filter: Filter; limit?: number },
): Promise<number> {
  return rt.store.collection(versionsSource(rt, resource)).count(
    andFilters(onShadowFilter(rt, resource, options.filter)),
    { limit: options.limit },
  );
}

/** A filter on the primary document's fields, for shadow documents. */
function onShadowFilter(rt: Runtime, resource: Resource, filter: Filter): Filter {
  const out: Filter = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key === resource.idField) out[documentIdField(rt, resource)] = value;
    else if ((key === "$and" || key === "$or" || key === "$nor") && Array.isArray(value)) {
      out[key] = value.map((part) => onShadowFilter(rt, resource, part as Filter));
    } else out[key] = value;
  }
  return out;
}

/** A sort or projection on the primary document's fields, for shadow documents. */
function onShadows<T extends Record<string, unknown>>(rt: Runtime, resource: Resource, spec: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(spec)) {
    out[key === resource.idField ? documentIdField(rt, resource) : key] = value;
  }
  return out as T;
}

/** A projection for shadows: inclusive ones keep what makes a shadow a version. */
function shadowProjection(
  rt: Runtime,
  resource: Resource,
  projection: Projection | undefined,
): Projection | undefined {
  if (!projection || Object.keys(projection).length === 0) return undefined;
  const out = onShadows(rt, resource, projection);
  if (Object.values(projection).includes(1)) {
    out[documentIdField(rt, resource)] = 1;
    out[rt.settings.VERSION] = 1;
  }
  return out;
}

/**
 * One page of a document's stored versions: sorted (oldest first by default), projected on
 * the primary document's fields, and the number of versions.
 */
export async function versionPage(
  rt: Runtime,
  resource: Resource,
  options: { id: unknown; sort?: Sort; skip: number; limit: number } & VersionScope,
): Promise<{ versions: Doc[]; total: number }> {
  const filter = andFilters(
    { [documentIdField(rt, resource)]: options.id },
    options.filter && onShadowFilter(rt, resource, options.filter),
  );
  const collection = rt.store.collection(versionsSource(rt, resource));
  const sort = options.sort ?? { [rt.settings.VERSION]: 1 };
  const [shadows, total] = await Promise.all([
    collection.find(filter, {
      sort: { ...onShadows(rt, resource, sort), _id: 1 },
      skip: options.skip,
      limit: options.limit,
      projection: shadowProjection(rt, resource, options.projection),
    }),
    collection.count(filter),
  ]);
  return { versions: shadows.map((shadow) => fromShadow(rt, resource, shadow)), total };
}

/**
 * Diffs of consecutive versions: the first version whole, then for each later version
 * only the fields that changed (plus the id, version and update time).
 */
export function diffVersions(rt: Runtime, resource: Resource, versions: Doc[]): Doc[] {
  const s = rt.settings;
  const keep = new Set([resource.idField, s.VERSION, s.DATE_UPDATED, ...s.VERSION_DIFF_INCLUDE]);
  return versions.map((version, i) => {
    if (i === 0) return version;
    const before = versions[i - 1];
    const diff: Doc = {};
    for (const [key, value] of Object.entries(version)) {
      if (keep.has(key) || !sameValue(value, before[key])) diff[key] = value;
    }
    return diff;
  });
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof ObjectId && b instanceof ObjectId) return a.equals(b);
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    return JSON.stringify(a) === JSON.stringify(b);
  }
  return false;
}
