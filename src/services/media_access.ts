/**
 * Who may download a stored file: a client that may read at least one document referencing
 * it, under that document's resource read policy (predefined filter, soft delete, AUTH_FIELD,
 * roles, internal resources). Unreferenced files are served to nobody.
 */
import type { Resource } from "../domain/types.ts";
import type { ObjectId } from "../doc/bson.ts";
import type { Filter } from "../store/store.ts";
import { andFilters } from "./filters.ts";
import { canRead, policyFilter } from "./policy.ts";
import { countVersions } from "./versions.ts";
import type { Account, Runtime } from "./runtime.ts";

/** The dotted query path of a media path (`["files", "[]"]` -> `files`). */
function queryPath(path: readonly string[]): string {
  return path.filter((segment) => segment !== "[]").join(".");
}

/** The condition "one of `resource`'s media fields holds `id`". */
export function referencing(resource: Resource, id: ObjectId): Filter | null {
  const paths = resource.schemaModel.mediaPaths.map(queryPath);
  if (paths.length === 0) return null;
  return paths.length === 1 ? { [paths[0]]: id } : { $or: paths.map((p) => ({ [p]: id })) };
}

/**
 * Whether `options.account` (null: anonymous) may read a document that references file
 * `id`. One counting query per resource that has media fields, stopping at the first match.
 */
export async function mayDownload(
  rt: Runtime,
  id: ObjectId,
  options: { account: Account | null },
): Promise<boolean> {
  const { account } = options;
  for (const resource of rt.domain.values()) {
    const refs = referencing(resource, id);
    if (!refs || !canRead(rt, account, resource)) continue;
    const owner = rt.auth?.ownerFilter(resource, account);
    const filter = andFilters(policyFilter(rt, resource), owner, refs);
    if (await rt.store.collection(resource.source).count(filter, { limit: 1 }) > 0) return true;
    // A file an older version holds is readable by whoever may read that document.
    if (!resource.versioning) continue;
    const inVersions = andFilters(resource.filter, owner, refs);
    if (await countVersions(rt, resource, { filter: inVersions, limit: 1 }) > 0) return true;
  }
  return false;
}

/**
 * Whether any stored document or version (of any resource, soft-deleted ones included)
 * references file `id`, whoever may read it.
 */
export async function isReferenced(rt: Runtime, id: ObjectId): Promise<boolean> {
  for (const resource of rt.domain.values()) {
    const refs = referencing(resource, id);
    if (!refs) continue;
    if (await rt.store.collection(resource.source).count(refs, { limit: 1 }) > 0) return true;
    if (resource.versioning && await countVersions(rt, resource, { filter: refs, limit: 1 }) > 0) {
      return true;
    }
  }
  return false;
}
