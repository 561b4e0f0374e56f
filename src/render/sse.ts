/**
 * Server-Sent Events framing (the `text/event-stream` format): events and comment lines.
 */

/** Headers of an event stream: never cached, never compressed or buffered on the way. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

/** One event: `id:` (when given), `event:` and `data:` lines, then a blank line. */
export function sseEvent(event: { id?: string; event: string; data: string }): string {
  const id = event.id === undefined ? "" : `id: ${oneLine(event.id)}\n`;
  const data = event.data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join("");
  return `${id}event: ${oneLine(event.event)}\n${data}\n`;
}

/** A comment line (ignored by clients; keeps the connection alive). */
export function sseComment(text: string): string {
  return `: ${oneLine(text)}\n\n`;
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]/g, " ");
}
