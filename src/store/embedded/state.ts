/**
 * The in-memory image of one collection: documents by `_id` key in natural (insertion)
 * order, unique indexes, and persisted index definitions. Loaded from SQLite on first use.
 */
import type { Doc, IndexSpec } from "../store.ts";
import { valueKey } from "./codec.ts";
import { decodeDoc } from "./codec.ts";
import { compileFilter } from "./engine.ts";
import type { Options } from "mingo/types";
import type { Database } from "./sqlite.ts";
import { EJSON } from "../bson.ts";
import { applyToIndex, type Change, indexName, UniqueIndex } from "./indexes.ts";

/** The `_id` key of a document (string form used in memory and in SQLite). */
export function idKeyOf(doc: Doc): string {
  return valueKey(doc._id);
}

export class CollectionState {
  /** `_id` key -> document. Stored documents are never mutated in place. */
  readonly docs = new Map<string, Doc>();
  unique: UniqueIndex[] = [];
  /** Every index created (unique or not), by name, as stored. */
  readonly indexSpecs = new Map<string, IndexSpec>();
  /** Whether the collection row exists in SQLite. */
  exists = false;
  #snapshot: Doc[] | null = null;

  constructor(readonly name: string, readonly options: Partial<Options>) {}

  /** Reads the collection's documents and indexes from the database. */
  static load(db: Database, name: string, options: Partial<Options>): CollectionState {
    const state = new CollectionState(name, options);
    for (const row of db.stmts.loadDocs.iterate(name)) {
      const doc = decodeDoc((row as { body: string }).body);
      state.docs.set(idKeyOf(doc), doc);
    }
    for (const row of db.stmts.loadIndexes.iterate(name)) {
      const spec = EJSON.parse((row as { spec: string }).spec, { relaxed: true }) as IndexSpec;
      state.addIndex(spec);
    }
    state.exists = state.docs.size > 0 || state.indexSpecs.size > 0 ||
      (db.stmts.listCollections.all() as Array<{ name: string }>).some((r) => r.name === name);
    return state;
  }

  /** All documents in natural order (shared array, rebuilt after writes). */
  snapshot(): Doc[] {
    return this.#snapshot ??= Array.from(this.docs.values());
  }

  /**
   * Registers an index and fills it from the current documents. A unique index that the
   * documents already break is not registered; the UniqueIndex is returned for checks.
   */
  buildIndex(spec: IndexSpec): UniqueIndex | null {
    if (!spec.unique) return null;
    const partial = spec.partialFilterExpression
      ? compileFilter(spec.partialFilterExpression, this.options)
      : undefined;
    const index = new UniqueIndex(indexName(spec), spec, partial);
    for (const [id, doc] of this.docs) {
      for (const key of index.keysOf(doc)) {
        if (index.entries.has(key)) throw index.duplicate(this.name);
        index.entries.set(key, id);
      }
    }
    return index;
  }

  /** Builds and registers `spec` (throws DuplicateKeyError if data breaks it). */
  addIndex(spec: IndexSpec, index = this.buildIndex(spec)): void {
    const name = indexName(spec);
    this.dropIndex(name);
    if (index) this.unique.push(index);
    this.indexSpecs.set(name, { ...spec, name });
  }

  /** Forgets the index called `name`, if any. */
  dropIndex(name: string): void {
    this.indexSpecs.delete(name);
    this.unique = this.unique.filter((ix) => ix.name !== name);
  }

  /** Applies committed changes to memory. */
  apply(changes: Change[]): void {
    for (const index of this.unique) applyToIndex(index, changes);
    for (const c of changes) this.docs.set(c.id, c.after);
    this.#snapshot = null;
  }

  /** Removes committed deletions from memory. */
  remove(entries: Array<[string, Doc]>): void {
    for (const [id, doc] of entries) {
      for (const index of this.unique) index.remove(doc, id);
      this.docs.delete(id);
    }
    this.#snapshot = null;
  }
}
