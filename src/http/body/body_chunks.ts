/**
 * Reads a request body chunk by chunk into one reused buffer when the stream is a byte
 * stream (a BYOB reader: `Deno.serve` bodies), else chunk by chunk as the stream gives them
 * (an in-process `Request` built on a plain stream).
 *
 * Why: every chunk a default reader returns is a new ArrayBuffer, and V8 frees those only
 * after tens of MiB of them have piled up, so a large upload raised the process's peak
 * memory by ~80 MiB even though nothing kept the chunks. One reused buffer does not pile up.
 * The price is that a chunk is valid only until the next `read()`: the caller must be done
 * with every view of it by then (`multipart.ts` copies file data out before reading on).
 *
 * Every read is held to the minimum body data rate (`util/body_rate.ts`): a read rejects with
 * `SlowBodyError` once the body falls under it.
 */
import { noteTransferred } from "../../util/transfer.ts";
import { type BodyRate, RateWatch } from "../../util/body_rate.ts";

/** Bytes of the reused buffer. */
export const BODY_CHUNK_BYTES = 64 * 1024;

/** A body read one chunk at a time. */
export interface BodyChunks {
  /** Whether chunks share one buffer (each is overwritten by the next `read()`). */
  readonly reused: boolean;
  /** The next chunk, or null at the end; rejects when the stream fails. */
  read(): Promise<Uint8Array | null>;
  /** Stops reading: cancels the stream (after a failure) or releases it. */
  close(options: { cancel: boolean }): void;
}

/**
 * Reads `body` as {@link BodyChunks}; `bufferBytes` sizes the reused buffer, `rate` is the
 * minimum data rate (none: not watched).
 */
export function bodyChunks(
  body: ReadableStream<Uint8Array>,
  options: { bufferBytes?: number; rate?: BodyRate | null } = {},
): BodyChunks {
  const watch = new RateWatch(options.rate ?? null);
  // Not a byte stream (null): chunks come as the stream makes them.
  const byob = byobReader(body);
  return byob
    ? new ReusedChunks(byob, options.bufferBytes ?? BODY_CHUNK_BYTES, watch)
    : new PlainChunks(body.getReader(), watch);
}

/**
 * A BYOB reader of `body`, or null when it is not a byte stream. The refusal is a TypeError
 * whose stack trace would cost more than reading a small body: none is captured.
 */
export function byobReader(body: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | null {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return body.getReader({ mode: "byob" });
  } catch {
    return null;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Lets go of a reader: cancels the stream after a failure, else releases the lock, unless
 * the stream has ended (`done`), when there is nothing left to hand on (releasing a lock
 * makes an error object for the reader's `closed` promise, which costs a stack trace).
 */
export function letGo(
  reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>,
  { cancel, done }: { cancel: boolean; done: boolean },
): void {
  if (cancel) reader.cancel().catch(() => {});
  else if (!done) reader.releaseLock();
}

class ReusedChunks implements BodyChunks {
  readonly reused = true;
  /** The buffer, handed back and forth with the stream (each read transfers it). */
  #buffer: ArrayBuffer | null;
  #done = false;

  constructor(
    readonly reader: ReadableStreamBYOBReader,
    size: number,
    readonly watch: RateWatch,
  ) {
    this.#buffer = new ArrayBuffer(size);
  }

  async read(): Promise<Uint8Array | null> {
    if (!this.#buffer) return null;
    const pending = this.reader.read(new Uint8Array(this.#buffer));
    // Until the read settles the buffer belongs to the stream (a late rejection leaves it there).
    this.#buffer = null;
    const step = await this.watch.read(pending, (s) => s.value?.byteLength ?? 0);
    // Even at the end the stream hands the buffer back (as an empty view).
    this.#buffer = step.value ? step.value.buffer as ArrayBuffer : null;
    if (step.done) {
      this.#buffer = null;
      this.#done = true;
      return null;
    }
    // What the stores make of the chunks (the driver's copies) is short-lived too.
    noteTransferred(step.value.byteLength);
    return step.value;
  }

  close(options: { cancel: boolean }): void {
    letGo(this.reader, { cancel: options.cancel, done: this.#done });
  }
}

class PlainChunks implements BodyChunks {
  readonly reused = false;
  #done = false;

  constructor(
    readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    readonly watch: RateWatch,
  ) {}

  async read(): Promise<Uint8Array | null> {
    for (;;) {
      const step = await this.watch.read(this.reader.read(), (s) => s.value?.byteLength ?? 0);
      if (step.done) {
        this.#done = true;
        return null;
      }
      noteTransferred(step.value.byteLength);
      if (step.value.byteLength > 0) return step.value;
    }
  }

  close(options: { cancel: boolean }): void {
    letGo(this.reader, { cancel: options.cancel, done: this.#done });
  }
}
