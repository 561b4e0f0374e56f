/**
 * What a client sends on one connection: bytes read ahead and kept until used (the rest of a
 * head's read belongs to its body or to the next request), request heads, and request bodies
 * framed by Content-Length or chunked coding, offered to the handler as byte streams.
 */
import { decodeLatin1 } from "./http1.ts";

const CR = 13;
const LF = 10;
/** A chunk-size or trailer line longer than this fails the body. */
const MAX_LINE = 4096;
/** Trailer bytes past this fail the body. */
const MAX_TRAILERS = 16 * 1024;

/** The client broke the body's framing or went away before it ended. */
export class BodyError extends Error {}

/** Bytes read from a connection and not used yet. */
export class Input {
  #buf: Uint8Array;
  #start = 0;
  #end = 0;
  /** A read started by {@link readAhead}, not yet taken by {@link fill}. */
  #pending: Promise<boolean> | null = null;

  constructor(
    private readonly conn: Deno.Conn,
    private readonly o: { size: number; onRead: () => void },
  ) {
    this.#buf = new Uint8Array(o.size);
  }

  /** Bytes kept. */
  get available(): number {
    return this.#end - this.#start;
  }

  /** The kept bytes (a view, valid until the next read). */
  peek(): Uint8Array {
    return this.#buf.subarray(this.#start, this.#end);
  }

  /** Drops `n` kept bytes. */
  consume(n: number): void {
    this.#start += n;
    if (this.#start === this.#end) this.#start = this.#end = 0;
  }

  /** Reads more bytes behind the kept ones, growing the buffer up to `max`; false at EOF. */
  fill(max: number): Promise<boolean> {
    const pending = this.#pending;
    if (pending) {
      this.#pending = null;
      return pending;
    }
    return this.#fill(max);
  }

  /**
   * Starts a {@link fill} without waiting for it (the next `fill` takes its result): while an
   * answer streams, this notices a client that closes. Only when no body read can follow.
   */
  readAhead(max: number): Promise<boolean> {
    return this.#pending ??= this.#fill(max);
  }

  async #fill(max: number): Promise<boolean> {
    if (this.#end === this.#buf.length) {
      const kept = this.#end - this.#start;
      if (this.#start > 0) {
        this.#buf.copyWithin(0, this.#start, this.#end);
      } else {
        const bigger = new Uint8Array(Math.min(Math.max(max, kept + 1), this.#buf.length * 2));
        bigger.set(this.#buf.subarray(0, kept));
        this.#buf = bigger;
      }
      this.#start = 0;
      this.#end = kept;
    }
    const n = await this.conn.read(this.#buf.subarray(this.#end));
    if (n === null) return false;
    this.#end += n;
    this.o.onRead();
    return true;
  }

  /** Copies up to `view.length` kept bytes into `view`, or reads into it; 0 at EOF. */
  async readInto(view: Uint8Array): Promise<number> {
    const kept = this.available;
    if (kept > 0) {
      const n = Math.min(kept, view.length);
      view.set(this.#buf.subarray(this.#start, this.#start + n));
      this.consume(n);
      return n;
    }
    const n = await this.conn.read(view);
    if (n === null) return 0;
    this.o.onRead();
    return n;
  }

  /** The next line ending in CRLF, without it (latin1); null when the client closed first. */
  async line(): Promise<string | null> {
    let from = 0;
    for (;;) {
      const bytes = this.peek();
      const lf = bytes.indexOf(LF, from);
      if (lf !== -1) {
        if (lf === 0 || bytes[lf - 1] !== CR) throw new BodyError("a line ends in a bare LF");
        const text = decodeLatin1(bytes.subarray(0, lf - 1));
        this.consume(lf + 1);
        return text;
      }
      if (bytes.length > MAX_LINE) throw new BodyError("a chunk line is too long");
      from = bytes.length;
      if (!await this.fill(MAX_LINE + 2)) return null;
    }
  }
}

type ChunkState = "size" | "data" | "data-end" | "trailers" | "done";

/**
 * One request's body: `length` bytes (> 0), or chunked (-1). Reads go through `read`; once
 * the answer is out, `discard` skips what the handler left unread, when that is little.
 */
export class RequestBody {
  #remaining: number;
  #state: ChunkState;
  #continue: (() => Promise<void>) | null;
  #detached = false;
  readonly #chunked: boolean;
  /** The latest read (the stream asks for one at a time). */
  #reading: Promise<number> | null = null;

  constructor(
    private readonly input: Input,
    o: { length: number; sendContinue: (() => Promise<void>) | null },
  ) {
    this.#remaining = o.length > 0 ? o.length : 0;
    this.#chunked = o.length === -1;
    this.#state = this.#chunked ? "size" : "data";
    this.#continue = o.sendContinue;
  }

  /** Whether every byte of the body has been read. */
  get done(): boolean {
    return this.#state === "done";
  }

  /** Bytes known to be left unread: 0 when done, Infinity when chunked. */
  knownLeft(): number {
    if (this.#state === "done") return 0;
    return this.#chunked ? Infinity : this.#remaining;
  }

  /** Later reads fail: the answer went out without the rest of the body. */
  detach(): void {
    this.#detached = true;
  }

  /** Reads body bytes into `view`; 0 at the end of the body. */
  read(view: Uint8Array): Promise<number> {
    if (this.#detached) {
      return Promise.reject(new BodyError("the answer was sent before the body was read"));
    }
    const reading = this.#read(view);
    this.#reading = reading;
    return reading;
  }

  async #read(view: Uint8Array): Promise<number> {
    if (this.#continue) {
      const send = this.#continue;
      this.#continue = null;
      await send();
    }
    for (;;) {
      switch (this.#state) {
        case "done":
          return 0;
        case "data": {
          if (this.#remaining === 0) {
            this.#state = this.#chunked ? "data-end" : "done";
            continue;
          }
          const max = Math.min(view.length, this.#remaining);
          const n = await this.input.readInto(view.subarray(0, max));
          if (n === 0) {
            throw new BodyError("the client closed the connection before the body ended");
          }
          this.#remaining -= n;
          return n;
        }
        case "size": {
          const line = await this.#line();
          const size = /^([0-9a-fA-F]{1,12})(?:[ \t]*;.*)?$/.exec(line);
          if (!size) throw new BodyError("a chunk size is malformed");
          this.#remaining = parseInt(size[1], 16);
          this.#state = this.#remaining === 0 ? "trailers" : "data";
          continue;
        }
        case "data-end":
          if (await this.#line() !== "") throw new BodyError("a chunk does not end in CRLF");
          this.#state = "size";
          continue;
        case "trailers": {
          let total = 0;
          for (;;) {
            const line = await this.#line();
            if (line === "") break;
            total += line.length;
            if (total > MAX_TRAILERS) throw new BodyError("the trailers are too large");
          }
          this.#state = "done";
          return 0;
        }
      }
    }
  }

  async #line(): Promise<string> {
    const line = await this.input.line();
    if (line === null) {
      throw new BodyError("the client closed the connection before the body ended");
    }
    return line;
  }

  /**
   * After the answer: reads and drops what the handler left, if at most `limit` bytes are
   * known to be left; false when the connection cannot be kept (more left, or a failure).
   * Later reads by the handler fail.
   */
  async discard(limit: number): Promise<boolean> {
    this.#detached = true;
    // A read the handler left running finishes first: two reads must not share the socket.
    await this.#reading?.catch(() => {});
    // Refused before the 100: the client may still send the body (curl does after a second).
    if (this.#continue) return false;
    if (this.#state === "done") return true;
    if (this.#chunked || this.#remaining > limit) return false;
    const scratch = new Uint8Array(Math.min(this.#remaining, 16 * 1024));
    try {
      while (this.#remaining > 0) {
        const n = await this.input.readInto(
          scratch.subarray(0, Math.min(scratch.length, this.#remaining)),
        );
        if (n === 0) return false;
        this.#remaining -= n;
      }
    } catch {
      return false;
    }
    this.#state = "done";
    return true;
  }

  /** The body as a byte stream (BYOB readers read straight into their own buffers). */
  stream(): ReadableStream<Uint8Array> {
    return new ReadableStream({
      type: "bytes",
      autoAllocateChunkSize: 16 * 1024,
      pull: async (controller) => {
        const request = controller.byobRequest!;
        const v = request.view!;
        let n: number;
        try {
          n = await this.read(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
        } catch (error) {
          controller.error(error);
          return;
        }
        if (n === 0) {
          controller.close();
          request.respond(0);
        } else request.respond(n);
      },
    });
  }
}
