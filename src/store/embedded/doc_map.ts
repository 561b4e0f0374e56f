/**
 * The documents of a loaded collection by `_id` key, in natural order. A collection is
 * loaded as the stored text of its documents; a document is decoded the first time it is
 * read (then kept decoded), so a restart and the first reads do not wait for every document
 * of a large collection to be turned into objects, and documents never read cost their text
 * alone (about half the memory of their objects).
 *
 * It is a Map whose reads (`get`, iteration, `values`, `entries`, `forEach`) decode the
 * entries they reach; `has`, `keys` and `size` never decode.
 */
import type { Doc } from "../store.ts";

export class DocMap extends Map<string, Doc> {
  /** Entries still held as text. */
  #raw = 0;
  /** The batches added as text (see `decodeAll`); emptied once every entry is decoded. */
  #batches: Array<{ keys: string[]; texts: string }> = [];

  /**
   * @param decode decodes one document's text.
   * @param decodeJoined decodes the texts of many documents joined by U+0001 at once.
   */
  constructor(
    readonly decode: (text: string) => Doc,
    readonly decodeJoined: (texts: string) => Doc[],
  ) {
    super();
  }

  /**
   * Adds documents as their stored texts joined by U+0001 (`texts`, which no stored text
   * holds), under `keys` in the same order; each is decoded on first read. No key may be in
   * the map yet (keys loaded from the database are unique). False, and nothing added,
   * when `texts` does not split into one text per key.
   */
  addTexts(keys: string[], texts: string): boolean {
    const bodies = texts.split("\u0001");
    if (bodies.length !== keys.length) return false;
    for (let i = 0; i < keys.length; i++) super.set(keys[i], bodies[i] as unknown as Doc);
    this.#raw += keys.length;
    this.#batches.push({ keys, texts });
    return true;
  }

  /**
   * Decodes every entry still held as text, a batch at a time (one parse per batch is
   * several times cheaper than one per document): for work that reads every document
   * (building an index or a sorted view), where decoding one by one on the way would cost
   * more.
   */
  decodeAll(): void {
    while (this.decodeNextBatch());
  }

  /**
   * Decodes the next batch still holding text, for warming a collection a little at a time.
   * False once every entry is decoded.
   */
  decodeNextBatch(): boolean {
    while (this.#raw > 0 && this.#batches.length > 0) {
      const { keys, texts } = this.#batches.shift()!;
      if (!keys.some((key) => typeof super.get(key) === "string")) continue;
      const docs = this.decodeJoined(texts);
      for (let i = 0; i < keys.length; i++) {
        if (typeof super.get(keys[i]) !== "string") continue;
        super.set(keys[i], docs[i]);
        this.#decrement();
      }
      return this.#raw > 0;
    }
    this.#batches = [];
    return false;
  }

  /** One entry fewer held as text; the batches' texts are let go with the last. */
  #decrement(): void {
    if (--this.#raw === 0) this.#batches = [];
  }

  /** How many documents are still held as text. */
  get undecoded(): number {
    return this.#raw;
  }

  #decoded(key: string, value: Doc | string): Doc {
    if (typeof value !== "string") return value;
    const doc = this.decode(value);
    // Replacing the value of a key keeps its place in the iteration order.
    super.set(key, doc);
    this.#decrement();
    return doc;
  }

  override get(key: string): Doc | undefined {
    const value = super.get(key);
    return value === undefined ? undefined : this.#decoded(key, value);
  }

  override set(key: string, doc: Doc): this {
    if (this.#raw > 0 && typeof super.get(key) === "string") this.#decrement();
    return super.set(key, doc);
  }

  override delete(key: string): boolean {
    if (this.#raw > 0 && typeof super.get(key) === "string") this.#decrement();
    return super.delete(key);
  }

  override clear(): void {
    this.#raw = 0;
    this.#batches = [];
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
      if (typeof entry[1] === "string") entry[1] = this.#decoded(entry[0], entry[1]);
      yield entry;
    }
    return undefined;
  }

  *#decodingValues(entries: MapIterator<[string, Doc]>): MapIterator<Doc> {
    for (const [key, value] of entries) yield this.#decoded(key, value);
    return undefined;
  }
}
