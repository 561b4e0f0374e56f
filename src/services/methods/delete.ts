/**
 * DELETE on an item endpoint and on a resource endpoint, hard or soft, with what a hard
 * delete leaves behind (stored versions, files) removed (Eve's `methods/delete`).
 */
import { notFound, ServiceError } from "../errors.ts";
import { type Doc } from "../../store/store.ts";
import type { Resource } from "../../domain/types.ts";
import { checkIfMatch } from "../conditional.ts";
import { andFilters, endpointFilter } from "../filters.ts";
import { deleteFiles, mediaIds } from "../media.ts";
import { etagCondition, stamp } from "../meta.ts";
import { oplogEnabled, oplogEntries } from "../oplog.ts";
import { alongsideOf, dropVersions, storedVersions, storeVersioned } from "../versions.ts";
import { softDeleteOf } from "../soft-delete.ts";
import { oneWriteAtATime } from "../item_writes.ts";
import type { Reply, RequestContext, Runtime } from "../runtime.ts";
import { announce, originalFor, storeEdit } from "./common.ts";

/**
 * Removes what hard-deleted documents (`options.originals`) leave behind: their stored
 * versions and every file they or their versions reference.
 */
async function dropRemains(rt: Runtime, resource: Resource, options: { originals: Doc[] }) {
  const { originals } = options;
  const ids = originals.map((doc) => doc[resource.idField]);
  const holders = resource.schemaModel.mediaPaths.length
    ? [...originals, ...await storedVersions(rt, resource, { ids })]
    : [];
  await dropVersions(rt, resource, { ids });
  const files = new Map(
    holders.flatMap((doc) => mediaIds(resource, doc)).map((id) => [id.toHexString(), id]),
  );
  await deleteFiles(rt, [...files.values()]);
}

/** DELETE on an item endpoint (soft delete marks the document instead). */
export function deleteItem(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  return oneWriteAtATime(rt, ctx, () => deleteOne(rt, ctx));
}

async function deleteOne(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  const { resource } = ctx;
  const softDelete = softDeleteOf(rt, resource);
  const original = await originalFor(rt, ctx);
  if (softDelete.isDeleted(original)) throw notFound();
  await checkIfMatch(rt, ctx, { doc: original });
  await rt.events.emitFor("on_delete_item", resource.name, original);
  if (softDelete.enabled) {
    const doc = softDelete.marked(original);
    await storeEdit(rt, ctx, { original, doc, op: "DELETE", changes: original });
  } else {
    const filter = {
      [resource.idField]: original[resource.idField],
      ...etagCondition(rt, original),
    };
    const alongside = await oplogEntries(rt, ctx, { op: "DELETE", items: [{ doc: original }] });
    const deleted = await rt.store.collection(resource.source).deleteOne(filter, { alongside });
    if (deleted > 0) {
      const id = original[resource.idField];
      announce(rt, resource, { changes: [{ op: "delete", id, doc: null, before: original }] });
      await dropRemains(rt, resource, { originals: [original] });
    }
    if (deleted === 0) {
      throw new ServiceError(
        "precondition-failed",
        "The document was changed by another request; fetch it again",
      );
    }
  }
  await rt.events.emitFor("on_deleted_item", resource.name, original);
  return { status: 204 };
}

/** DELETE on a resource endpoint: every document of the endpoint (its URL variables apply). */
export async function deleteCollection(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  const { resource } = ctx;
  const softDelete = softDeleteOf(rt, resource);
  const collection = rt.store.collection(resource.source);
  const filter = endpointFilter(rt, ctx, { includeDeleted: true });
  const needOriginals = softDelete.enabled || resource.versioning ||
    resource.schemaModel.mediaPaths.length > 0 ||
    oplogEnabled(rt, "DELETE") || rt.events.has("on_delete_resource_originals", resource.name) ||
    !!rt.changes?.watches(resource.source);
  const originals = needOriginals ? await collection.find(filter) : undefined;
  const live = endpointFilter(rt, ctx);
  if ((originals ? originals.length : await collection.count(live, { limit: 1 })) === 0) {
    throw notFound();
  }
  await rt.events.emitFor("on_delete_resource", resource.name);
  if (originals) {
    await rt.events.emitFor("on_delete_resource_originals", resource.name, originals, ctx.lookup);
  }
  if (softDelete.enabled) {
    for (const original of originals!.filter((d) => !softDelete.isDeleted(d))) {
      const doc = softDelete.marked(original);
      await storeVersioned(rt, resource, {
        edits: [{ doc, original }],
        stamp: (doc) => stamp(rt, resource, { doc }),
        write: async (versions) => {
          const items = [{ doc, changes: original }];
          const oplog = await oplogEntries(rt, ctx, { op: "DELETE", items });
          const id = { [resource.idField]: original[resource.idField] };
          await collection.replaceOne(id, doc, { alongside: alongsideOf(oplog, versions) });
        },
      });
      announce(rt, resource, {
        changes: [{ op: "update", id: doc[resource.idField], doc, before: original }],
      });
    }
  } else {
    const items = (originals ?? []).map((doc) => ({ doc }));
    const alongside = await oplogEntries(rt, ctx, { op: "DELETE", items });
    // Only the documents read (their entries and versions are known), not ones created since.
    const ids = originals?.map((d) => d[resource.idField]);
    const target = ids ? andFilters(filter, { [resource.idField]: { $in: ids } }) : filter;
    await collection.deleteMany(target, { alongside });
    announce(rt, resource, {
      changes: (originals ?? []).map((original) => ({
        op: "delete",
        id: original[resource.idField],
        doc: null,
        before: original,
      })),
    });
    await dropRemains(rt, resource, { originals: originals ?? [] });
  }
  await rt.events.emitFor("on_deleted_resource", resource.name);
  return { status: 204 };
}
