/**
 * Secondary indexes of the embedded store, kept in memory next to the documents:
 *
 * - {@link EqIndex}: value -> `_id` keys for one top-level field, used to narrow equality
 *   and `$in` filters to candidate documents (the full filter still decides).
 * - {@link SortedView}: the documents in the order of one sort specification (ties in
 *   natural order), maintained through writes, used to serve sorted pages without sorting
 *   the whole collection per request.
 *
 * Both only ever narrow or order what a full scan would return: results are the same with
 * or without them.
 */
import type { Doc, Sort } from "../store.ts";
import { indexKey } from "./codec.ts";
import { compareValues, EMPTY, sortKey } from "./compare.ts";

/** Whether `v` has a unique index key that equality on it can use (see {@link EqIndex}). */
function isSimple(v: unknown): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return !Number.isNaN(v);
  }
  if (v instanceof Date) return !Number.isNaN(v.getTime());
  return v !== null && typeof v === "object" &&
    (v as { _bsontype?: string })._bsontype === "ObjectId";
}

/**
 * The key of a simple value in an {@link EqIndex}: numbers and booleans as they are (a map
 * tells them from strings; 0 and -0 are one key, as MongoDB compares them), anything else
 * by {@link indexKey}.
 */
function eqKey(v: unknown): string | number | boolean {
  return typeof v === "number" || typeof v === "boolean" ? v : indexKey(v);
}

/**
 * Equality index on one top-level field. Documents whose value is a plain string, number,
 * boolean, Date or ObjectId are filed under that value; documents with any other value
 * (arrays, objects, other BSON types) are always candidates; documents without the field
 * or with null never equal a simple value and are not filed.
 */
export class EqIndex {
  /** Value key ({@link eqKey}) -> one `_id` key, or a set of them. */
  readonly #byKey = new Map<string | number | boolean, string | Set<string>>();
  readonly #others = new Set<string>();

  constructor(readonly field: string) {}

  add(doc: Doc, id: string): void {
    const v = doc[this.field];
    if (v === undefined || v === null) return;
    if (!isSimple(v)) {
      this.#others.add(id);
      return;
    }
    const key = eqKey(v);
    const cur = this.#byKey.get(key);
    if (cur === undefined) this.#byKey.set(key, id);
    else if (typeof cur === "string") {
      if (cur !== id) this.#byKey.set(key, new Set([cur, id]));
    } else cur.add(id);
  }

  remove(doc: Doc, id: string): void {
    const v = doc[this.field];
    if (v === undefined || v === null) return;
    if (!isSimple(v)) {
      this.#others.delete(id);
      return;
    }
    const key = eqKey(v);
    const cur = this.#byKey.get(key);
    if (cur === id) this.#byKey.delete(key);
    else if (cur instanceof Set) {
      cur.delete(id);
      if (cur.size === 1) this.#byKey.set(key, cur.values().next().value!);
    }
  }

  /**
   * The `_id` keys of every document that can equal one of `values` (all simple), or
   * null when a value is not simple.
   */
  candidates(values: unknown[]): Set<string> | null {
    if (!values.every(isSimple)) return null;
    const out = new Set<string>(this.#others);
    for (const v of values) {
      const cur = this.#byKey.get(eqKey(v));
      if (cur === undefined) continue;
      if (typeof cur === "string") out.add(cur);
      else for (const id of cur) out.add(id);
    }
    return out;
  }
}

/**
 * The values a filter condition on one field equals, when it is a plain value, `{$eq: v}`
 * or `{$in: [...]}` (possibly with other operators, which the full filter checks); else null.
 */
export function equalityValues(cond: unknown): unknown[] | null {
  if (cond === null || typeof cond !== "object") return [cond];
  const proto = Object.getPrototypeOf(cond);
  if (proto !== Object.prototype && proto !== null) return [cond];
  const c = cond as Doc;
  if (Object.hasOwn(c, "$eq")) return [c.$eq];
  if (Object.hasOwn(c, "$in") && Array.isArray(c.$in) && c.$in.length <= 1000) return c.$in;
  return null;
}

interface Entry {
  id: string;
  doc: Doc;
  keys: unknown[];
  seq: number;
}

/** More changes than this in one write rebuild the view by merging instead of splicing. */
const SPLICE_LIMIT = 32;

/** The documents of a collection in the order of one sort specification. */
export class SortedView {
  readonly #fields: Array<{ parts: string[]; dir: 1 | -1 }>;
  #entries: Entry[];

  constructor(readonly sort: Sort, docs: Iterable<[string, Doc, number]>) {
    this.#fields = Object.keys(sort).map((path) => ({
      parts: path.split("."),
      dir: (sort[path] === -1 ? -1 : 1) as 1 | -1,
    }));
    this.#entries = [];
    for (const [id, doc, seq] of docs) this.#entries.push(this.#entry(id, doc, seq));
    this.#entries.sort(this.#compare);
  }

  /** Documents in order (shared: never mutate). */
  *docs(): Generator<[string, Doc]> {
    for (const e of this.#entries) yield [e.id, e.doc];
  }

  #entry(id: string, doc: Doc, seq: number): Entry {
    return { id, doc, seq, keys: this.#fields.map((f) => sortKey(doc, f.parts, f.dir)) };
  }

  #compare = (x: Entry, y: Entry): number => {
    for (let i = 0; i < this.#fields.length; i++) {
      const a = x.keys[i];
      const b = y.keys[i];
      const c = a === EMPTY || b === EMPTY
        ? (a === b ? 0 : a === EMPTY ? -1 : 1)
        : compareValues(a, b);
      if (c !== 0) return c * this.#fields[i].dir;
    }
    return x.seq - y.seq;
  };

  /** Position of the first entry not before `e`. */
  #lowerBound(e: Entry): number {
    let lo = 0;
    let hi = this.#entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#compare(this.#entries[mid], e) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Applies writes: `removed` entries leave (documents as they were, with their sequence
   * numbers), `added` ones arrive.
   */
  update(removed: Array<[string, Doc, number]>, added: Array<[string, Doc, number]>): void {
    if (removed.length + added.length <= SPLICE_LIMIT) {
      for (const [id, doc, seq] of removed) {
        const at = this.#lowerBound(this.#entry(id, doc, seq));
        if (this.#entries[at]?.id === id) this.#entries.splice(at, 1);
        else this.#entries = this.#entries.filter((e) => e.id !== id);
      }
      for (const [id, doc, seq] of added) {
        const e = this.#entry(id, doc, seq);
        this.#entries.splice(this.#lowerBound(e), 0, e);
      }
      return;
    }
    const gone = new Set(removed.map((r) => r[0]));
    const kept = gone.size ? this.#entries.filter((e) => !gone.has(e.id)) : this.#entries;
    const fresh = added.map(([id, doc, seq]) => this.#entry(id, doc, seq)).sort(this.#compare);
    const merged: Entry[] = new Array(kept.length + fresh.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < kept.length && j < fresh.length) {
      merged[k++] = this.#compare(kept[i], fresh[j]) <= 0 ? kept[i++] : fresh[j++];
    }
    while (i < kept.length) merged[k++] = kept[i++];
    while (j < fresh.length) merged[k++] = fresh[j++];
    this.#entries = merged;
  }
}
