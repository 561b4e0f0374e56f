/**
 * @module
 * The V8 flags the service runs with: `deno task start`, `deno task start:example` and the
 * image pass them (`--v8-flags=` followed by {@link V8_FLAGS}), and a test keeps the three
 * in step with this list. A program embedding the service (`src/mod.ts`) should pass them too.
 *
 * - `--expose-gc`: the early release of large transfers' buffers (`transfer.ts`) starts
 *   young-generation collections (a millisecond or so each); without it, it only counts.
 * - `--heap-growing-percent=100`: after each full collection V8 lets the heap grow to twice
 *   what survived before it starts the next one (incremental, marking mostly on other
 *   threads; its pauses stayed under about 0.1 s while a heap grew to a gigabyte). Left to
 *   itself, V8 picks a factor of up to four while the heap is young, and the pages committed
 *   for that peak stay in the process's RSS: loading 1,000,000 documents through the API in
 *   one process ended at 1,536 MiB of RSS, 1,220 with this flag. Forcing full collections
 *   from the program instead (`gc()`) stops the process for the whole marking: pauses of
 *   0.5-0.6 s at that size, and a POST load's 99th percentile several times higher.
 * - `--no-memory-reducer`: a process that falls quiet keeps its heap as the load left it. Left
 *   on, V8's memory reducer runs full collections about half a minute after the last one of a
 *   quiet process, which shrink the young generation to its least and drop compiled code: the
 *   first one to three seconds of the next load then cost two to three times the CPU a request
 *   (served GET item), and its 99th percentile doubles. What it gives back is the young
 *   generation's pages, some tens of MiB; a large collection's documents stay either way.
 *
 * ```sh
 * deno run --v8-flags=--expose-gc,--heap-growing-percent=100,--no-memory-reducer -A my_app.ts
 * ```
 */

/** The V8 flags of every way the service is started, in the order they are passed. */
export const V8_FLAGS: readonly string[] = [
  "--expose-gc",
  "--heap-growing-percent=100",
  "--no-memory-reducer",
];

/** The `deno run` argument passing {@link V8_FLAGS}. */
export function v8FlagsArgument(): string {
  return `--v8-flags=${V8_FLAGS.join(",")}`;
}
