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
import type { UniqueIndex } from "./indexes.ts";
import { BlockList } from "./block_list.ts";
import { isPlainObject } from "../../util/plain.ts";
import { compareValues, EMPTY, rank, sortKey } from "../../doc/match/compare.ts";

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

  /**
   * `backing`: the unique index of this field alone (no partial filter but "the field is
   * set"), whose map already holds every simple value's document: then only the other
   * documents are kept here, and the collection pays for one map of its values, not two.
   */
  constructor(readonly field: string, readonly backing?: UniqueIndex) {}

  add(doc: Doc, id: string): void {
    const v = doc[this.field];
    if (v === undefined || v === null) return;
    if (!isSimple(v)) {
      this.#others.add(id);
      return;
    }
    if (this.backing) return;
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
    if (this.backing) return;
    const key = eqKey(v);
    const cur = this.#byKey.get(key);
    if (cur === id) this.#byKey.delete(key);
    else if (cur instanceof Set) {
      cur.delete(id);
      if (cur.size === 1) this.#byKey.set(key, cur.values().next().value!);
    }
  }

  /**
   * How many documents {@link candidates} would give for `values` (all simple; a document
   * filed under two of them counts twice), without gathering them; null when a value is not
   * simple.
   */
  count(values: unknown[]): number | null {
    if (!values.every(isSimple)) return null;
    let n = this.#others.size;
    for (const v of values) {
      const cur = this.backing ? this.backing.entries.get(indexKey(v)) : this.#byKey.get(eqKey(v));
      if (cur !== undefined) n += typeof cur === "string" ? 1 : cur.size;
    }
    return n;
  }

  /**
   * The `_id` keys of every document that can equal one of `values` (all simple), each once,
   * or null when a value is not simple.
   */
  candidates(values: unknown[]): string[] | null {
    if (!values.every(isSimple)) return null;
    if (this.backing) {
      // A unique index files a document holding an array under each of its elements (and it
      // is among the others too): gathered in a set.
      const out = new Set<string>(this.#others);
      for (const v of values) {
        const id = this.backing.entries.get(indexKey(v));
        if (id !== undefined) out.add(id);
      }
      return [...out];
    }
    // Here a document is filed under one value at most, and then not among the others: the
    // keys are gathered in a list, each value's once.
    const out = [...this.#others];
    const seen = values.length > 1 ? new Set<string | number | boolean>() : null;
    for (const v of values) {
      const key = eqKey(v);
      if (seen !== null) {
        if (seen.has(key)) continue;
        seen.add(key);
      }
      const cur = this.#byKey.get(key);
      if (cur === undefined) continue;
      if (typeof cur === "string") out.push(cur);
      else for (const id of cur) out.push(id);
    }
    return out;
  }
}

/**
 * The values a filter condition on one field equals, when it is a plain value, `{$eq: v}`
 * or `{$in: [...]}` (possibly with other operators, which the full filter checks); else null.
 */
export function equalityValues(cond: unknown): unknown[] | null {
  if (!isPlainObject(cond)) return [cond];
  const c = cond as Doc;
  if (Object.hasOwn(c, "$eq")) return [c.$eq];
  if (Object.hasOwn(c, "$in") && Array.isArray(c.$in) && c.$in.length <= 1000) return c.$in;
  return null;
}

/**
 * One document in a sorted view: its sort key of the first field, and of the others when
 * there are others (no array per entry for the usual one-field view: a view holds one
 * entry per document).
 */
interface Entry {
  id: string;
  doc: Doc;
  key: unknown;
  rest: unknown[] | null;
  seq: number;
}

/** Order of two sort keys (EMPTY, an empty array, before everything). */
function compareSortKeys(a: unknown, b: unknown): number {
  return a === EMPTY || b === EMPTY ? (a === b ? 0 : a === EMPTY ? -1 : 1) : compareValues(a, b);
}

/** Writes up to this many (or an eighth of the view) are applied one by one; more, by merging. */
const SPLICE_LIMIT = 32;

/** One side of a range condition: `$gt`/`$gte` (lower) or `$lt`/`$lte` (upper). */
export interface Bound {
  value: unknown;
  inclusive: boolean;
}

/**
 * The range a condition on one field sets with `$gt`, `$gte`, `$lt` and `$lte` operands of
 * one type bracket (numbers, strings, dates, ObjectIds); null for anything else. Other
 * operators beside them are left to the full filter.
 */
export function rangeOf(cond: unknown): { lower?: Bound; upper?: Bound } | null {
  if (!isPlainObject(cond)) return null;
  const c = cond as Doc;
  const range: { lower?: Bound; upper?: Bound } = {};
  let bracket = -1;
  for (const op of ["$gt", "$gte", "$lt", "$lte"]) {
    if (!Object.hasOwn(c, op)) continue;
    const value = c[op];
    if (!isRangeValue(value)) return null;
    if (bracket !== -1 && rank(value) !== bracket) return null;
    bracket = rank(value);
    const bound = { value, inclusive: op.endsWith("e") };
    // Both bounds of one side (`$lt` and `$lte`): the tighter one holds.
    if (op.startsWith("$g")) range.lower = tighter(range.lower, bound, 1);
    else range.upper = tighter(range.upper, bound, -1);
  }
  return bracket === -1 ? null : range;
}

/**
 * The tighter of two bounds of one side: for a lower bound (`side` 1) the greater value,
 * for an upper bound (-1) the smaller; of equal values the exclusive one.
 */
function tighter(current: Bound | undefined, next: Bound, side: 1 | -1): Bound {
  if (current === undefined) return next;
  const order = compareValues(next.value, current.value) * side;
  if (order !== 0) return order > 0 ? next : current;
  return current.inclusive ? next : current;
}

/**
 * Values a sorted view orders consistently and range operators compare within a bracket:
 * the simple ones but booleans (a range over two values is left to the scan).
 */
function isRangeValue(v: unknown): boolean {
  return typeof v !== "boolean" && isSimple(v);
}

/** The documents of a collection in the order of one sort specification. */
export class SortedView {
  readonly #fields: Array<{ parts: string[]; dir: 1 | -1 }>;
  readonly #entries: BlockList<Entry>;
  /**
   * Entries whose first sort field holds something a range cannot be read from the order
   * for: an array (any element may match), NaN or an invalid date (which compare equal to
   * every number or date).
   */
  #unordered = 0;

  constructor(readonly sort: Sort, docs: Iterable<[string, Doc, number]>) {
    this.#fields = Object.keys(sort).map((path) => ({
      parts: path.split("."),
      dir: (sort[path] === -1 ? -1 : 1) as 1 | -1,
    }));
    const entries: Entry[] = [];
    for (const [id, doc, seq] of docs) {
      entries.push(this.#entry(id, doc, seq));
      if (this.#isUnordered(doc)) this.#unordered++;
    }
    this.#entries = new BlockList(this.#compare, entries.sort(this.#compare));
  }

  #isUnordered(doc: Doc): boolean {
    const parts = this.#fields[0].parts;
    let v: unknown = doc;
    for (const part of parts) {
      if (Array.isArray(v)) return true;
      if (v === null || typeof v !== "object") return false;
      v = (v as Doc)[part];
    }
    return Array.isArray(v) || (typeof v === "number" && Number.isNaN(v)) ||
      (v instanceof Date && Number.isNaN(v.getTime()));
  }

  /** The entries at positions `[start, end)` (see {@link span}) as `[seq, id]` pairs. */
  entries(span: [number, number]): Array<[number, string]> {
    return this.#entries.slice(span[0], span[1]).map((e) => [e.seq, e.id]);
  }

  /**
   * The positions `[start, end)` of the entries whose first sort field lies in `range` (one
   * type bracket); a range query on the field alone matches exactly these (same brackets and
   * comparisons as the matcher). Null when the view cannot answer: only an ascending view
   * does, and only while no entry of the kind {@link #unordered} counts is in it.
   */
  span(range: { lower?: Bound; upper?: Bound }): [number, number] | null {
    if (this.#unordered > 0 || this.#fields[0].dir !== 1) return null;
    const bracket = rank((range.lower ?? range.upper)!.value);
    const key = (e: Entry) => e.key;
    const first = (past: (e: Entry) => boolean) => this.#entries.firstWhere(past);
    const rankOf = (e: Entry) => {
      const k = key(e);
      return k === EMPTY ? -1 : rank(k);
    };
    const { lower, upper } = range;
    const start = lower
      ? first((e) => {
        const r = rankOf(e);
        if (r !== bracket) return r > bracket;
        const c = compareValues(key(e), lower.value);
        return lower.inclusive ? c >= 0 : c > 0;
      })
      : first((e) => rankOf(e) >= bracket);
    const end = upper
      ? first((e) => {
        const r = rankOf(e);
        if (r !== bracket) return r > bracket;
        const c = compareValues(key(e), upper.value);
        return upper.inclusive ? c > 0 : c >= 0;
      })
      : first((e) => rankOf(e) > bracket);
    return [start, Math.max(start, end)];
  }

  /** How many entries the view holds. */
  get size(): number {
    return this.#entries.size;
  }

  /** Documents in order (shared: never mutate). */
  *docs(): Generator<[string, Doc]> {
    for (const e of this.#entries) yield [e.id, e.doc];
  }

  #entry(id: string, doc: Doc, seq: number): Entry {
    const [first, ...others] = this.#fields;
    return {
      id,
      doc,
      seq,
      key: sortKey(doc, first.parts, first.dir),
      rest: others.length === 0 ? null : others.map((f) => sortKey(doc, f.parts, f.dir)),
    };
  }

  #compare = (x: Entry, y: Entry): number => {
    const c = compareSortKeys(x.key, y.key);
    if (c !== 0) return c * this.#fields[0].dir;
    if (x.rest !== null && y.rest !== null) {
      for (let i = 0; i < x.rest.length; i++) {
        const d = compareSortKeys(x.rest[i], y.rest[i]);
        if (d !== 0) return d * this.#fields[i + 1].dir;
      }
    }
    return x.seq - y.seq;
  };

  /**
   * Applies writes: `removed` entries leave (documents as they were, with their sequence
   * numbers), `added` ones arrive.
   */
  update(removed: Array<[string, Doc, number]>, added: Array<[string, Doc, number]>): void {
    for (const [, doc] of removed) if (this.#isUnordered(doc)) this.#unordered--;
    for (const [, doc] of added) if (this.#isUnordered(doc)) this.#unordered++;
    // One by one (each moves one block's entries) unless the writes touch much of the view.
    if (removed.length + added.length <= Math.max(SPLICE_LIMIT, this.#entries.size / 8)) {
      for (const [id, doc, seq] of removed) {
        this.#entries.remove(this.#entry(id, doc, seq), (e) => e.id === id);
      }
      for (const [id, doc, seq] of added) this.#entries.insert(this.#entry(id, doc, seq));
      return;
    }
    const gone = new Set(removed.map((r) => r[0]));
    const all = this.#entries.toArray();
    const kept = gone.size ? all.filter((e) => !gone.has(e.id)) : all;
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
    this.#entries.reset(merged);
  }
}
