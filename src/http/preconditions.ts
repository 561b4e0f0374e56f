/**
 * Reads the conditional-request headers (`If-Match`, `If-None-Match`, `If-Modified-Since`)
 * into the preconditions services check; the services never read request headers.
 */
import type { Preconditions } from "../services/runtime.ts";

/** Splits an `If-Match` / `If-None-Match` value into bare tags (weak prefix dropped, `*` kept). */
function tags(value: string): string[] {
  return value.split(",").map((t) => t.trim().replace(/^W\//, "").replace(/^"(.*)"$/, "$1"))
    .filter(Boolean);
}

/** The preconditions `headers` state; a field is absent when its header is. */
export function parsePreconditions(headers: Headers): Preconditions {
  const out: Preconditions = {};
  const ifMatch = headers.get("if-match");
  if (ifMatch !== null) out.ifMatch = tags(ifMatch);
  const ifNoneMatch = headers.get("if-none-match");
  if (ifNoneMatch !== null) out.ifNoneMatch = tags(ifNoneMatch);
  const since = headers.get("if-modified-since");
  if (since !== null) {
    const time = Date.parse(since);
    // An unreadable date is ignored, as HTTP asks.
    if (!Number.isNaN(time)) out.ifModifiedSince = time;
  }
  return out;
}
