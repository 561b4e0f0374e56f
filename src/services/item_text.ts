/**
 * A bounded cache of the rendered JSON text of returned items, so that a read of documents
 * that have not changed since they were last returned the same way neither decorates nor
 * converts nor serializes them again (on a page of 25 that work was most of a request's own
 * JavaScript).
 *
 * An entry is keyed by the STORED document the returned item was made from (a store whose
 * documents are replaced on write, never changed, hands them out: FindOptions.stored) and
 * by the item's "shape": everything else its text depends on that may differ between two
 * requests of one runtime (see `textShape` in read.ts). Everything a runtime fixes (its
 * settings: date format, HATEOAS, IF_MATCH, soft delete, field names; its domain) is the
 * same for every entry of its cache: each runtime has its own.
 *
 * Bounded whatever the collection's size: at most {@link MAX_ENTRIES} entries and
 * {@link MAX_CHARS} characters of text in all, the oldest entry going first (first in,
 * first out: a hit costs one lookup, no reordering). Entries hold their documents weakly: a
 * document replaced by a write, or dropped from memory, is not kept alive by its entry.
 */
import type { Doc } from "../store/store.ts";

/** Most entries a cache holds: a few hundred pages of 25. */
export const MAX_ENTRIES = 8192;
/** Most characters of text a cache holds (at most 2 bytes each: 16 MiB). */
export const MAX_CHARS = 8 * 1024 * 1024;
/** The longest text kept: a larger item would push out hundreds of others for one answer. */
export const MAX_TEXT = 64 * 1024;

/** Most shapes of one document held at once (an item read with and without `embedded`...). */
export const MAX_SHAPES_PER_DOC = 4;

/** One cached text, for one stored document, of one shape; the document's others follow. */
interface Entry {
  readonly shape: string;
  readonly text: string;
  next: Entry | undefined;
}

/** An entry in insertion order, with its document held weakly (for eviction). */
interface Slot {
  readonly doc: WeakRef<Doc>;
  readonly entry: Entry;
}

export class ItemTextCache {
  readonly #entries = new WeakMap<Doc, Entry>();
  /** Every entry added and not yet evicted, oldest first, from `#head` on. */
  #slots: Array<Slot | undefined> = [];
  #head = 0;
  #chars = 0;

  constructor(
    readonly maxEntries: number = MAX_ENTRIES,
    readonly maxChars: number = MAX_CHARS,
    readonly maxText: number = MAX_TEXT,
  ) {}

  /** The text of `stored` rendered as `shape`; undefined when not cached. */
  get(stored: Doc, shape: string): string | undefined {
    for (let entry = this.#entries.get(stored); entry !== undefined; entry = entry.next) {
      if (entry.shape === shape) {
        hits++;
        return entry.text;
      }
    }
    return undefined;
  }

  /**
   * Keeps the text of `stored` rendered as `shape`, in place of its text of that shape; of
   * its other shapes, the {@link MAX_SHAPES_PER_DOC} - 1 cached last stay.
   */
  set(stored: Doc, shape: string, text: string): void {
    if (text.length > this.maxText) return;
    const entry: Entry = { shape, text, next: this.#entries.get(stored) };
    // The chain: this text first, without its shape's older text, at most the maximum long.
    let kept = 1;
    for (let at = entry; at.next !== undefined;) {
      if (at.next.shape === shape || kept === MAX_SHAPES_PER_DOC) at.next = at.next.next;
      else {
        at = at.next;
        kept++;
      }
    }
    this.#entries.set(stored, entry);
    this.#slots.push({ doc: new WeakRef(stored), entry });
    this.#chars += text.length;
    while (this.size > this.maxEntries || this.#chars > this.maxChars) this.#evict();
  }

  /** Entries held (a replaced one counts until it is evicted). */
  get size(): number {
    return this.#slots.length - this.#head;
  }

  /** Characters of text held. */
  get chars(): number {
    return this.#chars;
  }

  #evict(): void {
    const slot = this.#slots[this.#head];
    this.#slots[this.#head++] = undefined;
    if (slot === undefined) return;
    this.#chars -= slot.entry.text.length;
    const doc = slot.doc.deref();
    // The slot's text leaves its document's chain, if still in it (a text of the same shape
    // cached since replaced it there, and stays).
    const first = doc && this.#entries.get(doc);
    if (first === slot.entry) {
      if (first.next === undefined) this.#entries.delete(doc!);
      else this.#entries.set(doc!, first.next);
    } else {
      for (let at = first; at !== undefined; at = at.next) {
        if (at.next === slot.entry) {
          at.next = slot.entry.next;
          break;
        }
      }
    }
    // The evicted front of the array is dropped once it is half of it.
    if (this.#head > 1024 && this.#head * 2 > this.#slots.length) {
      this.#slots = this.#slots.slice(this.#head);
      this.#head = 0;
    }
  }
}

/** Texts served from every cache of the process (a count tests and benches read). */
let hits = 0;

/** How many item texts every cache of the process has answered so far. */
export function itemTextHits(): number {
  return hits;
}

/** Whether read answers use the caches (on; off only to compare answers without them). */
let enabled = true;

/**
 * Turns the use of every runtime's cache on or off; for tests and benches that compare
 * answers with and without it. Off, nothing is read from or added to the caches.
 */
export function setItemTextCaching(on: boolean): void {
  enabled = on;
}

const CACHES = new WeakMap<object, ItemTextCache>();

/** The cache of a service (`owner`: `Runtime.instance`), made on first use; undefined when off. */
export function itemTextCache(owner: object): ItemTextCache | undefined {
  if (!enabled) return undefined;
  let cache = CACHES.get(owner);
  if (cache === undefined) {
    cache = new ItemTextCache();
    CACHES.set(owner, cache);
  }
  return cache;
}
