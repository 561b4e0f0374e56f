/**
 * Applying a PATCH to a stored document in memory: values only (nothing is removed),
 * `{"a.b": v}` and `{a: {b: v}}` both reaching nested `b`.
 */
import { isPlainObject } from "../settings/check.ts";
import type { Doc } from "../store/store.ts";

/** A shallow-per-level copy of `doc` with `updates` applied. */
export function applyPatch(original: Doc, updates: Doc, mergeNested: boolean): Doc {
  const result: Doc = { ...original };
  for (const [key, value] of Object.entries(updates)) {
    if (key.includes(".")) setPath(result, key.split("."), value);
    else if (mergeNested && isPlainObject(value) && isPlainObject(result[key])) {
      result[key] = applyPatch(result[key] as Doc, value, true);
    } else result[key] = value;
  }
  return result;
}

function setPath(doc: Doc, segments: string[], value: unknown) {
  const [head, ...rest] = segments;
  if (rest.length === 0) {
    doc[head] = value;
    return;
  }
  const next = isPlainObject(doc[head]) ? { ...(doc[head] as Doc) } : {};
  doc[head] = next;
  setPath(next, rest, value);
}
