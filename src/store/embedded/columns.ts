/**
 * Columns of a collection's snapshot: for a top-level field, its value in every document of
 * the snapshot, in the snapshot's order, in one array. Built when a second aggregation asks
 * for them over one snapshot and kept until the next write (which makes a new snapshot), so
 * aggregations that read a few fields of every document (a plain `$group` after a `$match`,
 * see aggregate.ts) read those arrays, not the documents. The first ask gets none and reads
 * the documents: a collection written between every two aggregations never pays for a
 * build it would use once (building costs a little more than one pass over the documents).
 *
 * Reading a field of every document costs far more than the work done with it: documents
 * written one by one lie scattered over the heap between the garbage of their requests, each
 * read of one is a cache miss or more, a property read by a name that varies goes through
 * V8's generic lookup, and both vary with what else the process and the machine are doing
 * (served, an aggregation over 14,000 orders cost 1.5-7 ms of CPU time, nearly all of it in
 * that pass). An array of the values is read in order, a few bytes a document.
 *
 * Memory: one array slot per document and column (8 bytes), at most {@link MAX_COLUMNS}
 * columns per collection, only for the fields such aggregations read; none until one runs.
 */
import type { Doc } from "../store.ts";
import { QueryTimeoutError } from "../store.ts";

/** Columns kept per collection at most; the oldest goes first. */
export const MAX_COLUMNS = 16;

/** Names Object.prototype gives every object: no column is made for them. */
const PROTO_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * Whether `field` can have a column: a top-level name (no dot, not an operator) that is not a
 * name every object inherits (reading one of those is left to the document's own reading).
 */
export function isColumnField(field: string): boolean {
  return field.length > 0 && !field.includes(".") && field[0] !== "$" &&
    !PROTO_NAMES.has(field);
}

/** A time bound: a `performance.now()` deadline and the bound in ms it came from. */
export interface Timeout {
  deadline: number;
  ms: number;
}

export class Columns {
  readonly #docs: readonly Doc[];
  readonly #byField = new Map<string, unknown[]>();
  /** Fields asked for once without a column: the next ask builds theirs. */
  readonly #asked = new Set<string>();

  /** @param docs the snapshot (never changed while these columns live). */
  constructor(docs: readonly Doc[]) {
    this.#docs = docs;
  }

  /** How many documents each column holds. */
  get length(): number {
    return this.#docs.length;
  }

  /**
   * The columns of `fields` (each accepted by {@link isColumnField}), in that order: the own
   * value of the field in each document, undefined where it has none; null when one of them
   * was never asked for (the caller reads the documents this time). Columns not built yet
   * are built in one pass over the documents, which throws QueryTimeoutError past the
   * `timeout` deadline (a `performance.now()` time) and then keeps nothing. The arrays are
   * shared: never change them.
   */
  get(fields: readonly string[], timeout: Timeout | null): unknown[][] | null {
    const missing = [...new Set(fields.filter((f) => !this.#byField.has(f)))];
    if (missing.length > 0) {
      for (const field of missing) {
        if (!isColumnField(field)) throw new Error(`no column for the field ${field}`);
      }
      if (!missing.every((f) => this.#asked.has(f))) {
        for (const field of missing) this.#asked.add(field);
        return null;
      }
      const built = this.#build(missing, timeout);
      for (const [field] of this.#byField) {
        if (this.#byField.size + missing.length <= MAX_COLUMNS) break;
        if (!fields.includes(field)) this.#byField.delete(field);
      }
      missing.forEach((field, i) => this.#byField.set(field, built[i]));
    }
    return fields.map((f) => this.#byField.get(f)!);
  }

  #build(fields: string[], timeout: Timeout | null): unknown[][] {
    const docs = this.#docs;
    // Grown by push: an array made at its full length holds a large collection's values in a
    // slow dictionary.
    const columns = fields.map((): unknown[] => []);
    const deadline = timeout?.deadline ?? Infinity;
    for (let i = 0; i < docs.length; i++) {
      if ((i & 1023) === 1023 && performance.now() > deadline) {
        throw new QueryTimeoutError(`aggregation exceeded ${timeout!.ms} ms`);
      }
      const doc = docs[i];
      for (let j = 0; j < fields.length; j++) {
        const field = fields[j];
        columns[j].push(Object.hasOwn(doc, field) ? doc[field] : undefined);
      }
    }
    return columns;
  }
}
