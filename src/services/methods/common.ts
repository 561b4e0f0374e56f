/**
 * What the write methods share (POST, PUT, PATCH and DELETE each have their module
 * beside this one): the body check, the write response, storing an edit by ETag
 * compare-and-swap with its oplog entry and stored version, telling the change feeds, and
 * mapping a store unique violation to the validation error it is. Every write is validated
 * first and either stored whole or not at all.
 */
import { notFound, ServiceError } from "../errors.ts";
import { isPlainObject } from "../../util/plain.ts";
import type { ObjectId } from "../../doc/bson.ts";
import { type Alongside, type Doc, DuplicateKeyError } from "../../store/store.ts";
import type { Resource } from "../../domain/types.ts";
import { itemLink } from "../links.ts";
import { deleteFiles, deleteReplacedMedia, expandMedia } from "../media.ts";
import { projected } from "../../query/memory.ts";
import { readProjection } from "../policy.ts";
import { etagCondition, stamp } from "../meta.ts";
import { oplogEntries } from "../oplog.ts";
import { alongsideOf, storeVersioned, versionStamp } from "../versions.ts";
import { softDeleteOf } from "../soft-delete.ts";
import { findItem } from "../read.ts";
import type { ChangeInput } from "../changes.ts";
import { cloneValue } from "../../doc/clone.ts";
import type { Reply, RequestContext, Runtime } from "../runtime.ts";
import { duplicateIssues, validationError } from "../validate.ts";
import { showable } from "../visible.ts";

export function requireObject(value: unknown, what = "the request body"): Doc {
  if (!isPlainObject(value)) throw new ServiceError("bad-request", `${what} must be a JSON object`);
  return value;
}

/**
 * The write-response object for `options.doc`, a stored document: its meta fields, status
 * and link.
 */
export async function writeResponse(
  rt: Runtime,
  ctx: RequestContext,
  options: { doc: Doc },
): Promise<Doc> {
  const { doc } = options;
  const settings = rt.settings;
  const { resource } = ctx;
  const out: Doc = { [resource.idField]: doc[resource.idField] };
  for (const field of [settings.DATE_UPDATED, settings.DATE_CREATED]) {
    if (doc[field] !== undefined) out[field] = doc[field];
  }
  if (resource.ifMatch) out[settings.ETAG] = doc[settings.ETAG];
  for (const field of softDeleteOf(rt, resource).fields) out[field] = doc[field] ?? false;
  Object.assign(out, versionStamp(rt, resource, { doc }));
  for (const field of resource.extraResponseFields) {
    if (doc[field] !== undefined) out[field] = doc[field];
  }
  if (!rt.settings.BANDWIDTH_SAVER) {
    // The whole document as a read shows it: the resource's projection and hidden fields
    // apply (as in Eve), and so does the owner field's hiding.
    const [shown] = showable(rt, resource, [projected(doc, readProjection(rt, resource))]);
    const owner = rt.auth?.ownerField(resource);
    if (owner && !Object.hasOwn(resource.schema, owner)) delete shown[owner];
    await expandMedia(rt, resource, { docs: [shown] });
    Object.assign(out, shown);
  }
  out[settings.STATUS] = settings.STATUS_OK;
  if (resource.hateoas) out[settings.LINKS] = { self: itemLink(ctx, doc) };
  return out;
}

/**
 * URL of `options.doc`, a stored document, for `Location` (built by the HTTP layer's URL
 * builder).
 */
export function locationOf(rt: Runtime, ctx: RequestContext, options: { doc: Doc }): string {
  return rt.urls.api(itemLink(ctx, options.doc).href);
}

/**
 * The answer to a PATCH or PUT of `options.doc`: the write response, and the new ETag as a
 * header (Eve).
 */
export async function editReply(
  rt: Runtime,
  ctx: RequestContext,
  options: { doc: Doc },
): Promise<Reply> {
  const { doc } = options;
  const body = await writeResponse(rt, ctx, options);
  const etag = ctx.resource.ifMatch ? doc[rt.settings.ETAG] : undefined;
  return { status: 200, body, headers: typeof etag === "string" ? { etag: `"${etag}"` } : {} };
}

/**
 * Tells the change feeds what a write stored (`options.changes`), once the store
 * acknowledged it. Copies: hooks running after the write get the same objects and may
 * change them.
 */
export function announce(
  rt: Runtime,
  resource: Resource,
  options: { changes: Omit<ChangeInput, "collection">[] },
) {
  const { changes } = options;
  const hub = rt.changes;
  if (!hub?.watches(resource.source) || changes.length === 0) return;
  hub.written(changes.map((change) => ({
    collection: resource.source,
    op: change.op,
    id: change.id,
    doc: cloneValue(change.doc),
    before: cloneValue(change.before),
  })));
}

/**
 * Maps a store unique violation to the validation error it is; any other error is returned
 * as it is.
 * @param options.docs the documents the failed write stored.
 * @param options.bulk whether the request was a bulk insert (the error lists every document).
 */
export function asValidationError(
  rt: Runtime,
  error: unknown,
  options: { docs: Doc[]; bulk: boolean },
): unknown {
  const { docs, bulk } = options;
  if (!(error instanceof DuplicateKeyError)) return error;
  // As in Eve, a document whose id is taken is a conflict, not a validation error.
  const ids = ["_id", rt.settings.ID_FIELD];
  if (error.fields.length === 0 || error.fields.some((field) => ids.includes(field))) {
    return new ServiceError("conflict", "A document with this id already exists.");
  }
  // The store names the fields; the offending document is not known for every store, so
  // each document is flagged with the value it holds.
  const results = docs.map((doc) => duplicateIssues(rt, error.fields, { doc }));
  return validationError(rt, results, { bulk });
}

/** Finds the addressed item for an edit; 404 when it does not exist. */
export async function originalFor(rt: Runtime, ctx: RequestContext): Promise<Doc> {
  const original = await findItem(rt, ctx);
  if (!original) throw notFound();
  return original;
}

/** An edit about to be stored: the original, its replacement, and what goes with them. */
export interface Edit {
  original: Doc;
  doc: Doc;
  /** Files saved for this write. */
  files?: ObjectId[];
  /** The oplog's operation and changes (the whole document when absent). */
  op: "PATCH" | "PUT" | "DELETE";
  changes?: Doc;
}

/**
 * Stores `doc` over `original` only if nobody changed it meanwhile (ETag compare-and-swap),
 * with its oplog entry. `files` were saved for this write: removed if it fails; files
 * `original` referenced and `doc` no longer does are removed once it succeeds.
 */
async function swap(rt: Runtime, ctx: RequestContext, edit: Edit, versions?: Alongside) {
  const { resource } = ctx;
  const { original, doc, files = [] } = edit;
  const filter = { [resource.idField]: original[resource.idField], ...etagCondition(rt, original) };
  let matched: number;
  try {
    const items = [{ doc, changes: edit.changes }];
    const oplog = await oplogEntries(rt, ctx, { op: edit.op, items });
    ({ matched } = await rt.store.collection(resource.source).replaceOne(filter, doc, {
      alongside: alongsideOf(oplog, versions),
    }));
  } catch (error) {
    await deleteFiles(rt, files);
    throw asValidationError(rt, error, { docs: [doc], bulk: false });
  }
  if (matched === 0) {
    await deleteFiles(rt, files);
    throw new ServiceError(
      "precondition-failed",
      "The document was changed by another request; fetch it again",
    );
  }
  // A soft delete is an update here; feeds show it as the document leaving their view.
  const op = edit.op === "PUT" ? "replace" : "update";
  announce(rt, resource, { changes: [{ op, id: doc[resource.idField], doc, before: original }] });
  // Stored versions keep referencing the files they hold: those go with the document.
  if (!resource.versioning) await deleteReplacedMedia(rt, resource, { original, doc });
}

/** Numbers, stamps and stores an edit of `original`, keeping its version copy. */
export function storeEdit(rt: Runtime, ctx: RequestContext, edit: Edit): Promise<void> {
  return storeVersioned(rt, ctx.resource, {
    edits: [edit],
    stamp: (doc) => stamp(rt, ctx.resource, { doc }),
    write: (versions) => swap(rt, ctx, edit, versions),
  });
}

/** As in Eve: the id of a stored document can't change (400, the message says "immutable"). */
export function immutableId(resource: Resource): ServiceError {
  return new ServiceError(
    "bad-request",
    `${resource.idField} is immutable: the document's id cannot be changed`,
  );
}
