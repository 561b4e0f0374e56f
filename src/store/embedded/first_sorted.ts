/**
 * The first `count` documents in the order of a sort specification, for a page of a sort
 * no index serves: one pass that keeps the best `count` so far in order, instead of
 * sorting every match (a page of 25 sorted on an unindexed field of 1,000,000 documents
 * sorted all of them per request). Same order as `sortDocs`: ties keep their natural order.
 */
import type { Doc, Sort } from "../store.ts";
import {
  compareStrings,
  compareValues,
  EMPTY,
  memberKeys,
  sortKey,
} from "../../doc/match/compare.ts";

/** Pages up to this deep (`skip` + `limit`) are selected this way; deeper ones are sorted. */
export const MAX_FIRST_SORTED = 1000;

function compareKeys(a: unknown, b: unknown): number {
  if (a === EMPTY || b === EMPTY) return a === b ? 0 : a === EMPTY ? -1 : 1;
  return compareValues(a, b);
}

/** `docs` in natural order; the first `count` of them in `sort` order. */
export function firstSorted(docs: Iterable<Doc>, sort: Sort, count: number): Doc[] {
  const fields = Object.keys(sort).map((path) => ({
    parts: path.split("."),
    dir: (sort[path] === -1 ? -1 : 1) as 1 | -1,
  }));
  if (count <= 0) return [];
  if (fields.length === 1) return firstSortedOn(docs, fields[0], count);
  const kept: Array<{ doc: Doc; keys: unknown[] }> = [];
  const order = (x: unknown[], y: unknown[]): number => {
    for (let i = 0; i < fields.length; i++) {
      const c = compareOne(x[i], y[i]);
      if (c !== 0) return c * fields[i].dir;
    }
    return 0;
  };
  const [lead] = fields;
  for (const doc of docs) {
    const first = keyOf(doc, lead);
    // Past the last one kept on the first field alone: no other key is needed.
    if (kept.length === count && compareOne(first, kept[count - 1].keys[0]) * lead.dir > 0) {
      continue;
    }
    // Fields reaching into one list take their values from one member (compare.ts).
    let keys = memberKeys(doc, fields);
    if (keys === undefined) {
      keys = [first];
      for (let i = 1; i < fields.length; i++) keys.push(keyOf(doc, fields[i]));
    }
    // A later document equal to the last one kept comes after it: not kept when full.
    if (kept.length === count && order(keys, kept[count - 1].keys) >= 0) continue;
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (order(kept[mid].keys, keys) <= 0) lo = mid + 1;
      else hi = mid;
    }
    kept.splice(lo, 0, { doc, keys });
    if (kept.length > count) kept.pop();
  }
  return kept.map((k) => k.doc);
}

/**
 * {@link firstSorted} on one field, with no array of keys per document (see {@link keyOf} and
 * {@link compareOne}; measured in docs/performance.md).
 */
function firstSortedOn(
  docs: Iterable<Doc>,
  field: { parts: string[]; dir: 1 | -1 },
  count: number,
): Doc[] {
  const { dir } = field;
  const kept: Doc[] = [];
  const keys: unknown[] = [];
  for (const doc of docs) {
    const key = keyOf(doc, field);
    // A later document equal to the last one kept comes after it: not kept when full.
    if (kept.length === count && compareOne(key, keys[count - 1]) * dir >= 0) continue;
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareOne(keys[mid], key) * dir <= 0) lo = mid + 1;
      else hi = mid;
    }
    kept.splice(lo, 0, doc);
    keys.splice(lo, 0, key);
    if (kept.length > count) {
      kept.pop();
      keys.pop();
    }
  }
  return kept;
}

/**
 * A document's sort key on one field (`sortKey`): the value itself when the field is a
 * top-level one holding no array, without the walk.
 */
function keyOf(doc: Doc, field: { parts: string[]; dir: 1 | -1 }): unknown {
  const { parts } = field;
  if (parts.length === 1) {
    const value = doc[parts[0]];
    if (!Array.isArray(value)) return value;
  }
  return sortKey(doc, parts, field.dir);
}

/** {@link compareKeys}, with two strings or two plain numbers compared at once. */
function compareOne(a: unknown, b: unknown): number {
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
  // A NaN is neither below, above nor equal to a number: compared in full.
  if (typeof a === "number" && typeof b === "number" && (a < b || a > b || a === b)) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  return compareKeys(a, b);
}
