/**
 * Documents sent as forms (`application/x-www-form-urlencoded`, `multipart/form-data`): every
 * field arrives as text, one value per key. As in Eve, validation reads numbers and booleans
 * out of that text (see `CoerceContext.form`), and AUTO_CREATE_LISTS makes a single value
 * sent for a list field a one-member list.
 */
import { isPlainObject } from "../util/plain.ts";
import { singleType } from "../domain/schema.ts";
import type { Resource } from "../domain/types.ts";
import type { RequestContext, Runtime } from "./runtime.ts";

/** Whether the request's body is a form. */
export function isFormRequest(ctx: RequestContext): boolean {
  const type = (ctx.request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  return type === "application/x-www-form-urlencoded" || type === "multipart/form-data";
}

/**
 * AUTO_CREATE_LISTS for a form body (`options.body`, one document, changed in place): a
 * single value sent for a top-level list field becomes a one-member list.
 */
export function formLists(
  rt: Runtime,
  ctx: RequestContext,
  options: { resource: Resource; body: unknown },
): void {
  const { resource, body } = options;
  if (!rt.settings.AUTO_CREATE_LISTS || !isPlainObject(body) || !isFormRequest(ctx)) return;
  for (const [key, value] of Object.entries(body)) {
    if (Array.isArray(value) || value === null || value === undefined) continue;
    if (singleType(resource.schemaModel.fieldAt(key)) === "list") body[key] = [value];
  }
}
