/**
 * Conditional requests: `ETag` / `Last-Modified` headers, `If-None-Match` and
 * `If-Modified-Since` on reads, `If-Match` on edits and deletes.
 */
import { HttpError } from "../http/errors.ts";
import type { Doc } from "../store/store.ts";
import type { RequestContext, Runtime } from "./runtime.ts";
import { etagOf } from "./meta.ts";

/** `ETag` and `Last-Modified` for a stored document (the stored state, not hook changes). */
export function conditionalHeaders(
  rt: Runtime,
  ctx: RequestContext,
  doc: Doc,
): Record<string, string> {
  const headers: Record<string, string> = {};
  const etag = doc[rt.settings.ETAG];
  if (ctx.resource.ifMatch && typeof etag === "string") headers["etag"] = `"${etag}"`;
  const updated = doc[rt.settings.DATE_UPDATED];
  if (updated instanceof Date) headers["last-modified"] = updated.toUTCString();
  return headers;
}

/** Splits an `If-Match` / `If-None-Match` value into bare tags (`*` kept). */
function tags(value: string): string[] {
  return value.split(",").map((t) => t.trim().replace(/^W\//, "").replace(/^"(.*)"$/, "$1"))
    .filter(Boolean);
}

/** True when the read can be answered 304 Not Modified. */
export function notModified(request: Headers, headers: Record<string, string>): boolean {
  const noneMatch = request.get("if-none-match");
  if (noneMatch !== null && headers.etag) {
    const list = tags(noneMatch);
    return list.includes("*") || list.includes(headers.etag.slice(1, -1));
  }
  const since = request.get("if-modified-since");
  if (since !== null && headers["last-modified"]) {
    const sinceTime = Date.parse(since);
    if (Number.isNaN(sinceTime)) return false;
    // One-second resolution: both sides are whole seconds.
    return Date.parse(headers["last-modified"]) <= sinceTime;
  }
  return false;
}

/**
 * Enforces `If-Match` for an edit or delete of `doc`: 428 when it is required and missing,
 * 412 when it names another representation.
 */
export function checkIfMatch(rt: Runtime, ctx: RequestContext, doc: Doc): void {
  if (!ctx.resource.ifMatch) return;
  const header = ctx.request.headers.get("if-match");
  if (header === null) {
    if (ctx.resource.enforceIfMatch && !ctx.internal) {
      throw new HttpError(
        428,
        "To edit a document its etag must be provided using the If-Match header",
      );
    }
    return;
  }
  // As in Eve, only the document's own ETag will do: `*` is no proof of what was read.
  if (!tags(header).includes(etagOf(rt, doc))) {
    throw new HttpError(412, "Client and server etags don't match");
  }
}
