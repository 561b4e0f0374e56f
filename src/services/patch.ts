/**
 * Applying a PATCH to a stored document in memory: values only (nothing is removed),
 * `{"a.b": v}` and `{a: {b: v}}` both reaching nested `b`.
 */
import { isPlainObject } from "../util/plain.ts";
import type { Doc } from "../store/store.ts";
import { getOwn, setOwn } from "../domain/keys.ts";

/** A shallow-per-level copy of `doc` with `updates` applied. */
export function applyPatch(original: Doc, updates: Doc, mergeNested: boolean): Doc {
  const result: Doc = { ...original };
  for (const [key, value] of Object.entries(updates)) {
    if (key.includes(".")) setPath(result, key.split("."), value);
    else if (mergeNested && isPlainObject(value) && isPlainObject(getOwn(result, key))) {
      setOwn(result, key, applyPatch(result[key] as Doc, value, true));
    } else setOwn(result, key, value);
  }
  return result;
}

function setPath(doc: Doc, segments: string[], value: unknown) {
  const [head, ...rest] = segments;
  if (rest.length === 0) {
    setOwn(doc, head, value);
    return;
  }
  const current = getOwn(doc, head);
  const next = isPlainObject(current) ? { ...current } : {};
  setOwn(doc, head, next);
  setPath(next, rest, value);
}
