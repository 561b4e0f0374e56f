/**
 * The first `count` documents in the order of a sort specification, for a page of a sort
 * no index serves: one pass that keeps the best `count` so far in order, instead of
 * sorting every match (a page of 25 sorted on an unindexed field of 1,000,000 documents
 * sorted all of them per request). Same order as `sortDocs`: ties keep their natural order.
 */
import type { Doc, Sort } from "../store.ts";
import { compareValues, EMPTY, sortKey } from "../../doc/match/compare.ts";

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
  const kept: Array<{ doc: Doc; keys: unknown[] }> = [];
  if (count <= 0) return [];
  const order = (x: unknown[], y: unknown[]): number => {
    for (let i = 0; i < fields.length; i++) {
      const c = compareKeys(x[i], y[i]);
      if (c !== 0) return c * fields[i].dir;
    }
    return 0;
  };
  for (const doc of docs) {
    const keys = fields.map((f) => sortKey(doc, f.parts, f.dir));
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
