/**
 * POST on a resource endpoint: one document or a list of them (a bulk insert), all
 * validated before any is stored, stored whole or not at all (Eve's `methods/post`).
 */
import { ServiceError } from "../errors.ts";
import { type Doc } from "../../store/store.ts";
import { findBatchDuplicates } from "../../validation/mod.ts";
import { deleteFiles, storeMedia, wrapSingleUploads } from "../media.ts";
import { formLists } from "../forms.ts";
import { newId, now, stamp } from "../meta.ts";
import { oplogEntries } from "../oplog.ts";
import { alongsideOf, storeVersioned } from "../versions.ts";
import type { Reply, RequestContext, Runtime } from "../runtime.ts";
import { validationContext, validationError } from "../validate.ts";
import { mapLimited } from "../../util/map_limited.ts";
import { announce, asValidationError, locationOf, requireObject, writeResponse } from "./common.ts";

/**
 * How many documents of one bulk insert are validated at the same time (each runs at most 8 of
 * its uniqueness and relation queries at once). All at once, a bulk of 1,000 documents sent
 * 1,000 queries together: the MongoDB driver queued them for its connections (100 by default)
 * ahead of every other request's, and kept a server session for each in its pool, which every
 * later query walks when it ends. After a failure (the store's), no new document starts.
 */
const BULK_VALIDATIONS = 32;

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
  const validate = (input: Doc) =>
    schema.validate({ ...input, ...ctx.urlValues }, validationContext(rt, ctx, create));
  const results = await mapLimited(inputs, BULK_VALIDATIONS, validate);
  const issues = results.map((r) => r.issues);
  const docs = results.map((r) => r.doc);
  // A value repeated within the request (one document alone repeats nothing).
  const unique = [...schema.uniqueFields, ...schema.scopedUniqueFields];
  if (docs.length > 1 && unique.length > 0) {
    for (const [index, dup] of findBatchDuplicates(docs, unique, rt.settings.DATE_FORMAT)) {
      issues[index] = { ...(issues[index] ?? {}), ...dup };
    }
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
      write: async (versions) => {
        const items = docs.map((doc) => ({ doc }));
        const oplog = await oplogEntries(rt, ctx, { op, items });
        await rt.store.collection(resource.source).insertMany(docs, {
          alongside: alongsideOf(oplog, versions),
        });
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
  const settings = rt.settings;
  const body = bulk ? { [settings.STATUS]: settings.STATUS_OK, [settings.ITEMS]: items } : items[0];
  return { status: 201, body, headers };
}
