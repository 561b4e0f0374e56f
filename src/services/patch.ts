/**
 * Applying a PATCH to a stored document in memory: values only (nothing is removed),
 * `{"a.b": v}` and `{a: {b: v}}` both reaching nested `b`.
 */
import { isPlainObject } from "../util/plain.ts";
import type { Doc } from "../store/store.ts";
import { getOwn, setOwn } from "../domain/keys.ts";

/**
 * A shallow-per-level copy of `original` with `updates` applied. With `options.mergeNested`,
 * an object value is merged into the object it replaces (recursively) instead of replacing
 * it whole.
 */
export function applyPatch(original: Doc, updates: Doc, options: { mergeNested: boolean }): Doc {
  const result: Doc = { ...original };
  for (const [key, value] of Object.entries(updates)) {
    if (key.includes(".")) setPath(result, key.split("."), { value });
    else if (options.mergeNested && isPlainObject(value) && isPlainObject(getOwn(result, key))) {
      // `options.mergeNested` is true here: the same options go down.
      setOwn(result, key, applyPatch(result[key] as Doc, value, options));
    } else setOwn(result, key, value);
  }
  return result;
}

/**
 * Sets `options.value` at the path `segments` of `doc`, copying the objects on the way
 * (missing or non-object ones become new objects).
 */
function setPath(doc: Doc, segments: string[], options: { value: unknown }) {
  const [head, ...rest] = segments;
  if (rest.length === 0) {
    setOwn(doc, head, options.value);
    return;
  }
  const current = getOwn(doc, head);
  const next = isPlainObject(current) ? { ...current } : {};
  setOwn(doc, head, next);
  setPath(next, rest, options);
}
