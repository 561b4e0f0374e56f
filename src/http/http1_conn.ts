/**
 * One client connection of the server (src/http/server.ts): reads request heads and bodies,
 * calls the fetch handler with a standard `Request`, writes each answer, one request at a
 * time (pipelined requests wait their turn), and keeps the clocks the server's limits read
 * (head timeout, idle timeout).
 */
import { contentLength, decodeLatin1, parseHead, requestUrl, statusLine } from "./http1.ts";
import { Input, RequestBody } from "./http1_input.ts";
import { bodiless, bodyOf, httpDate, writeLatin1 } from "./http1_answer.ts";
import { toRequest } from "./http1_request.ts";

/** The fetch handler, as `Deno.serve` calls it. */
export type FetchHandler = (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response>;

/** What the server logs: a level, a message and fields. */
export type ServerLog = (
  level: "info" | "warn" | "error",
  message: string,
  extra?: Record<string, unknown>,
) => void;

/** Options of a {@link Connection}. */
export interface ConnectionOptions {
  handler: FetchHandler;
  log: ServerLog;
  /** Largest request head in bytes; a bigger one answers 431. */
  maxHeadBytes: number;
  /** The Host of requests that carry none (HTTP/1.0): the listener's address. */
  localHost: string;
  /** False relays every body as a stream (tests cover that path with it). */
  inspectBodies?: boolean;
  /** False makes every request a full `Request` at once (see http1_request.ts). */
  lazyRequests?: boolean;
}

const encoder = new TextEncoder();

const refusal = (status: number) =>
  encoder.encode(`${statusLine(status, "")}content-length: 0\r\nconnection: close\r\n\r\n`);
/** Answers of the server itself, written before it closes a connection. */
export const REFUSALS = {
  400: refusal(400),
  408: refusal(408),
  431: refusal(431),
  503: refusal(503),
};
const CONTINUE = encoder.encode("HTTP/1.1 100 Continue\r\n\r\n");
const LAST_CHUNK = encoder.encode("0\r\n\r\n");
/** Unread request body bytes skipped to keep the connection; past this it closes. */
const DISCARD_LIMIT = 64 * 1024;
const READ_BUFFER = 16 * 1024;
const ANSWER_BUFFER = 16 * 1024;
/** The answer buffer grows for large answers; past this size it is not kept. */
const KEEP_ANSWER_BUFFER = 64 * 1024;
/** A stream chunk up to this size is copied next to its chunk header (one write). */
const COPY_CHUNK = 16 * 1024;

const CLOSE = /(?:^|,)\s*close\s*(?:,|$)/i;
const SERVER_ERROR = () => new Response("Internal Server Error", { status: 500 });

/** The handler's view of the connection (`Deno.ServeHandlerInfo`). */
class Info implements Deno.ServeHandlerInfo<Deno.NetAddr> {
  #completed: Promise<void> | null = null;
  #settle: (() => void) | null = null;
  #done = false;

  constructor(readonly remoteAddr: Deno.NetAddr) {}

  get completed(): Promise<void> {
    if (!this.#completed) {
      this.#completed = this.#done
        ? Promise.resolve()
        : new Promise<void>((resolve) => this.#settle = resolve);
    }
    return this.#completed;
  }

  settle(): void {
    this.#done = true;
    this.#settle?.();
  }
}

/** One client connection; see the module comment. */
export class Connection {
  /** When the current head started (the connection's start counts), or null. */
  headSince: number | null;
  /** The last byte read or written. */
  lastActivity: number;
  /** Whether anything of the current request's answer was written. */
  answered = false;
  #closed = false;
  /** Between requests with nothing read of the next one: safe to close on shutdown. */
  #between = true;
  #stopping = false;
  readonly #input: Input;
  #out = new Uint8Array(ANSWER_BUFFER);
  readonly #remote: Deno.NetAddr;

  constructor(private readonly conn: Deno.Conn, private readonly o: ConnectionOptions) {
    this.headSince = this.lastActivity = Date.now();
    this.#remote = conn.remoteAddr as Deno.NetAddr;
    this.#input = new Input(conn, {
      size: READ_BUFFER,
      onRead: () => this.lastActivity = Date.now(),
    });
  }

  /** Serves requests until the client leaves, a limit closes the connection, or shutdown. */
  async run(): Promise<void> {
    try {
      while (!this.#closed) {
        const text = await this.#readHead();
        if (text === null) break;
        if (!await this.#exchange(text)) break;
        if (this.#stopping) break;
      }
    } catch {
      // The socket failed or was closed under us (limits, shutdown): nothing to answer.
    }
    this.close();
  }

  /** Closes now if no request is under way, else after the current answer. */
  stop(): void {
    this.#stopping = true;
    if (this.#between) this.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.conn.close();
    } catch { /* already closed */ }
  }

  /** Ends the connection, first answering `bytes` when no answer has started. */
  fail(bytes: Uint8Array | null): void {
    if (bytes && !this.answered && !this.#closed) {
      this.#closed = true;
      answerAndClose(this.conn, bytes);
      return;
    }
    this.close();
  }

  /** The next head as latin1 text (without its blank line), or null when the client left. */
  async #readHead(): Promise<string | null> {
    const input = this.#input;
    let scanned = 0;
    for (;;) {
      const bytes = input.peek();
      if (scanned === 0) {
        // Blank lines between requests are allowed; a head's first byte starts its clock.
        let skip = 0;
        while (skip < bytes.length && (bytes[skip] === 13 || bytes[skip] === 10)) skip++;
        if (skip > 0) {
          input.consume(skip);
          continue;
        }
        if (bytes.length > 0) {
          this.#between = false;
          this.headSince ??= Date.now();
        }
      }
      const end = headEnd(bytes, Math.max(0, scanned - 3));
      if (end !== -1) {
        const text = decodeLatin1(bytes.subarray(0, end - 4));
        input.consume(end);
        return text;
      }
      scanned = bytes.length;
      if (scanned > this.o.maxHeadBytes) {
        this.fail(REFUSALS[431]);
        return null;
      }
      if (this.#stopping && this.#between) return null;
      if (!await input.fill(this.o.maxHeadBytes + 4)) return null;
    }
  }

  /** Answers one request; false when the connection must close afterwards. */
  async #exchange(text: string): Promise<boolean> {
    this.#between = false;
    this.answered = false;
    this.headSince = null;
    const head = parseHead(text);
    if ("refuse" in head) {
      this.fail(REFUSALS[head.refuse]);
      return false;
    }
    const url = requestUrl(head, this.o.localHost);
    if (url === null) {
      this.fail(REFUSALS[400]);
      return false;
    }
    const { method } = head;
    const body = head.length === 0 ? null : new RequestBody(this.#input, {
      length: head.length,
      sendContinue: head.expectContinue ? () => this.#sendContinue() : null,
    });
    let request: Request;
    try {
      // GET and HEAD cannot carry a body in a `Request`: theirs is skipped below.
      request = toRequest({
        method,
        url,
        fields: head.headers,
        body: body && method !== "GET" && method !== "HEAD" ? body.stream() : null,
      }, { lazy: this.o.lazyRequests });
    } catch {
      this.fail(REFUSALS[400]); // a method the Fetch API refuses
      return false;
    }
    const info = new Info(this.#remote);
    let response: Response;
    try {
      response = await this.o.handler(request, info);
      if (!(response instanceof Response)) {
        throw new TypeError("the handler did not answer a Response");
      }
    } catch (error) {
      this.o.log("error", "unhandled server error", { error: String(error) });
      response = SERVER_ERROR();
    }
    if (this.#closed) {
      await response.body?.cancel().catch(() => {});
      info.settle();
      return false;
    }
    // Whatever the handler left of the body is skipped when little is left, else the
    // connection closes after the answer (the client may still be sending it).
    let keepAlive = head.keepAlive && !this.#stopping;
    let skip = false;
    if (body && !body.done) {
      if (body.knownLeft() <= DISCARD_LIMIT) skip = true;
      else keepAlive = false;
    }
    try {
      keepAlive = await this.#answer(response, {
        head: method === "HEAD",
        keepAlive,
        minor: head.minor,
        watch: !body || body.done,
      });
    } finally {
      info.settle();
    }
    if (skip && keepAlive) keepAlive = await body!.discard(DISCARD_LIMIT);
    else body?.detach();
    this.#between = true;
    return keepAlive;
  }

  async #sendContinue(): Promise<void> {
    if (this.answered || this.#closed) return;
    await this.#write(CONTINUE);
  }

  /** Writes `response`; returns whether the connection stays open. */
  async #answer(
    response: Response,
    o: { head: boolean; keepAlive: boolean; minor: 0 | 1; watch: boolean },
  ): Promise<boolean> {
    let body = bodyOf(response, { inspect: this.o.inspectBodies });
    if (body.kind === "used") {
      this.o.log("error", "unhandled server error", {
        error: "the response body was already used",
      });
      response = SERVER_ERROR();
      body = bodyOf(response, { inspect: this.o.inspectBodies });
    }
    const status = response.status;
    let keepAlive = o.keepAlive;
    let declared: string | null = null;
    let hasDate = false;
    let fields = statusLine(status, response.statusText);
    response.headers.forEach((value, name) => {
      switch (name) {
        case "content-length":
          declared = value;
          return;
        case "connection":
          if (CLOSE.test(value)) keepAlive = false;
          return;
        case "transfer-encoding":
        case "keep-alive":
          return;
        case "date":
          hasDate = true;
      }
      fields += `${name}: ${value}\r\n`;
    });
    if (!hasDate) fields += `date: ${httpDate()}\r\n`;
    if (bodiless(status)) {
      if (body.kind === "stream") await body.stream.cancel().catch(() => {});
      return this.#sendHead(fields, { keepAlive, minor: o.minor, length: null });
    }
    const length = declared === null ? null : contentLength(declared);
    if (body.kind === "none") {
      // A HEAD answer keeps the length its GET would have (the handler declares it).
      return this.#sendHead(fields, {
        keepAlive,
        minor: o.minor,
        length: o.head ? length ?? 0 : 0,
      });
    }
    if (body.kind === "whole") {
      return this.#sendWhole(fields, { data: body.data, keepAlive, head: o.head, minor: o.minor });
    }
    if (body.kind !== "stream") return false;
    if (o.head) {
      await body.stream.cancel().catch(() => {});
      return this.#sendHead(fields, { keepAlive, minor: o.minor, length });
    }
    return this.#sendStream(fields, {
      stream: body.stream,
      keepAlive,
      minor: o.minor,
      length,
      watch: o.watch,
    });
  }

  /** Writes a head with no body after it (HEAD answers, 204, 304, empty bodies). */
  async #sendHead(
    fields: string,
    o: { keepAlive: boolean; minor: 0 | 1; length: number | null },
  ): Promise<boolean> {
    let text = fields;
    if (o.length !== null) text += `content-length: ${o.length}\r\n`;
    text += connectionField(o);
    await this.#writeText(text);
    return o.keepAlive;
  }

  /** A whole body: head and body in one write. */
  async #sendWhole(
    fields: string,
    o: { data: string | Uint8Array; keepAlive: boolean; head: boolean; minor: 0 | 1 },
  ): Promise<boolean> {
    const { data } = o;
    const closing = connectionField(o);
    // The body goes first, behind room for the head; the head then ends where it begins.
    const reserve = fields.length + closing.length + 40;
    let size: number;
    let out: Uint8Array;
    if (typeof data === "string") {
      out = this.#room(reserve + data.length);
      let done = encoder.encodeInto(data, out.subarray(reserve));
      if (done.read < data.length) {
        out = this.#room(reserve + data.length * 3);
        done = encoder.encodeInto(data, out.subarray(reserve));
      }
      size = done.written;
    } else {
      size = data.length;
      if (o.head || reserve + size > KEEP_ANSWER_BUFFER) {
        await this.#writeText(`${fields}content-length: ${size}\r\n${closing}`);
        if (!o.head) await this.#write(data);
        return o.keepAlive;
      }
      out = this.#room(reserve + size);
      out.set(data, reserve);
    }
    const text = `${fields}content-length: ${size}\r\n${closing}`;
    const start = reserve - text.length;
    writeLatin1(text, { out, at: start });
    await this.#write(out.subarray(start, o.head ? reserve : reserve + size));
    return o.keepAlive;
  }

  /** A stream: relayed as it comes, chunked unless `length` is declared. */
  async #sendStream(
    fields: string,
    o: {
      stream: ReadableStream<Uint8Array>;
      keepAlive: boolean;
      minor: 0 | 1;
      length: number | null;
      /** Whether to watch the socket for the client closing (no body read can follow). */
      watch: boolean;
    },
  ): Promise<boolean> {
    // HTTP/1.0 has no chunked coding: the end of the connection ends the body.
    const chunked = o.length === null && o.minor === 1;
    let keepAlive = o.keepAlive && (o.length !== null || chunked);
    let text = fields;
    if (o.length !== null) text += `content-length: ${o.length}\r\n`;
    else if (chunked) text += "transfer-encoding: chunked\r\n";
    text += connectionField({ keepAlive, minor: o.minor });
    await this.#writeText(text);
    const reader = o.stream.getReader();
    let left = o.length ?? Infinity;
    let gone = false;
    if (o.watch) {
      // A client that closes ends the stream (change feeds free their place at once).
      this.#input.readAhead(this.o.maxHeadBytes + 4).then((more) => more, () => false).then(
        (more) => {
          if (more) return;
          gone = true;
          reader.cancel().catch(() => {});
        },
      );
    }
    try {
      for (;;) {
        const step = await reader.read();
        if (step.done) break;
        let chunk = step.value;
        if (!(chunk instanceof Uint8Array)) throw new TypeError("a response chunk is not bytes");
        if (chunk.length === 0) continue;
        if (chunk.length > left) {
          // More than the declared length: send what was declared, then close.
          chunk = chunk.subarray(0, left);
          keepAlive = false;
        }
        left -= chunk.length;
        if (chunked) await this.#writeChunk(chunk);
        else await this.#write(chunk);
        if (left === 0 && o.length !== null) break;
      }
      if (chunked) await this.#write(LAST_CHUNK);
      else if (left !== 0 && o.length !== null) keepAlive = false; // shorter than declared
    } catch (error) {
      // The client went away (write failed) or the stream failed: the answer is cut short.
      await reader.cancel(error).catch(() => {});
      return false;
    }
    if (left === 0) await reader.cancel().catch(() => {});
    return keepAlive && !gone;
  }

  async #writeChunk(chunk: Uint8Array): Promise<void> {
    const size = `${chunk.length.toString(16)}\r\n`;
    if (chunk.length <= COPY_CHUNK) {
      const out = this.#room(size.length + chunk.length + 2);
      const at = encoder.encodeInto(size, out).written;
      out.set(chunk, at);
      out[at + chunk.length] = 13;
      out[at + chunk.length + 1] = 10;
      await this.#write(out.subarray(0, at + chunk.length + 2));
      return;
    }
    await this.#write(encoder.encode(size));
    await this.#write(chunk);
    await this.#write(CRLF);
  }

  /** The answer buffer, at least `size` bytes (a larger one is not kept past an answer). */
  #room(size: number): Uint8Array {
    if (this.#out.length >= size) return this.#out;
    const out = new Uint8Array(Math.max(size, this.#out.length * 2));
    if (out.length <= KEEP_ANSWER_BUFFER) this.#out = out;
    return out;
  }

  /** Writes latin1 `text` (a head) through the answer buffer. */
  #writeText(text: string): Promise<void> {
    const out = this.#room(text.length);
    return this.#write(out.subarray(0, writeLatin1(text, { out, at: 0 })));
  }

  async #write(bytes: Uint8Array): Promise<void> {
    this.answered = true;
    let at = 0;
    while (at < bytes.length) {
      at += await this.conn.write(bytes.subarray(at));
      this.lastActivity = Date.now();
    }
  }
}

const CRLF = encoder.encode("\r\n");

/** Writes `bytes` and closes `conn`, without waiting on a client that does not read. */
export function answerAndClose(conn: Deno.Conn, bytes: Uint8Array): void {
  conn.write(bytes).catch(() => {}).finally(() => {
    try {
      conn.close();
    } catch { /* closed */ }
  });
}

/** The Connection field (when one is needed) and the blank line ending a head. */
function connectionField(o: { keepAlive: boolean; minor: 0 | 1 }): string {
  if (!o.keepAlive) return "connection: close\r\n\r\n";
  return o.minor === 0 ? "connection: keep-alive\r\n\r\n" : "\r\n";
}

/** Index just past the CRLFCRLF ending a head in `bytes` (searched from `from`), or -1. */
function headEnd(bytes: Uint8Array, from: number): number {
  for (
    let i = bytes.indexOf(13, from);
    i !== -1 && i + 3 < bytes.length;
    i = bytes.indexOf(13, i + 1)
  ) {
    if (bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i + 4;
  }
  return -1;
}
