/**
 * Unique index bookkeeping: a map from index key to the `_id` key of the owning document,
 * with MongoDB's rules (a missing field is null, array elements are indexed one by one,
 * partial indexes skip documents that do not match their filter, sparse ones those holding
 * none of their fields).
 */
import type { Doc, IndexSpec } from "../store.ts";
import { DuplicateKeyError } from "../store.ts";
import { EMPTY, pathValues } from "../../doc/match/compare.ts";
import { indexKey } from "./codec.ts";

/** Upper bound of keys one document may produce in a compound multikey index. */
const MAX_KEYS_PER_DOC = 10_000;

/** Default index name, as MongoDB builds it: `a_1_b_-1`. */
export function indexName(spec: IndexSpec): string {
  return spec.name ?? Object.entries(spec.keys).map(([k, v]) => `${k}_${v}`).join("_");
}

/** One unique index over the documents of a collection. */
export class UniqueIndex {
  readonly fields: string[];
  readonly #paths: string[][];
  /** The field when the index has one top-level field (the common case, fast path). */
  readonly #single: string | null;
  readonly #partial?: (doc: Doc) => boolean;
  /** A sparse index leaves out the documents holding none of its fields. */
  readonly #sparse: boolean;
  /** Index key -> `_id` key of the document holding it. */
  readonly entries = new Map<string, string>();

  constructor(readonly name: string, spec: IndexSpec, partial?: (doc: Doc) => boolean) {
    this.fields = Object.keys(spec.keys);
    this.#paths = this.fields.map((f) => f.split("."));
    this.#single = this.#paths.length === 1 && this.#paths[0].length === 1 ? this.fields[0] : null;
    this.#partial = partial;
    this.#sparse = spec.sparse === true;
  }

  /** The index keys of `doc`; none when a partial filter excludes it. */
  keysOf(doc: Doc): string[] {
    if (this.#partial && !this.#partial(doc)) return [];
    if (this.#sparse && this.#paths.every((path) => holdsNothing(doc, path))) return [];
    if (this.#single !== null) {
      const v = doc[this.#single];
      if (!Array.isArray(v)) return [keyOfIndexed(v)];
    }
    let keys = [""];
    for (const path of this.#paths) {
      const values = [...new Set(pathValues(doc, path).map(keyOfIndexed))];
      const next: string[] = [];
      for (const prefix of keys) {
        for (const v of values) next.push(prefix === "" ? v : `${prefix}\u0000${v}`);
      }
      if (next.length > MAX_KEYS_PER_DOC) {
        throw new RangeError(`index ${this.name}: too many keys for one document`);
      }
      keys = next;
    }
    return keys;
  }

  add(doc: Doc, id: string): void {
    for (const k of this.keysOf(doc)) this.entries.set(k, id);
  }

  remove(doc: Doc, id: string): void {
    for (const k of this.keysOf(doc)) {
      if (this.entries.get(k) === id) this.entries.delete(k);
    }
  }

  duplicate(collection: string): DuplicateKeyError {
    return new DuplicateKeyError(
      this.fields,
      `E11000 duplicate key error collection: ${collection} index: ${this.name}`,
    );
  }
}

/**
 * Whether `doc` lacks the field at `path` (a sparse index leaves such a document out; a null
 * or an empty list is a value there, as in MongoDB).
 */
function holdsNothing(doc: Doc, path: string[]): boolean {
  return pathValues(doc, path).every((v) => v === undefined);
}

function keyOfIndexed(v: unknown): string {
  return v === EMPTY ? "\u0001e" : indexKey(v);
}

/** A document write under consideration: `before` absent for inserts. */
export interface Change {
  id: string;
  before?: Doc;
  after: Doc;
}

/**
 * Throws DuplicateKeyError if applying `changes` together would break `index`:
 * against documents not being changed, and between the changed documents themselves.
 */
export function checkUnique(index: UniqueIndex, changes: Change[], collection: string): void {
  const changing = new Set<string>();
  for (const c of changes) if (c.before) changing.add(c.id);
  const claimed = new Map<string, string>();
  for (const c of changes) {
    for (const key of index.keysOf(c.after)) {
      const other = claimed.get(key);
      if (other !== undefined && other !== c.id) throw index.duplicate(collection);
      claimed.set(key, c.id);
      const owner = index.entries.get(key);
      if (owner !== undefined && owner !== c.id && !changing.has(owner)) {
        throw index.duplicate(collection);
      }
    }
  }
}

/** Updates `index` for applied `changes` (all removals first, so swapped keys survive). */
export function applyToIndex(index: UniqueIndex, changes: Change[]): void {
  for (const c of changes) if (c.before) index.remove(c.before, c.id);
  for (const c of changes) index.add(c.after, c.id);
}
