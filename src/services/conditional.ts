/**
 * Conditional requests: `ETag` / `Last-Modified` headers, `If-None-Match` and
 * `If-Modified-Since` on reads, `If-Match` on edits and deletes (the headers are read by
 * the HTTP layer into `ctx.preconditions`).
 */
import { ServiceError } from "./errors.ts";
import type { Doc } from "../store/store.ts";
import type { Preconditions, RequestContext, Runtime } from "./runtime.ts";
import { etagOf } from "./meta.ts";
import { cachedDates } from "../util/date_cache.ts";

/**
 * `ETag` and `Last-Modified` for `options.doc`, a stored document (the stored state, not
 * hook changes).
 */
export function conditionalHeaders(
  rt: Runtime,
  ctx: RequestContext,
  options: { doc: Doc },
): Record<string, string> {
  const { doc } = options;
  const headers: Record<string, string> = {};
  const etag = doc[rt.settings.ETAG];
  if (ctx.resource.ifMatch && typeof etag === "string") headers["etag"] = `"${etag}"`;
  const updated = doc[rt.settings.DATE_UPDATED];
  if (updated instanceof Date) headers["last-modified"] = httpDate(updated);
  return headers;
}

/** `date` as an HTTP date. */
const httpDate = cachedDates((date) => date.toUTCString());

/** True when the read can be answered 304 Not Modified. */
export function notModified(
  preconditions: Preconditions | undefined,
  headers: Record<string, string>,
): boolean {
  const noneMatch = preconditions?.ifNoneMatch;
  if (noneMatch !== undefined && headers.etag) {
    return noneMatch.includes("*") || noneMatch.includes(headers.etag.slice(1, -1));
  }
  const since = preconditions?.ifModifiedSince;
  if (since !== undefined && headers["last-modified"]) {
    // One-second resolution: both sides are whole seconds.
    return Date.parse(headers["last-modified"]) <= since;
  }
  return false;
}

/**
 * Enforces `If-Match` for an edit or delete of `options.doc` (the stored document):
 * precondition-required when it is required and missing, precondition-failed when it names
 * another representation.
 */
export async function checkIfMatch(
  rt: Runtime,
  ctx: RequestContext,
  options: { doc: Doc },
): Promise<void> {
  if (!ctx.resource.ifMatch) return;
  const ifMatch = ctx.preconditions?.ifMatch;
  if (ifMatch === undefined) {
    if (ctx.resource.enforceIfMatch && !ctx.internal) {
      throw new ServiceError(
        "precondition-required",
        "To edit a document its etag must be provided using the If-Match header",
      );
    }
    return;
  }
  // As in Eve, only the document's own ETag will do: `*` is no proof of what was read.
  if (!ifMatch.includes(await etagOf(rt, options.doc))) {
    throw new ServiceError("precondition-failed", "Client and server etags don't match");
  }
}
