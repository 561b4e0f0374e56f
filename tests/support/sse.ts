/**
 * Reading Server-Sent Events in scenarios: a feed opened with `fetch`, read event by event,
 * every wait bounded by a deadline.
 *
 * ```ts
 * const feed = await openFeed(running.url + "people/_changes");
 * const ready = await feed.event();          // the opening `ready` event
 * await api.post("people", { name: "x" });
 * const insert = await feed.event();         // { event: "insert", id, data: {...} }
 * await feed.close();
 * ```
 */
import type { Json } from "./client.ts";

/** One parsed event; comment lines come as `event: "comment"` with the text in `data`. */
export interface SseMessage {
  id?: string;
  event: string;
  /** The data parsed as JSON (the raw text when it is not JSON). */
  data: Json;
}

/** How long a read waits by default. */
export const DEFAULT_WAIT_MS = 5000;

/** An open feed. */
export class SseFeed {
  #readerOf: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #decoder = new TextDecoder();
  #buffer = "";
  #pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  #ended = false;

  constructor(readonly response: Response, private readonly abort: AbortController) {}

  /** The body's reader, taken on first read (so an error answer's body stays readable). */
  get #reader(): ReadableStreamDefaultReader<Uint8Array> {
    return this.#readerOf ??= this.response.body!.getReader();
  }

  get status(): number {
    return this.response.status;
  }

  /** True once the server ended the stream. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The next message (event or comment); throws when none comes within `waitMs`. */
  async next(waitMs = DEFAULT_WAIT_MS): Promise<SseMessage> {
    const deadline = Date.now() + waitMs;
    while (true) {
      const message = this.#parseOne();
      if (message) return message;
      if (this.#ended) throw new Error("the feed ended");
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${waitMs} ms`);
      this.#pending ??= this.#reader.read();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), left);
      });
      const result = await Promise.race([this.#pending.catch(() => ({ done: true })), timeout]);
      clearTimeout(timer);
      if (result === "timeout") throw new Error(`no event within ${waitMs} ms`);
      this.#pending = undefined;
      const { done, value } = result as ReadableStreamReadResult<Uint8Array>;
      if (done) this.#ended = true;
      else this.#buffer += this.#decoder.decode(value, { stream: true });
    }
  }

  /** The next event, skipping comments. */
  async event(waitMs = DEFAULT_WAIT_MS): Promise<SseMessage> {
    const deadline = Date.now() + waitMs;
    while (true) {
      const message = await this.next(Math.max(1, deadline - Date.now()));
      if (message.event !== "comment") return message;
    }
  }

  /** The next `count` events, skipping comments. */
  async events(count: number, waitMs = DEFAULT_WAIT_MS): Promise<SseMessage[]> {
    const deadline = Date.now() + waitMs;
    const out: SseMessage[] = [];
    while (out.length < count) out.push(await this.event(Math.max(1, deadline - Date.now())));
    return out;
  }

  /** Asserts no event (comments aside) arrives within `waitMs`. */
  async quiet(waitMs = 300): Promise<void> {
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      let message: SseMessage;
      try {
        message = await this.next(Math.max(1, deadline - Date.now()));
      } catch (error) {
        if (String(error).includes("no event within")) return;
        throw error;
      }
      if (message.event !== "comment") {
        throw new Error(`unexpected event ${message.event}: ${JSON.stringify(message.data)}`);
      }
    }
  }

  /** Waits until the server ends the stream; throws past `waitMs`. */
  async end(waitMs = DEFAULT_WAIT_MS): Promise<void> {
    const deadline = Date.now() + waitMs;
    while (!this.#ended) {
      try {
        await this.next(Math.max(1, deadline - Date.now()));
      } catch (error) {
        if (this.#ended) return;
        throw error;
      }
    }
  }

  /** Closes the connection from the client side. */
  async close(): Promise<void> {
    this.abort.abort();
    if (this.#readerOf) await this.#readerOf.cancel().catch(() => {});
    else if (!this.response.bodyUsed) await this.response.body?.cancel().catch(() => {});
  }

  #parseOne(): SseMessage | null {
    const end = this.#buffer.indexOf("\n\n");
    if (end < 0) return null;
    const block = this.#buffer.slice(0, end);
    this.#buffer = this.#buffer.slice(end + 2);
    const message: SseMessage = { event: "message", data: "" };
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) return { event: "comment", data: line.slice(1).trim() };
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "id") message.id = value;
      else if (field === "event") message.event = value;
      else if (field === "data") data.push(value);
    }
    const text = data.join("\n");
    try {
      message.data = JSON.parse(text);
    } catch {
      message.data = text;
    }
    return message;
  }
}

/**
 * Opens a feed at `url`. Answers the feed whatever the status: check `feed.status` (an
 * error answer's body is then in `await feed.response.text()`).
 */
export async function openFeed(
  url: string,
  headers: Record<string, string> = {},
): Promise<SseFeed> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  return new SseFeed(response, abort);
}

/** What a stalled client got once it read: events seen, and whether the server closed. */
export interface Drained {
  /** `event: <name>` lines seen, by name. */
  events: Record<string, number>;
  bytes: number;
  /** True when the server closed the connection (false: still open at the deadline). */
  closed: boolean;
}

/**
 * A client that sends a feed request on a raw connection and reads nothing until asked:
 * a slow client. `drain()` then reads what the server sent until it closes the connection.
 */
export async function stalledFeed(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ drain(waitMs?: number): Promise<Drained> }> {
  const target = new URL(url);
  const conn = await Deno.connect({ hostname: target.hostname, port: Number(target.port) });
  const lines = [
    `GET ${target.pathname}${target.search} HTTP/1.1`,
    `Host: ${target.host}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "",
    "",
  ];
  await conn.write(new TextEncoder().encode(lines.join("\r\n")));
  return {
    async drain(waitMs = DEFAULT_WAIT_MS) {
      const deadline = Date.now() + waitMs;
      const decoder = new TextDecoder();
      const chunk = new Uint8Array(64 * 1024);
      const out: Drained = { events: {}, bytes: 0, closed: false };
      // Lines can span reads: keep the unfinished last line for the next one.
      let partial = "";
      try {
        while (Date.now() < deadline) {
          let timer: ReturnType<typeof setTimeout> | undefined;
          const timeout = new Promise<"timeout">((resolve) => {
            timer = setTimeout(() => resolve("timeout"), Math.max(1, deadline - Date.now()));
          });
          const read = await Promise.race([conn.read(chunk).catch(() => null), timeout]);
          clearTimeout(timer);
          if (read === "timeout") break;
          if (read === null) {
            out.closed = true;
            break;
          }
          out.bytes += read;
          const lines = (partial + decoder.decode(chunk.subarray(0, read), { stream: true }))
            .split("\n");
          partial = lines.pop()!.slice(0, 256);
          for (const line of lines) {
            const name = /^event: (\w+)/.exec(line)?.[1];
            if (name) out.events[name] = (out.events[name] ?? 0) + 1;
          }
        }
      } finally {
        try {
          conn.close();
        } catch {
          // Already closed.
        }
      }
      return out;
    },
  };
}
