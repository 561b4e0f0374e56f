/**
 * Frees the short-lived byte buffers of large transfers early.
 *
 * A stream that makes a new buffer per chunk (SQLite rows and GridFS chunks read for a
 * download, the driver's copies of an upload's chunks) adds little to V8's heap but many
 * bytes outside it, and V8 frees those only at a garbage collection, which it starts after
 * ~64 MiB of them have piled up: a 200 MiB transfer raised the process's memory by ~65-75 MiB
 * although nothing kept the chunks. A young-generation collection (a scavenge, about a
 * millisecond) every {@link EVERY_BYTES} transferred frees them while they are still young.
 *
 * This needs V8's `gc` function (`--expose-gc`, one of the flags `deno task start` and the
 * image pass: see `v8_flags.ts`); without it {@link noteTransferred} only counts.
 */

/** Bytes transferred between two collections. */
export const EVERY_BYTES = 8 * 1024 * 1024;

type Collect = (options: { type: "minor" }) => void;
const collect = (globalThis as { gc?: Collect }).gc;
let since = 0;

/** Counts `bytes` moved by a stream; collects the young generation every EVERY_BYTES. */
export function noteTransferred(bytes: number): void {
  since += bytes;
  if (since < EVERY_BYTES) return;
  since = 0;
  collect?.({ type: "minor" });
}

/** Whether collections run (the process was started with `--expose-gc`). */
export function collectsEarly(): boolean {
  return collect !== undefined;
}
