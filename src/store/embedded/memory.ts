/**
 * Keeps the heap's peak near its live size while documents pour in.
 *
 * A bulk write keeps the documents it stores and leaves about twice their size of garbage
 * (the request text, the parsed batch, the answer), much of it large objects that only a
 * full collection frees. V8 runs one when the old generation reaches a limit set to a
 * multiple of the live size after the previous one, and the pages committed for that peak
 * stay in the process's RSS after they are freed: a 100,000-document load through the API
 * ended at 1.7x the RSS of the same data after a restart. Starting an incremental full
 * collection (marking runs in steps and on other threads, no long pause) after every
 * {@link nudgeEvery} documents written keeps the peak lower (200,000 documents loaded in one
 * process: RSS after the load 531 -> 401 MiB).
 *
 * This needs V8's `gc` function (`--v8-flags=--expose-gc`: `deno task start` and the image
 * pass it); without it nothing happens.
 */

type Collect = (options: { type: "major"; execution: "async" }) => void;
const collect = (globalThis as { gc?: Collect }).gc;

/** Documents written since the last collection this module started. */
let written = 0;

/**
 * Documents written between two collections when `held` documents are in memory: an
 * eighth of them, and at least 20,000 (a full marking costs in proportion to the heap, so
 * the interval grows with it).
 */
export function nudgeEvery(held: number): number {
  return Math.max(20_000, held >>> 3);
}

/** Counts `count` documents written to memory, `held` being in memory in their collection. */
export function noteWritten(count: number, held: number): void {
  if (collect === undefined) return;
  written += count;
  if (written < nudgeEvery(held)) return;
  written = 0;
  collect({ type: "major", execution: "async" });
}
