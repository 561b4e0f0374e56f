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

  constructor(readonly decode: (text: string) => Doc) {
    super();
  }

  /**
   * Adds a document as its stored text, decoded on first read. `key` must not be in the
   * map yet (keys loaded from the database are unique).
   */
  addText(key: string, text: string): void {
    this.#raw++;
    super.set(key, text as unknown as Doc);
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
    this.#raw--;
    return doc;
  }

  override get(key: string): Doc | undefined {
    const value = super.get(key);
    return value === undefined ? undefined : this.#decoded(key, value);
  }

  override set(key: string, doc: Doc): this {
    if (this.#raw > 0 && typeof super.get(key) === "string") this.#raw--;
    return super.set(key, doc);
  }

  override delete(key: string): boolean {
    if (this.#raw > 0 && typeof super.get(key) === "string") this.#raw--;
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
