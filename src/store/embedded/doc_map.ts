/**
 * The documents of a loaded collection by `_id` key, in natural order. Loading a collection
 * reads only the keys of its documents and the sequence numbers of their stored rows: a
 * document is read from the database and decoded the first time it is read (then kept
 * decoded), so a restart and the first reads wait neither for every document of a large
 * collection to be turned into objects nor for its text to be copied into memory, and
 * documents never read cost no memory but their key.
 *
 * It is a Map whose reads (`get`, iteration, `values`, `entries`, `forEach`) decode the
 * entries they reach; `has`, `keys` and `size` never decode. An entry not decoded yet holds
 * the sequence number of its row, which the store's writes never change without replacing
 * the entry (a write sets the document in memory in the same turn as it writes the row; a
 * deleted row's entry is deleted), so the row read later is the document loaded.
 */
import type { Doc } from "../store.ts";

/** Stored rows of one collection, for decoding its documents on first read. */
export interface StoredRows {
  /** The text of the row `seq`; undefined when the collection holds no such row. */
  text(seq: number): string | undefined;
  /**
   * Up to `count` rows after the row `seq`, in order: their keys, sequence numbers and texts
   * joined by U+0001 (which no stored text holds); null when there are none.
   */
  after(seq: number, count: number): { keys: string[]; seqs: number[]; texts: string } | null;
}

/** Rows read at once when an iteration reaches a document not decoded yet. */
const READ_AHEAD = 500;
/** Rows read at once by `decodeNextBatch` (warming, `decodeAll`). */
const BATCH = 2000;

export class DocMap extends Map<string, Doc> {
  /** Entries still held as the sequence number of their row. */
  #raw = 0;
  /** The row up to which `decodeNextBatch` has decoded. */
  #cursor = -1;

  /**
   * @param rows where the documents not decoded yet are read from.
   * @param decode decodes one document's text.
   * @param decodeJoined decodes the texts of many documents joined by U+0001 at once.
   */
  constructor(
    readonly rows: StoredRows,
    readonly decode: (text: string) => Doc,
    readonly decodeJoined: (texts: string) => Doc[],
  ) {
    super();
  }

  /**
   * Adds documents as the sequence numbers of their stored rows (`seqs`), under `keys` in the
   * same order; each is read and decoded on first read. No key may be in the map yet (keys
   * loaded from the database are unique).
   */
  addStored(keys: string[], seqs: number[]): void {
    for (let i = 0; i < keys.length; i++) super.set(keys[i], seqs[i] as unknown as Doc);
    this.#raw += keys.length;
  }

  /**
   * Decodes every entry not decoded yet, a batch of rows at a time (one query and one parse
   * per batch are several times cheaper than one per document): for work that reads every
   * document (building an index or a sorted view), where decoding one by one would cost more.
   */
  decodeAll(): void {
    while (this.decodeNextBatch());
  }

  /**
   * Decodes the next batch of rows holding documents not decoded yet, for warming a
   * collection a little at a time. False once every entry is decoded.
   */
  decodeNextBatch(): boolean {
    while (this.#raw > 0) {
      const rows = this.rows.after(this.#cursor, BATCH);
      if (rows === null) throw this.#missing();
      this.#cursor = rows.seqs[rows.seqs.length - 1];
      if (this.#decodeRows(rows) > 0) break;
    }
    return this.#raw > 0;
  }

  /** Decodes the documents of `rows` whose entries still wait for them; how many. */
  #decodeRows(rows: { keys: string[]; seqs: number[]; texts: string }): number {
    const { keys, seqs } = rows;
    let waiting = 0;
    for (let i = 0; i < keys.length; i++) if (super.get(keys[i]) === seqs[i] as unknown) waiting++;
    if (waiting === 0) return 0;
    // One document per text: JSON text never holds a raw U+0001 (a text that did would not
    // parse, joined or alone).
    const docs = this.decodeJoined(rows.texts);
    for (let i = 0; i < keys.length; i++) {
      if (super.get(keys[i]) !== seqs[i] as unknown) continue;
      super.set(keys[i], docs[i]);
      this.#raw--;
    }
    return waiting;
  }

  /** An entry whose row is gone: the file changed under the store. */
  #missing(): Error {
    return new Error("stored document missing: the data file changed while the store ran");
  }

  /** How many documents are still to be read from their rows. */
  get undecoded(): number {
    return this.#raw;
  }

  /** The document of `key` holding `value`, read from its row when it is a sequence number. */
  #decoded(key: string, value: Doc | number): Doc {
    if (typeof value !== "number") return value;
    const text = this.rows.text(value);
    if (text === undefined) throw this.#missing();
    const doc = this.decode(text);
    // Replacing the value of a key keeps its place in the iteration order.
    super.set(key, doc);
    this.#raw--;
    return doc;
  }

  /** The document of `key` during an iteration: its row and the next ones read at once. */
  #readAhead(key: string, value: Doc | number): Doc {
    if (typeof value !== "number") return value;
    const rows = this.rows.after(value - 1, READ_AHEAD);
    if (rows !== null) this.#decodeRows(rows);
    const doc = super.get(key) as Doc | number;
    return typeof doc === "number" ? this.#decoded(key, doc) : doc;
  }

  override get(key: string): Doc | undefined {
    const value = super.get(key) as Doc | number | undefined;
    return value === undefined ? undefined : this.#decoded(key, value);
  }

  override set(key: string, doc: Doc): this {
    if (this.#raw > 0 && typeof super.get(key) === "number") this.#raw--;
    return super.set(key, doc);
  }

  override delete(key: string): boolean {
    if (this.#raw > 0 && typeof super.get(key) === "number") this.#raw--;
    return super.delete(key);
  }

  override clear(): void {
    this.#raw = 0;
    super.clear();
  }

  override entries(): MapIterator<[string, Doc]> {
    if (this.#raw === 0) return super.entries();
    return this.#decoding(super.entries());
  }

  override [Symbol.iterator](): MapIterator<[string, Doc]> {
    return this.entries();
  }

  override values(): MapIterator<Doc> {
    if (this.#raw === 0) return super.values();
    return this.#decodingValues(super.entries());
  }

  override forEach(
    fn: (value: Doc, key: string, map: Map<string, Doc>) => void,
    thisArg?: unknown,
  ): void {
    for (const [key, doc] of this.entries()) fn.call(thisArg, doc, key, this);
  }

  *#decoding(entries: MapIterator<[string, Doc]>): MapIterator<[string, Doc]> {
    for (const entry of entries) {
      if (typeof entry[1] === "number") entry[1] = this.#readAhead(entry[0], entry[1]);
      yield entry;
    }
    return undefined;
  }

  *#decodingValues(entries: MapIterator<[string, Doc]>): MapIterator<Doc> {
    for (const [key, value] of entries) yield this.#readAhead(key, value);
    return undefined;
  }
}
