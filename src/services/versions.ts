/**
 * Document versioning: every POST, PUT, PATCH (and soft delete) of a versioned resource
 * stores a copy in the shadow collection `<source><VERSIONS>` (`people_versions`), keyed
 * by the document id (`_id_document`) and the version number. Reads of `?version=<n>`,
 * `all` and `diffs`, versioned references (`data_relation` with `version: true`) and their
 * embedding come from there. Every service asks this module about versions; none reads the
 * version fields or the shadow collection itself.
 */
import { ServiceError } from "./errors.ts";
import { canonicalEjson, ObjectId } from "../doc/bson.ts";
import type { Alongside, Doc, Filter, Projection, Sort } from "../store/store.ts";
import { andFilters } from "./filters.ts";
import type { Resource } from "../domain/types.ts";
import type { Runtime } from "./runtime.ts";
import { derivedEtag } from "./etag.ts";
import { setOwn } from "../domain/keys.ts";

/** The version fields a versioned resource's documents carry (key fields, service-written). */
export function versionFields(rt: Runtime, resource: Resource): string[] {
  return resource.versioning ? [rt.settings.VERSION, rt.settings.LATEST_VERSION] : [];
}

/**
 * The version fields to show on `doc`: its number (a document stored before versioning was
 * enabled is version 1) and the latest number (`latest`, by default its own). Empty for a
 * resource without versioning.
 */
export function versionStamp(
  rt: Runtime,
  resource: Resource,
  options: { doc: Doc; latest?: unknown },
): Doc {
  if (!resource.versioning) return {};
  const version = options.doc[rt.settings.VERSION] ?? 1;
  return {
    [rt.settings.VERSION]: version,
    [rt.settings.LATEST_VERSION]: options.latest ?? version,
  };
}

/** The shadow collection of a resource. */
export function versionsSource(rt: Runtime, resource: Resource): string {
  return `${resource.source}${rt.settings.VERSIONS}`;
}

/** The field of a shadow document that holds the primary document's id. */
export function documentIdField(rt: Runtime, resource: Resource): string {
  return `${resource.idField}${rt.settings.VERSION_ID_SUFFIX}`;
}

/**
 * Sets the version number of `edit.doc`, a document about to be stored: 1 on create (no
 * `edit.original`), one more than the original's otherwise (an original stored before
 * versioning was enabled is version 1, see {@link legacyVersion}).
 */
function nextVersion(rt: Runtime, resource: Resource, edit: { doc: Doc; original?: Doc }): void {
  if (!resource.versioning) return;
  const { doc, original } = edit;
  const field = rt.settings.VERSION;
  const previous = original?.[field];
  doc[field] = typeof previous === "number" ? previous + 1 : original ? 2 : 1;
}

/**
 * A document stored before versioning was enabled has no number and no stored version: it
 * reads as version 1, and its first edit keeps its content as version 1. Returns that
 * version 1 copy of `options.original` to store with the edit, or undefined when the
 * original is numbered.
 */
export function legacyVersion(
  rt: Runtime,
  resource: Resource,
  options: { original: Doc },
): Doc | undefined {
  const { original } = options;
  if (!resource.versioning || typeof original[rt.settings.VERSION] === "number") return undefined;
  return { ...original, [rt.settings.VERSION]: 1 };
}

/**
 * Stores new or edited documents with their versions: numbers each `doc` (after its
 * `original`), lets `stamp` finish it (a new ETag with the number), then runs `write`
 * keeping the version copies, the original's too when it predates versioning (with the ETag
 * it was read with, computed when it has none stored, so version 1 keeps it). `write` gets
 * the copies to insert alongside its write when the store writes them in the same atomic
 * unit (see {@link withVersions}); it stores them with its own (see {@link alongsideOf}).
 */
export async function storeVersioned(
  rt: Runtime,
  resource: Resource,
  options: {
    edits: Array<{ doc: Doc; original?: Doc }>;
    stamp(doc: Doc): void;
    write(versions?: Alongside): Promise<void>;
  },
): Promise<void> {
  const copies: Doc[] = [];
  for (const edit of options.edits) {
    const { doc, original } = edit;
    nextVersion(rt, resource, edit);
    options.stamp(doc);
    const legacy = original && legacyVersion(rt, resource, { original });
    if (original && legacy) {
      if (typeof legacy[rt.settings.ETAG] !== "string") {
        legacy[rt.settings.ETAG] = await derivedEtag(rt, original);
      }
      copies.push(legacy);
    }
    copies.push(doc);
  }
  return withVersions(rt, resource, { docs: copies, write: options.write });
}

/**
 * The inserts to make alongside a write: its oplog entries and its version copies, either,
 * both or none.
 */
export function alongsideOf(
  oplog: Alongside | undefined,
  versions: Alongside | undefined,
): Alongside | Alongside[] | undefined {
  return oplog && versions ? [oplog, versions] : oplog ?? versions;
}

/**
 * Runs `options.write` for `options.docs` (already carrying their version numbers) and
 * keeps their shadow copies. On a store whose alongside inserts are atomic with their write
 * (Store.atomicAlongside: the embedded store) the copies go to `write`, which inserts them
 * alongside its own write: all or nothing, in one statement with the document and its
 * oplog entry when the write is one document, and one sync (stored first, they cost a
 * statement, a group commit and a sync of their own, which the write then waited for).
 * Elsewhere the copies are stored first and removed again if the write fails, so a failed
 * request leaves no version behind.
 */
async function withVersions(
  rt: Runtime,
  resource: Resource,
  options: { docs: Doc[]; write: (versions?: Alongside) => Promise<void> },
): Promise<void> {
  const { docs, write } = options;
  if (!resource.versioning) return write();
  const idField = documentIdField(rt, resource);
  // As in Eve, a shadow copy holds the versioned fields only: the creation date (and every
  // field marked `versioned: false`) is read from the primary document.
  const skipped = new Set([...resource.schemaModel.unversioned, rt.settings.DATE_CREATED]);
  skipped.add(resource.idField);
  // Built member by member: deleting members of a copy would leave a slow dictionary object.
  const shadows = docs.map((doc) => {
    const shadow: Doc = {};
    for (const key of Object.keys(doc)) {
      if (!skipped.has(key)) setOwn(shadow, key, doc[key]);
    }
    shadow._id = new ObjectId();
    shadow[idField] = doc[resource.idField];
    return shadow;
  });
  if (rt.store.atomicAlongside === true) {
    return write({ collection: versionsSource(rt, resource), docs: shadows });
  }
  const versions = rt.store.collection(versionsSource(rt, resource));
  await versions.insertMany(shadows);
  try {
    await write();
  } catch (error) {
    await versions.deleteMany({ _id: { $in: shadows.map((shadow) => shadow._id) } });
    throw error;
  }
}

/** Every stored version of the documents with `options.ids`, as stored (shadow documents). */
export function storedVersions(
  rt: Runtime,
  resource: Resource,
  options: { ids: unknown[] },
): Promise<Doc[]> {
  const { ids } = options;
  if (!resource.versioning || ids.length === 0) return Promise.resolve([]);
  return rt.store.collection(versionsSource(rt, resource)).find({
    [documentIdField(rt, resource)]: { $in: ids },
  });
}

/**
 * As in Eve, an old version shows the current value of the fields that are not versioned
 * (`versioned: false`) and the creation date, taken from the primary document
 * (`options.primary`). Changes `version` in place and returns it.
 */
export function withCurrentFields(
  rt: Runtime,
  resource: Resource,
  version: Doc,
  options: { primary: Doc },
): Doc {
  const { primary } = options;
  for (const field of [...resource.schemaModel.unversioned, rt.settings.DATE_CREATED]) {
    if (primary[field] !== undefined) version[field] = primary[field];
  }
  return version;
}

/** Removes every stored version of the documents with `options.ids`. */
export async function dropVersions(rt: Runtime, resource: Resource, options: { ids: unknown[] }) {
  const { ids } = options;
  if (!resource.versioning || ids.length === 0) return;
  await rt.store.collection(versionsSource(rt, resource)).deleteMany({
    [documentIdField(rt, resource)]: { $in: ids },
  });
}

/** What turns a shadow document of `resource` back into the primary document's shape. */
function fromShadow(rt: Runtime, resource: Resource): (shadow: Doc) => Doc {
  const idField = documentIdField(rt, resource);
  return (shadow) => {
    const { _id: _shadowId, [idField]: id, ...rest } = shadow;
    return { [resource.idField]: id, ...rest };
  };
}

/** Parses the `version` parameter: a positive integer, `all` or `diffs`. */
export function parseVersionParam(raw: string): number | "all" | "diffs" {
  if (raw === "all" || raw === "diffs") return raw;
  if (/^[1-9]\d{0,8}$/.test(raw)) return Number(raw);
  throw new ServiceError("bad-request", `version: must be a positive integer, "all" or "diffs"`);
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
    options.filter && onShadowFilter(rt, resource, { filter: options.filter }),
  );
  const shadow = await rt.store.collection(versionsSource(rt, resource)).findOne(filter, {
    projection: shadowProjection(rt, resource, { projection: options.projection }),
  });
  return shadow && fromShadow(rt, resource)(shadow);
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
    { $or: options.or.map((part) => onShadowFilter(rt, resource, { filter: part })) },
    onShadowFilter(rt, resource, { filter: resource.filter }),
    options.filter && onShadowFilter(rt, resource, { filter: options.filter }),
  );
  const shadows = await rt.store.collection(versionsSource(rt, resource)).find(filter, {
    projection: shadowProjection(rt, resource, { projection: options.projection }),
  });
  return shadows.map(fromShadow(rt, resource));
}

/** How many stored versions of `resource` match `filter` (on the primary's fields), at most `limit`. */
export function countVersions(
  rt: Runtime,
  resource: Resource,
  options: { filter: Filter; limit?: number },
): Promise<number> {
  return rt.store.collection(versionsSource(rt, resource)).count(
    andFilters(onShadowFilter(rt, resource, { filter: options.filter })),
    { limit: options.limit },
  );
}

/** A versioned reference: the referenced document's `field` value and a version number. */
export interface VersionRef {
  id: unknown;
  version: number;
}

/**
 * What a versioned reference (`{"_id": ..., "_version": n}`, the relation's `field` and
 * VERSION) names; undefined when it is not one.
 */
export function versionRef(
  rt: Runtime,
  options: { field: string; ref: unknown },
): VersionRef | undefined {
  const { ref } = options;
  if (typeof ref !== "object" || ref === null || Array.isArray(ref)) return undefined;
  const version = (ref as Doc)[rt.settings.VERSION];
  return typeof version === "number" ? { id: (ref as Doc)[options.field], version } : undefined;
}

/**
 * The reference by id that `options.ref`, a versioned reference through `options.field`,
 * names; undefined when no document has it. As in Eve, a field that is not versioned is
 * looked up on the current documents, and a document stored before versioning was enabled
 * is its own version 1.
 */
export async function refById(
  rt: Runtime,
  target: Resource,
  options: { field: string; ref: VersionRef },
): Promise<VersionRef | undefined> {
  const { field, ref } = options;
  if (field === target.idField) return ref;
  const settings = rt.settings;
  const idField = documentIdField(rt, target);
  const unversioned = target.schemaModel.unversioned.includes(field);
  if (!unversioned) {
    const shadow = await rt.store.collection(versionsSource(rt, target)).findOne(
      andFilters(
        { [field]: ref.id, [settings.VERSION]: ref.version },
        onShadowFilter(rt, target, { filter: target.filter }),
      ),
      { projection: { [idField]: 1 } },
    );
    if (shadow) return { id: shadow[idField], version: ref.version };
    if (ref.version !== 1) return undefined;
  }
  const primary = await rt.store.collection(target.source).findOne(
    andFilters(
      target.filter,
      { [field]: ref.id },
      unversioned ? undefined : { [settings.VERSION]: { $exists: false } },
    ),
    { projection: { [target.idField]: 1 } },
  );
  return primary ? { id: primary[target.idField], version: ref.version } : undefined;
}

/**
 * Whether version `ref.version` of the `target` document whose `field` is `ref.id` exists
 * (under its predefined filter and `filter`); a document stored before versioning was
 * enabled is its own version 1.
 */
export async function versionExists(
  rt: Runtime,
  target: Resource,
  options: { field: string; ref: VersionRef; filter?: Filter },
): Promise<boolean> {
  const ref = await refById(rt, target, options);
  if (!ref) return false;
  const query = andFilters(
    onShadowFilter(rt, target, {
      filter: { [target.idField]: ref.id, [rt.settings.VERSION]: ref.version },
    }),
    onShadowFilter(rt, target, { filter: target.filter }),
    options.filter && onShadowFilter(rt, target, { filter: options.filter }),
  );
  if ((await rt.store.collection(versionsSource(rt, target)).count(query, { limit: 1 })) > 0) {
    return true;
  }
  if (ref.version !== 1) return false;
  const legacy = andFilters(target.filter, options.filter, {
    [target.idField]: ref.id,
    [rt.settings.VERSION]: { $exists: false },
  });
  return (await rt.store.collection(target.source).count(legacy, { limit: 1 })) > 0;
}

/**
 * The versions versioned references name, by {@link versionKey}: read from the stored
 * versions in one query under `target`'s predefined filter and `filter`, projected; a
 * document stored before versioning was enabled is its own version 1.
 */
export async function referencedVersions(
  rt: Runtime,
  target: Resource,
  options: { refs: VersionRef[]; projection?: Projection; filter?: Filter },
): Promise<Map<string, Doc>> {
  const settings = rt.settings;
  const found = new Map<string, Doc>();
  if (options.refs.length === 0) return found;
  const wanted = new Map(options.refs.map((ref) => [
    versionKey(ref),
    { [target.idField]: ref.id, [settings.VERSION]: ref.version },
  ]));
  const { projection, filter } = options;
  for (
    const version of await versionsMatching(rt, target, {
      or: [...wanted.values()],
      projection,
      filter,
    })
  ) {
    found.set(
      versionKey({ id: version[target.idField], version: version[settings.VERSION] as number }),
      version,
    );
  }
  const legacyIds = options.refs.filter((ref) => ref.version === 1 && !found.has(versionKey(ref)))
    .map((ref) => ref.id);
  if (legacyIds.length > 0) {
    const current = await rt.store.collection(target.source).find(
      andFilters(target.filter, filter, { [target.idField]: { $in: legacyIds } }),
      { projection },
    );
    for (const doc of current) {
      const legacy = legacyVersion(rt, target, { original: doc });
      if (legacy) found.set(versionKey({ id: doc[target.idField], version: 1 }), legacy);
    }
  }
  return found;
}

/** A key identifying a versioned reference (ids of any BSON type). */
export function versionKey(ref: VersionRef): string {
  return canonicalEjson({ id: ref.id, version: ref.version });
}

/** `options.filter`, a filter on the primary document's fields, for shadow documents. */
function onShadowFilter(rt: Runtime, resource: Resource, options: { filter: Filter }): Filter {
  const out: Filter = {};
  for (const [key, value] of Object.entries(options.filter)) {
    if (key === resource.idField) out[documentIdField(rt, resource)] = value;
    else if ((key === "$and" || key === "$or" || key === "$nor") && Array.isArray(value)) {
      out[key] = value.map((part) => onShadowFilter(rt, resource, { filter: part as Filter }));
    } else out[key] = value;
  }
  return out;
}

/** `options.spec`, a sort or projection on the primary document's fields, for shadow documents. */
function onShadows<T extends Record<string, unknown>>(
  rt: Runtime,
  resource: Resource,
  options: { spec: T },
): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options.spec)) {
    out[key === resource.idField ? documentIdField(rt, resource) : key] = value;
  }
  return out as T;
}

/**
 * `options.projection` (on the primary document's fields) for shadows: inclusive ones keep
 * what makes a shadow a version. Undefined without one.
 */
function shadowProjection(
  rt: Runtime,
  resource: Resource,
  options: { projection: Projection | undefined },
): Projection | undefined {
  const { projection } = options;
  if (!projection || Object.keys(projection).length === 0) return undefined;
  const out = onShadows(rt, resource, { spec: projection });
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
    options.filter && onShadowFilter(rt, resource, { filter: options.filter }),
  );
  const collection = rt.store.collection(versionsSource(rt, resource));
  const sort = options.sort ?? { [rt.settings.VERSION]: 1 };
  const [shadows, total] = await Promise.all([
    collection.find(filter, {
      sort: { ...onShadows(rt, resource, { spec: sort }), _id: 1 },
      skip: options.skip,
      limit: options.limit,
      projection: shadowProjection(rt, resource, { projection: options.projection }),
    }),
    collection.count(filter),
  ]);
  return { versions: shadows.map(fromShadow(rt, resource)), total };
}

/**
 * Diffs of consecutive versions (`options.versions`, in order): the first version whole,
 * then, as in Eve, for each later version only the fields that changed, its version number
 * and the VERSION_DIFF_INCLUDE fields.
 */
export function diffVersions(rt: Runtime, options: { versions: Doc[] }): Doc[] {
  const { versions } = options;
  const settings = rt.settings;
  const keep = new Set([settings.VERSION, ...settings.VERSION_DIFF_INCLUDE]);
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
