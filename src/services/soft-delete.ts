/**
 * Soft delete: a DELETE on a resource with `soft_delete` marks its documents with the
 * DELETED flag (`_deleted: true`) instead of removing them. Marked documents are left out of
 * every read, uniqueness check and relation check unless a request asks for them
 * (`show_deleted`, or a `where` naming the flag); an item GET answers 404 with the deleted
 * document; a PUT or PATCH restores it. Documents stored without the flag are not deleted.
 * Every service asks this module; none reads the flag itself.
 */
import type { Resource } from "../domain/types.ts";
import type { Doc, Filter } from "../store/store.ts";
import type { Runtime } from "./runtime.ts";

/** Soft delete as one resource applies it. */
export interface SoftDelete {
  /** Whether the resource soft-deletes. */
  readonly enabled: boolean;
  /** The flag field when enabled: a key field (projections keep it, clients never write it). */
  readonly fields: readonly string[];
  /** The condition keeping marked documents out; undefined when not enabled. */
  readonly liveOnly: Filter | undefined;
  /**
   * The condition of a unique index's partial filter: marked documents never collide with
   * live ones (the uniqueness check ignores them too).
   */
  readonly uniqueIndexCondition: Doc;
  /** Whether `doc` is marked as deleted. */
  isDeleted(doc: Doc): boolean;
  /** The marked copy of `original` to store in its place. */
  marked(original: Doc): Doc;
  /**
   * Sets the flag of a document about to be stored or shown: `restore` (a PUT or PATCH
   * brings a deleted document back) sets it to false; otherwise only a missing flag is set.
   */
  setFlag(doc: Doc, options?: { restore?: boolean }): void;
  /**
   * Whether a collection read includes marked documents: asked with `show_deleted`, or, as
   * in Eve, by a `where` that names the flag (it then decides about them itself).
   */
  showsDeleted(request: { showDeleted: boolean; where?: Filter }): boolean;
}

/**
 * Soft delete for `resource`: made once per resource and flag name (a request asks for it
 * several times; each one made its eight members anew).
 */
export function softDeleteOf(rt: Runtime, resource: Resource): SoftDelete {
  const flag = rt.settings.DELETED;
  const known = made.get(resource);
  if (known !== undefined && known.flag === flag && known.enabled === resource.softDelete) {
    return known.softDelete;
  }
  const softDelete = make(flag, resource.softDelete);
  made.set(resource, { flag, enabled: resource.softDelete, softDelete });
  return softDelete;
}

const made = new WeakMap<Resource, { flag: string; enabled: boolean; softDelete: SoftDelete }>();

function make(flag: string, enabled: boolean): SoftDelete {
  return {
    enabled,
    fields: enabled ? [flag] : [],
    liveOnly: enabled ? { [flag]: { $ne: true } } : undefined,
    uniqueIndexCondition: enabled ? { [flag]: false } : {},
    isDeleted: (doc) => enabled && doc[flag] === true,
    marked: (original) => ({ ...original, [flag]: true }),
    setFlag(doc, options = {}) {
      if (enabled && (options.restore || doc[flag] === undefined)) doc[flag] = false;
    },
    showsDeleted: (request) =>
      enabled &&
      (request.showDeleted || (request.where !== undefined && namesField(request.where, flag))),
  };
}

/** Whether a filter names `field` anywhere (top level or inside `$and`/`$or`/`$nor`). */
function namesField(filter: unknown, field: string): boolean {
  if (Array.isArray(filter)) return filter.some((f) => namesField(f, field));
  if (typeof filter !== "object" || filter === null) return false;
  return Object.entries(filter).some(([key, value]) =>
    key === field || (key.startsWith("$") && namesField(value, field))
  );
}
