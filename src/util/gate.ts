/**
 * @module
 * A gate letting at most a given number of tasks run at the same time; the others wait
 * their turn, first come first served.
 *
 * ```ts
 * const gate = new Gate(2);
 * const lengths = await Promise.all(urls.map((url) => gate.run(() => fetchLength(url))));
 * ```
 */

/** Runs at most `limit` tasks at a time. */
export class Gate {
  #free: number;
  #waiting: Array<() => void> = [];
  #next = 0;

  constructor(limit: number) {
    if (!(limit >= 1)) throw new RangeError(`a gate lets at least one task through, not ${limit}`);
    this.#free = limit;
  }

  /** Runs `task` once a place is free; its place frees when it settles. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      if (this.#next < this.#waiting.length) {
        // The place passes to the task that waited longest.
        this.#waiting[this.#next++]();
        if (this.#next === this.#waiting.length) {
          this.#waiting = [];
          this.#next = 0;
        }
      } else {
        this.#free++;
      }
    }
  }
}
