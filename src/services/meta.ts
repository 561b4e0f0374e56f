/**
 * Meta fields the service keeps on every stored document: id, dates, ETag, soft-delete
 * flag. The ETag, 160 bits drawn at random for the write, reveals nothing of the content
 * (see etag.ts) and is kept in the document, so conditional requests cost no recomputation.
 */
import { ObjectId, parseObjectId } from "../doc/bson.ts";
import type { Doc } from "../store/store.ts";
import type { Resource } from "../domain/types.ts";
import { singleType } from "../domain/schema.ts";
import type { Runtime } from "./runtime.ts";
import { softDeleteOf } from "./soft-delete.ts";
import { versionFields } from "./versions.ts";
import { derivedEtag, freshToken } from "./etag.ts";

/** The current time truncated to whole seconds, as dates travel in DATE_FORMAT. */
export function now(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}

/**
 * The ETag of a whole stored document: the stored one, or, for a document written outside
 * the API (no `_etag`), a keyed hash of it (see {@link derivedEtag}), so it can still be
 * cached and edited.
 */
export function etagOf(rt: Runtime, doc: Doc): Promise<string> {
  const stored = doc[rt.settings.ETAG];
  return typeof stored === "string" ? Promise.resolve(stored) : derivedEtag(rt, doc);
}

/** The ETag condition of a compare-and-swap on `original` (which may have none stored). */
export function etagCondition(rt: Runtime, original: Doc): Doc {
  const stored = original[rt.settings.ETAG];
  return { [rt.settings.ETAG]: typeof stored === "string" ? stored : { $exists: false } };
}

/** Names of the fields clients may never write. */
export function metaFields(rt: Runtime, resource: Resource): string[] {
  const settings = rt.settings;
  // The soft-delete flag is the service's even where the resource does not soft-delete.
  return [
    settings.DATE_CREATED,
    settings.DATE_UPDATED,
    settings.ETAG,
    settings.LINKS,
    settings.DELETED,
    ...versionFields(rt, resource),
    ...(resource.versioning ? [resource.idField + settings.VERSION_ID_SUFFIX] : []),
  ];
}

/**
 * Sets `_updated`, `_created` (when `options.created` is given), `_deleted` and a fresh
 * `_etag` (see {@link freshToken}) on `options.doc`, in that order, and returns it. A
 * member the document has already keeps its place.
 */
export function stamp(
  rt: Runtime,
  resource: Resource,
  options: { doc: Doc; created?: Date },
): Doc {
  const { doc, created } = options;
  const settings = rt.settings;
  const time = now();
  if (created) doc[settings.DATE_CREATED] = created;
  doc[settings.DATE_UPDATED] = time;
  softDeleteOf(rt, resource).setFlag(doc);
  // Set in place, not deleted and added again: a deleted member turns the object into a
  // slow dictionary that every later step (storing, rendering) pays for.
  doc[settings.ETAG] = freshToken();
  return doc;
}

/**
 * A new document id for the resource: ObjectId by default, a UUID for `uuid` id fields, and
 * an ObjectId's hex string for `string` id fields (so the id reads back through the item URL,
 * which types it as the schema says).
 */
export function newId(resource: Resource): unknown {
  const type = singleType(resource.schemaModel.fieldAt(resource.idField));
  if (type === "uuid") return crypto.randomUUID();
  if (type === "string") return new ObjectId().toHexString();
  return new ObjectId();
}

/**
 * Types a value taken from a URL (`options.raw`) for `options.field` of `resource`: ObjectId
 * for objectid fields (and for the id field when the schema does not declare it), numbers
 * for integer fields. Null when the value cannot be of that type (the caller answers 404).
 */
export function castUrlValue(resource: Resource, options: { field: string; raw: string }): unknown {
  const { field, raw } = options;
  // The id field is an objectid unless the schema declares it otherwise.
  switch (singleType(resource.schemaModel.root.fields.get(field))) {
    case "objectid":
      return parseObjectId(raw);
    case "integer":
      return /^-?\d+$/.test(raw) ? Number(raw) : null;
    case "number":
    case "float":
      return Number.isFinite(Number(raw)) && raw.trim() !== "" ? Number(raw) : null;
    default:
      return raw;
  }
}

export { idToString } from "../doc/bson.ts";
