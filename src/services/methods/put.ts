/**
 * PUT on an item endpoint: replaces the document, or creates it under the URL's id when
 * UPSERT_ON_PUT (Eve's `methods/put`).
 */
import { notFound } from "../errors.ts";
import { type Doc } from "../../store/store.ts";
import { checkIfMatch } from "../conditional.ts";
import { storeMedia, wrapSingleUploads } from "../media.ts";
import { formLists } from "../forms.ts";
import { idToString } from "../meta.ts";
import { softDeleteOf } from "../soft-delete.ts";
import { findItem } from "../read.ts";
import { oneWriteAtATime } from "../item_writes.ts";
import type { Reply, RequestContext, Runtime } from "../runtime.ts";
import { validationContext, validationError } from "../validate.ts";
import { editReply, immutableId, requireObject, storeEdit } from "./common.ts";
import { postCollection } from "./post.ts";

/** PUT on an item endpoint: replaces the document, or creates it when UPSERT_ON_PUT. */
export function putItem(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  return oneWriteAtATime(rt, ctx, () => put(rt, ctx));
}

async function put(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  const { resource } = ctx;
  const settings = rt.settings;
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
  if (original[settings.DATE_CREATED] !== undefined) {
    doc[settings.DATE_CREATED] = original[settings.DATE_CREATED];
  }
  const files = await storeMedia(rt, resource, { docs: [doc] });
  await rt.events.emitFor("on_replace", resource.name, doc, original);
  softDeleteOf(rt, resource).setFlag(doc, { restore: true });
  await storeEdit(rt, ctx, { original, doc, files, op: "PUT" });
  await rt.events.emitFor("on_replaced", resource.name, doc, original);
  return editReply(rt, ctx, { doc });
}
