/**
 * Writing: POST (single and bulk), PATCH, PUT, item DELETE and resource DELETE, with the
 * database events. Every write is validated first and either stored whole or not at all.
 */
import { notFound, ServiceError } from "./errors.ts";
import { isPlainObject } from "../util/plain.ts";
import type { ObjectId } from "../doc/bson.ts";
import { type Doc, DuplicateKeyError } from "../store/store.ts";
import type { Resource } from "../domain/types.ts";
import { type CompiledSchema, findBatchDuplicates } from "../validation/mod.ts";
import { checkIfMatch } from "./conditional.ts";
import { andFilters, endpointFilter } from "./filters.ts";
import { itemLink } from "./links.ts";
import {
  deleteFiles,
  deleteReplacedMedia,
  expandMedia,
  mediaIds,
  storeMedia,
  wrapSingleUploads,
} from "./media.ts";
import { formLists } from "./forms.ts";
import { projected } from "../query/memory.ts";
import { readProjection } from "./policy.ts";
import { etagCondition, idToString, newId, now, stamp } from "./meta.ts";
import { applyPatch } from "./patch.ts";
import { oplogEnabled, oplogEntries } from "./oplog.ts";
import { dropVersions, storedVersions, storeVersioned, versionStamp } from "./versions.ts";
import { softDeleteOf } from "./soft-delete.ts";
import { findItem } from "./read.ts";
import { oneWriteAtATime } from "./item_writes.ts";
import type { ChangeInput } from "./changes.ts";
import { cloneValue } from "../doc/clone.ts";
import type { Reply, RequestContext, Runtime } from "./runtime.ts";
import { duplicateIssues, validationContext, validationError } from "./validate.ts";
import { showable } from "./visible.ts";

function requireObject(value: unknown, what = "the request body"): Doc {
  if (!isPlainObject(value)) throw new ServiceError("bad-request", `${what} must be a JSON object`);
  return value;
}

/**
 * The write-response object for `options.doc`, a stored document: its meta fields, status
 * and link.
 */
async function writeResponse(
  rt: Runtime,
  ctx: RequestContext,
  options: { doc: Doc },
): Promise<Doc> {
  const { doc } = options;
  const s = rt.settings;
  const { resource } = ctx;
  const out: Doc = { [resource.idField]: doc[resource.idField] };
  for (const field of [s.DATE_UPDATED, s.DATE_CREATED]) {
    if (doc[field] !== undefined) out[field] = doc[field];
  }
  if (resource.ifMatch) out[s.ETAG] = doc[s.ETAG];
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
  out[s.STATUS] = s.STATUS_OK;
  if (resource.hateoas) out[s.LINKS] = { self: itemLink(ctx, doc) };
  return out;
}

/**
 * URL of `options.doc`, a stored document, for `Location` (built by the HTTP layer's URL
 * builder).
 */
function locationOf(rt: Runtime, ctx: RequestContext, options: { doc: Doc }): string {
  return rt.urls.api(itemLink(ctx, options.doc).href);
}

/**
 * The answer to a PATCH or PUT of `options.doc`: the write response, and the new ETag as a
 * header (Eve).
 */
async function editReply(rt: Runtime, ctx: RequestContext, options: { doc: Doc }): Promise<Reply> {
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
function announce(
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
function asValidationError(
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

/**
 * Validates documents for a create, all of them, before anything is stored.
 * @param options.inputs the documents as sent.
 * @param options.bulk whether the request was a bulk insert (the error lists every document).
 */
async function validateNew(
  rt: Runtime,
  ctx: RequestContext,
  options: { inputs: Doc[]; bulk: boolean },
) {
  const { inputs, bulk } = options;
  const schema = rt.schemas.get(ctx.resource.name)!;
  const create = { mode: "create" } as const;
  const results = await Promise.all(
    inputs.map((input) =>
      schema.validate({ ...input, ...ctx.urlValues }, validationContext(rt, ctx, create))
    ),
  );
  const issues = results.map((r) => r.issues);
  const docs = results.map((r) => r.doc);
  for (
    const [index, dup] of findBatchDuplicates(
      docs,
      [...schema.uniqueFields, ...schema.scopedUniqueFields],
      rt.settings.DATE_FORMAT,
    )
  ) {
    issues[index] = { ...(issues[index] ?? {}), ...dup };
  }
  if (issues.some(Boolean)) throw validationError(rt, issues, { bulk });
  await rt.auth?.prepareWrite(ctx, docs);
  return docs;
}

/**
 * POST on a resource endpoint: one document or a list of them.
 * @param options.presetId the id of a document without one (a PUT creating its item,
 * UPSERT_ON_PUT); by default a new id.
 */
export async function postCollection(
  rt: Runtime,
  ctx: RequestContext,
  options: { presetId?: unknown } = {},
): Promise<Reply> {
  const { presetId } = options;
  const { resource } = ctx;
  const list = Array.isArray(ctx.body);
  const inputs = list ? ctx.body as unknown[] : [ctx.body];
  // As in Eve, a list of one document is no bulk insert: it is answered as that document.
  const bulk = inputs.length > 1;
  if (bulk && !resource.bulkEnabled) {
    throw new ServiceError("bad-request", "bulk inserts are disabled for this resource");
  }
  if (inputs.length === 0) {
    throw new ServiceError("bad-request", "the request body holds no document");
  }
  if (inputs.length > rt.settings.BULK_MAX_DOCUMENTS) {
    throw new ServiceError(
      "too-large",
      `at most ${rt.settings.BULK_MAX_DOCUMENTS} documents per request`,
    );
  }
  inputs.forEach((doc, i) => requireObject(doc, list ? `document ${i}` : undefined));
  for (const input of inputs) {
    wrapSingleUploads(rt, resource, { body: input });
    formLists(rt, ctx, { resource, body: input });
  }
  const docs = await validateNew(rt, ctx, { inputs: inputs as Doc[], bulk });
  const files = await storeMedia(rt, resource, { docs });
  const created = now();
  for (const doc of docs) {
    doc[resource.idField] ??= presetId ?? newId(resource);
    doc[rt.settings.DATE_CREATED] = created;
    doc[rt.settings.DATE_UPDATED] = created;
  }
  await rt.events.emitFor("on_insert", resource.name, docs);
  const op = ctx.method === "PUT" ? "PUT" : "POST";
  try {
    await storeVersioned(rt, resource, {
      edits: docs.map((doc) => ({ doc })),
      stamp: (doc) => stamp(rt, resource, { doc, created }),
      write: async () => {
        const items = docs.map((doc) => ({ doc }));
        const alongside = await oplogEntries(rt, ctx, { op, items });
        await rt.store.collection(resource.source).insertMany(docs, { alongside });
      },
    });
  } catch (error) {
    await deleteFiles(rt, files);
    throw asValidationError(rt, error, { docs, bulk });
  }
  announce(rt, resource, {
    changes: docs.map((doc) => ({ op: "insert", id: doc[resource.idField], doc, before: null })),
  });
  await rt.events.emitFor("on_inserted", resource.name, docs);
  const items = await Promise.all(docs.map((doc) => writeResponse(rt, ctx, { doc })));
  const headers = { location: locationOf(rt, ctx, { doc: docs[0] }) };
  const s = rt.settings;
  const body = bulk ? { [s.STATUS]: s.STATUS_OK, [s.ITEMS]: items } : items[0];
  return { status: 201, body, headers };
}

/** Finds the addressed item for an edit; 404 when it does not exist. */
async function originalFor(rt: Runtime, ctx: RequestContext): Promise<Doc> {
  const original = await findItem(rt, ctx);
  if (!original) throw notFound();
  return original;
}

/** An edit about to be stored: the original, its replacement, and what goes with them. */
interface Edit {
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
async function swap(rt: Runtime, ctx: RequestContext, edit: Edit) {
  const { resource } = ctx;
  const { original, doc, files = [] } = edit;
  const filter = { [resource.idField]: original[resource.idField], ...etagCondition(rt, original) };
  let matched: number;
  try {
    const items = [{ doc, changes: edit.changes }];
    const alongside = await oplogEntries(rt, ctx, { op: edit.op, items });
    ({ matched } = await rt.store.collection(resource.source).replaceOne(filter, doc, {
      alongside,
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

/**
 * normalize_on_patch, as Eve 2.3.1 behaves: a top-level field with a default that the PATCH
 * does not name is filled only when the stored document lacks it (a PATCH never resets
 * unrelated data); inside a dict the PATCH names, omitted sub-fields with a default are
 * reset to it. An empty PATCH changes nothing.
 * @param sent the PATCH body as sent.
 * @param options.updates the validated changes: a copy of them is returned with the defaults.
 * @param options.original the stored document the PATCH edits.
 */
function withDefaults(
  schema: CompiledSchema,
  sent: Doc,
  options: { updates: Doc; original: Doc },
): Doc {
  const { updates, original } = options;
  if (Object.keys(sent).length === 0) return updates;
  // The shape as sent: validated nested values already hold the stored sub-fields.
  const defaults = schema.defaults(applyPatch({}, sent, { mergeNested: true }));
  const out = { ...updates };
  for (const [path, value] of Object.entries(defaults)) {
    if (path.includes(".") || original[path] === undefined) out[path] = value;
  }
  return out;
}

/** Numbers, stamps and stores an edit of `original`, keeping its version copy. */
function storeEdit(rt: Runtime, ctx: RequestContext, edit: Edit): Promise<void> {
  return storeVersioned(rt, ctx.resource, {
    edits: [edit],
    stamp: (doc) => stamp(rt, ctx.resource, { doc }),
    write: () => swap(rt, ctx, edit),
  });
}

/** PATCH on an item endpoint. */
export function patchItem(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  return oneWriteAtATime(rt, ctx, () => patch(rt, ctx));
}

async function patch(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  const { resource } = ctx;
  const updates = requireObject(ctx.body);
  wrapSingleUploads(rt, resource, { body: updates });
  formLists(rt, ctx, { resource, body: updates });
  const original = await originalFor(rt, ctx);
  if (
    Object.hasOwn(updates, resource.idField) &&
    idToString(updates[resource.idField]) !== idToString(original[resource.idField])
  ) {
    throw immutableId(resource);
  }
  await checkIfMatch(rt, ctx, { doc: original });
  const schema = rt.schemas.get(resource.name)!;
  const { doc: clean, issues } = await schema.validate(
    updates,
    validationContext(rt, ctx, { mode: "patch", original }),
  );
  if (issues) throw validationError(rt, [issues], { bulk: false });
  await rt.auth?.prepareWrite(ctx, [clean], { patch: true });
  const changes = resource.normalizeOnPatch
    ? withDefaults(schema, updates, { updates: clean, original })
    : clean;
  const files = await storeMedia(rt, resource, { docs: [changes] });
  // Callbacks may add to the changes: they are applied after them.
  await rt.events.emitFor("on_update", resource.name, changes, original);
  const doc = applyPatch(original, changes, { mergeNested: resource.mergeNestedDocuments });
  softDeleteOf(rt, resource).setFlag(doc, { restore: true });
  await storeEdit(rt, ctx, { original, doc, files, op: "PATCH", changes });
  await rt.events.emitFor("on_updated", resource.name, changes, original);
  return editReply(rt, ctx, { doc });
}

/** As in Eve: the id of a stored document can't change (400, the message says "immutable"). */
function immutableId(resource: Resource): ServiceError {
  return new ServiceError(
    "bad-request",
    `${resource.idField} is immutable: the document's id cannot be changed`,
  );
}

/** PUT on an item endpoint: replaces the document, or creates it when UPSERT_ON_PUT. */
export function putItem(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  return oneWriteAtATime(rt, ctx, () => put(rt, ctx));
}

async function put(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  const { resource } = ctx;
  const s = rt.settings;
  const input = requireObject(ctx.body);
  wrapSingleUploads(rt, resource, { body: input });
  formLists(rt, ctx, { resource, body: input });
  const original = await findItem(rt, ctx);
  if (!original) {
    if (!resource.upsertOnPut) throw notFound();
    // An id taken outside this endpoint's scope (another sub-resource parent, another view)
    // is not found here either: answering "not unique" would tell that it exists.
    const id = ctx.lookup[resource.idField];
    const collection = rt.store.collection(resource.source);
    if (id !== undefined && await collection.count({ [resource.idField]: id }, { limit: 1 })) {
      throw notFound();
    }
    // As in Eve, the document takes the URL's id, whatever id the body names.
    const { [resource.idField]: _ignored, ...body } = input;
    return postCollection(rt, { ...ctx, body }, { presetId: id });
  }
  if (
    Object.hasOwn(input, resource.idField) &&
    idToString(input[resource.idField]) !== idToString(original[resource.idField])
  ) {
    throw immutableId(resource);
  }
  await checkIfMatch(rt, ctx, { doc: original });
  const schema = rt.schemas.get(resource.name)!;
  const { doc: clean, issues } = await schema.validate(
    { ...input, ...ctx.urlValues },
    validationContext(rt, ctx, { mode: "replace", original }),
  );
  if (issues) throw validationError(rt, [issues], { bulk: false });
  await rt.auth?.prepareWrite(ctx, [clean], { original });
  const doc: Doc = { [resource.idField]: original[resource.idField], ...clean };
  if (original[s.DATE_CREATED] !== undefined) doc[s.DATE_CREATED] = original[s.DATE_CREATED];
  const files = await storeMedia(rt, resource, { docs: [doc] });
  await rt.events.emitFor("on_replace", resource.name, doc, original);
  softDeleteOf(rt, resource).setFlag(doc, { restore: true });
  await storeEdit(rt, ctx, { original, doc, files, op: "PUT" });
  await rt.events.emitFor("on_replaced", resource.name, doc, original);
  return editReply(rt, ctx, { doc });
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
        write: async () => {
          const items = [{ doc, changes: original }];
          const alongside = await oplogEntries(rt, ctx, { op: "DELETE", items });
          const id = { [resource.idField]: original[resource.idField] };
          await collection.replaceOne(id, doc, { alongside });
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
