/**
 * Counts of the documents a filter matches, remembered per image of a collection: a page's
 * total (`_meta.total`, `X-Total-Count`) that no index can give tests every document of the
 * collection, and the next page of the same query, while nothing was written, would find the
 * same number. A collection forgets its counts whenever its documents change (see
 * `CollectionState.apply` and `remove`), so a count is never older than the documents read.
 *
 * Only filters of plain data are remembered: a filter running code (`$where`, `$function`,
 * `$accumulator`), an expression (`$expr`, which can read the clock), a random sample or a
 * text or geographic search is counted every time. Bounded: {@link MAX_COUNTS} filters per
 * collection, of at most {@link MAX_KEY} characters each.
 */
import { canonicalEjson, ObjectId } from "../../doc/bson.ts";
import type { Filter } from "../store.ts";

/** Most counts a collection remembers (then it starts over). */
export const MAX_COUNTS = 256;
/** The longest filter text remembered. */
export const MAX_KEY = 4096;
/** How deep a remembered filter may be. */
const MAX_DEPTH = 32;

/** Operators whose result does not follow from the documents alone, or is costly to key. */
const COUNTED_EVERY_TIME = new Set([
  "$where",
  "$function",
  "$accumulator",
  "$expr",
  "$rand",
  "$sampleRate",
  "$text",
  "$near",
  "$nearSphere",
  "$geoNear",
]);

/**
 * The key of `filter`'s count (its canonical Extended JSON: equal for filters matching the
 * same documents by the same values, types included); undefined when it is not remembered.
 */
export function countKey(filter: Filter): string | undefined {
  if (!plainData(filter, 0)) return undefined;
  const key = canonicalEjson(filter);
  return key.length > MAX_KEY ? undefined : key;
}

function plainData(value: unknown, depth: number): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "function":
    case "symbol":
    case "bigint":
      return false;
    case "object":
      break;
    default:
      return true;
  }
  if (depth > MAX_DEPTH) return false;
  if (value instanceof Date || value instanceof ObjectId || value instanceof RegExp) return true;
  const bsonType = (value as { _bsontype?: unknown })._bsontype;
  if (bsonType !== undefined) return bsonType !== "Code";
  if (Array.isArray(value)) {
    for (const member of value) if (!plainData(member, depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(value)) {
    if (COUNTED_EVERY_TIME.has(key)) return false;
    if (!plainData((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/** The counts of one image of a collection. */
export class CountCache {
  readonly #counts = new Map<string, number>();

  get(key: string): number | undefined {
    return this.#counts.get(key);
  }

  set(key: string, count: number): void {
    if (this.#counts.size >= MAX_COUNTS) this.#counts.clear();
    this.#counts.set(key, count);
  }
}
