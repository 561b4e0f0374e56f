/**
 * PATCH on an item endpoint: validated changes merged into the stored document, stored
 * only if nobody changed it meanwhile (Eve's `methods/patch`).
 */
import { type Doc } from "../../store/store.ts";
import { type CompiledSchema } from "../../validation/mod.ts";
import { checkIfMatch } from "../conditional.ts";
import { storeMedia, wrapSingleUploads } from "../media.ts";
import { formLists } from "../forms.ts";
import { idToString } from "../meta.ts";
import { applyPatch } from "../patch.ts";
import { softDeleteOf } from "../soft-delete.ts";
import { oneWriteAtATime } from "../item_writes.ts";
import type { Reply, RequestContext, Runtime } from "../runtime.ts";
import { validationContext, validationError } from "../validate.ts";
import { editReply, immutableId, originalFor, requireObject, storeEdit } from "./common.ts";

/**
 * normalize_on_patch, as Eve 2.3.1 behaves: a top-level field with a default that the PATCH
 * does not name is filled only when the stored document lacks it (a PATCH never resets
 * unrelated data); inside a dict the PATCH names, omitted sub-fields with a default are
 * reset to it. An empty PATCH changes nothing.
 * @param sent the PATCH body as sent.
 * @param options.updates the validated changes: returned as they are when no default applies,
 * else a copy of them with the defaults.
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
  const defaults = schema.defaults(applyPatch({}, schema.renamed(sent), { mergeNested: true }));
  // Copied only when a default is added (most PATCHes add none).
  let out = updates;
  for (const path of Object.keys(defaults)) {
    if (path.includes(".") || original[path] === undefined) {
      if (out === updates) out = { ...updates };
      out[path] = defaults[path];
    }
  }
  return out;
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
