/**
 * Carries one multipart file part from the parser to its saver through a few buffers of
 * its own, so the request body's buffer can be reused at once (`body_chunks.ts`).
 *
 * The parser hands file data over as views of the body chunk it was fed. The pipe listens
 * to the part in flowing mode and copies each view into its pieces the moment it is
 * emitted; the part is paused while `maxQueued` bytes wait for the saver, so the data still
 * in the part (uncopied views) is what {@link drained} waits for before the body is read on.
 *
 * A piece the saver got is recycled when it asks for the next one: a saver must be done
 * with a piece (have copied or written it) by then, as `FileStore.putStream` promises.
 */
import type { Readable } from "node:stream";

/** Sizes of a pipe's pieces and of its queue. */
export interface PipeSizes {
  /** Bytes per piece. */
  pieceBytes: number;
  /** Bytes waiting for the saver before the part is paused. */
  maxQueued: number;
}

export const DEFAULT_PIPE_SIZES: PipeSizes = { pieceBytes: 64 * 1024, maxQueued: 256 * 1024 };

/**
 * Resolves once `stream` holds no data (every view it was given has been emitted), or is
 * done; a stream read by a {@link FilePipe} or resumed to drop its data drains by itself.
 */
export function drained(stream: Readable): Promise<void> {
  const done = () => stream.readableLength === 0 || stream.destroyed || stream.readableEnded;
  if (done()) return Promise.resolve();
  return new Promise<void>((resolve) => {
    // A stream takes data out of its buffer before emitting it.
    const check = () => {
      if (!done()) return;
      for (const event of EVENTS) stream.off(event, check);
      resolve();
    };
    for (const event of EVENTS) stream.on(event, check);
  });
}

const EVENTS = ["data", "end", "close", "error"] as const;

/** A file part's bytes, copied into pieces of the pipe's own; read once. */
export class FilePipe implements AsyncIterableIterator<Uint8Array> {
  readonly #stream: Readable;
  readonly #sizes: PipeSizes;
  /** Full pieces waiting for the saver (views of pool buffers). */
  readonly #queue: Uint8Array[] = [];
  #queued = 0;
  /** Buffers free for copying into. */
  readonly #free: Uint8Array[] = [];
  /** The buffer being filled, and how far. */
  #current: Uint8Array | null = null;
  #filled = 0;
  /** The buffer behind the piece the saver holds. */
  #lent: Uint8Array | null = null;
  #ended = false;
  /** The saver stopped reading: data is dropped. */
  #dropping = false;
  #failure: { error: unknown } | null = null;
  #wake: (() => void) | null = null;

  constructor(stream: Readable, sizes: PipeSizes = DEFAULT_PIPE_SIZES) {
    this.#stream = stream;
    this.#sizes = sizes;
    stream.on("data", (data: Uint8Array) => this.#copy(data));
    stream.once("end", () => {
      this.#ended = true;
      this.#notify();
    });
    stream.once("error", (error) => {
      this.#failure ??= { error };
      this.#notify();
    });
    stream.once("close", () => {
      if (!this.#ended) this.#failure ??= { error: new Error("the file part was closed") };
      this.#notify();
    });
  }

  #copy(data: Uint8Array): void {
    if (this.#dropping) return;
    let at = 0;
    while (at < data.byteLength) {
      this.#current ??= this.#free.pop() ?? new Uint8Array(this.#sizes.pieceBytes);
      const take = Math.min(this.#current.byteLength - this.#filled, data.byteLength - at);
      this.#current.set(data.subarray(at, at + take), this.#filled);
      this.#filled += take;
      at += take;
      if (this.#filled === this.#current.byteLength) this.#enqueue();
    }
    if (this.#queued >= this.#sizes.maxQueued) this.#stream.pause();
  }

  #enqueue(): void {
    if (!this.#current || this.#filled === 0) return;
    this.#queue.push(this.#current.subarray(0, this.#filled));
    this.#queued += this.#filled;
    this.#current = null;
    this.#filled = 0;
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  #recycle(): void {
    if (!this.#lent) return;
    const pool = Math.ceil(this.#sizes.maxQueued / this.#sizes.pieceBytes) + 1;
    if (this.#free.length < pool) this.#free.push(this.#lent);
    this.#lent = null;
  }

  async next(): Promise<IteratorResult<Uint8Array>> {
    this.#recycle();
    for (;;) {
      if (this.#dropping) return { done: true, value: undefined };
      if (this.#failure) throw this.#failure.error;
      if (this.#ended) this.#enqueue(); // the last, partly filled piece
      const piece = this.#queue.shift();
      if (piece) {
        this.#queued -= piece.byteLength;
        this.#lent = new Uint8Array(piece.buffer);
        if (this.#queued < this.#sizes.maxQueued && this.#stream.isPaused()) {
          this.#stream.resume();
        }
        return { done: false, value: piece };
      }
      if (this.#ended) return { done: true, value: undefined };
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
  }

  /** The saver stopped reading: the part's remaining data is dropped. */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.#dropping = true;
    this.#recycle();
    this.#queue.length = 0;
    this.#queued = 0;
    this.#current = null;
    this.#stream.resume();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Uint8Array> {
    return this;
  }
}
