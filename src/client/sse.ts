/**
 * A Server-Sent Events reader (the WHATWG event-stream format): turns a response body into
 * events `{id, event, data}`. Comment lines (heartbeats) are skipped; `retry:` is reported
 * so a reconnecting reader can honour it. One event's text is bounded (`maxEventBytes`).
 */

export interface SseEvent {
  /** The `id:` of the event, or null when it had none. */
  id: string | null;
  /** The `event:` name (`message` when absent). */
  event: string;
  data: string;
}

export interface SseReaderOptions {
  /** Called with the value of a `retry:` line (ms). */
  onRetry?: (ms: number) => void;
  /** Largest event (its lines together), in characters; default 16 MiB. */
  maxEventBytes?: number;
}

/** The events of `body`, in order, until the stream ends. */
export async function* readEvents(
  body: ReadableStream<Uint8Array>,
  options: SseReaderOptions = {},
): AsyncGenerator<SseEvent> {
  const max = options.maxEventBytes ?? 16 * 1024 * 1024;
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let id: string | null = null;
  let event = "";
  let data: string[] = [];
  let size = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = lineEnd(buffer)) !== -1) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(buffer[end] === "\r" && buffer[end + 1] === "\n" ? end + 2 : end + 1);
        if (line === "") {
          if (data.length) yield { id, event: event || "message", data: data.join("\n") };
          id = null;
          event = "";
          data = [];
          size = 0;
          continue;
        }
        size += line.length;
        if (size > max) throw new Error(`an event of the stream is larger than ${max} characters`);
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let text = colon === -1 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (field === "data") data.push(text);
        else if (field === "event") event = text;
        else if (field === "id" && !text.includes("\0")) id = text;
        else if (field === "retry" && /^\d+$/.test(text)) options.onRetry?.(Number(text));
      }
      if (buffer.length > max) {
        throw new Error(`a line of the stream is longer than ${max} characters`);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** The index of the first line break of `text`, or -1. */
function lineEnd(text: string): number {
  const n = text.indexOf("\n");
  const r = text.indexOf("\r");
  if (r === -1) return n;
  if (n === -1) return r === text.length - 1 ? -1 : r; // a lone trailing \r may be half of \r\n
  return Math.min(n, r);
}
