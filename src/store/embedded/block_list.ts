/**
 * A sorted list kept in blocks of a few hundred items: inserting or removing one item moves
 * the items of one block, not of the whole list (a sorted view of 1,000,000 documents in one
 * array cost every write a 1,000,000-pointer move). Finding a position is two binary
 * searches: over the blocks' last items, then within one block.
 */

/** Blocks are split past twice this many items. */
const BLOCK = 512;

export class BlockList<T> {
  #blocks: T[][] = [];
  #size = 0;

  /** `sorted`: the items, already in `compare` order. */
  constructor(readonly compare: (a: T, b: T) => number, sorted: T[] = []) {
    this.reset(sorted);
  }

  /** Replaces every item by `sorted` (already in order). */
  reset(sorted: T[]): void {
    this.#blocks = [];
    for (let i = 0; i < sorted.length; i += BLOCK) this.#blocks.push(sorted.slice(i, i + BLOCK));
    this.#size = sorted.length;
  }

  get size(): number {
    return this.#size;
  }

  *[Symbol.iterator](): Generator<T> {
    for (const block of this.#blocks) yield* block;
  }

  /** Every item, in order, as one array. */
  toArray(): T[] {
    return this.#blocks.flat();
  }

  /** The block holding the first item not before `item` (the last block when none is). */
  #blockFor(item: T): number {
    let lo = 0;
    let hi = this.#blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const block = this.#blocks[mid];
      if (this.compare(block[block.length - 1], item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #positionIn(block: T[], item: T): number {
    let lo = 0;
    let hi = block.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(block[mid], item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(item: T): void {
    this.#size++;
    if (this.#blocks.length === 0) {
      this.#blocks.push([item]);
      return;
    }
    const b = this.#blockFor(item);
    const block = this.#blocks[b];
    block.splice(this.#positionIn(block, item), 0, item);
    if (block.length > 2 * BLOCK) this.#blocks.splice(b + 1, 0, block.splice(BLOCK));
  }

  /**
   * Removes the item `same` recognises, looked for where `item` (equal to it in order) would
   * be, else anywhere. False when it is not in the list.
   */
  remove(item: T, same: (x: T) => boolean): boolean {
    if (this.#blocks.length === 0) return false;
    let b = this.#blockFor(item);
    let at = this.#positionIn(this.#blocks[b], item);
    const found = this.#blocks[b][at];
    if (found === undefined || !same(found)) {
      b = this.#blocks.findIndex((block) => (at = block.findIndex(same)) >= 0);
      if (b < 0) return false;
    }
    const block = this.#blocks[b];
    block.splice(at, 1);
    if (block.length === 0) this.#blocks.splice(b, 1);
    this.#size--;
    return true;
  }

  /**
   * The position of the first item for which `past` holds, `past` being false for a prefix
   * of the list and true for the rest; the size when it holds for none.
   */
  firstWhere(past: (item: T) => boolean): number {
    let lo = 0;
    let hi = this.#blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const block = this.#blocks[mid];
      if (past(block[block.length - 1])) hi = mid;
      else lo = mid + 1;
    }
    if (lo === this.#blocks.length) return this.#size;
    let position = 0;
    for (let b = 0; b < lo; b++) position += this.#blocks[b].length;
    const block = this.#blocks[lo];
    let low = 0;
    let high = block.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (past(block[mid])) high = mid;
      else low = mid + 1;
    }
    return position + low;
  }

  /** The items at positions `[start, end)`. */
  slice(start: number, end: number): T[] {
    const out: T[] = [];
    let position = 0;
    for (const block of this.#blocks) {
      const next = position + block.length;
      if (next > start && position < end) {
        for (
          let i = Math.max(0, start - position);
          i < Math.min(block.length, end - position);
          i++
        ) {
          out.push(block[i]);
        }
      }
      if (next >= end) break;
      position = next;
    }
    return out;
  }
}
