/**
 * Turning a `Response` into HTTP/1.1 bytes: a body held whole (a string or bytes: everything
 * the service renders) goes out with its head in one write and a Content-Length; a stream
 * (media downloads, change feeds, compressed bodies) is relayed as it comes, chunked unless
 * the response declares its length.
 *
 * Telling the two apart without reading the body needs one fact the Fetch API does not
 * expose: Deno keeps a response's body as a spec "body" record, reachable through the
 * `Symbol(body)` getter of `Response.prototype`, whose `streamOrStatic` holds either the
 * stream or `{ body, consumed }`. {@link bodyOf} checks that fact against probe responses
 * once; where it does not hold (another Deno version), every body is read as a stream:
 * correct, a little slower (chunked coding instead of a length).
 */

/** A response body as the server writes it. */
export type AnswerBody =
  | { kind: "none" }
  | { kind: "whole"; data: string | Uint8Array }
  | { kind: "stream"; stream: ReadableStream<Uint8Array> }
  | { kind: "used" };

const NONE: AnswerBody = { kind: "none" };
const USED: AnswerBody = { kind: "used" };

/** Deno's body record of a response (see the module comment). */
interface BodyRecord {
  streamOrStatic: ReadableStream<Uint8Array> | { body: string | Uint8Array; consumed: boolean };
}

const BODY = Object.getOwnPropertySymbols(Response.prototype).find((s) => s.description === "body");

/** The record behind `response`, or undefined when Deno keeps it some other way. */
function recordOf(response: Response): BodyRecord | null | undefined {
  if (!BODY) return undefined;
  const record = (response as unknown as Record<symbol, unknown>)[BODY];
  if (record === null) return null;
  if (typeof record !== "object" || !record || !("streamOrStatic" in record)) return undefined;
  return record as BodyRecord;
}

function inspect(response: Response): AnswerBody | undefined {
  const record = recordOf(response);
  if (record === undefined) return undefined;
  if (record === null) return NONE;
  const held = record.streamOrStatic;
  if (held instanceof ReadableStream) return { kind: "stream", stream: held };
  if (!held || typeof held !== "object") return undefined;
  if (held.consumed) return USED;
  const data = held.body;
  if (typeof data === "string" || data instanceof Uint8Array) return { kind: "whole", data };
  return undefined;
}

/** Whether {@link inspect} reads Deno's records right, checked on responses of every kind. */
function inspectionWorks(): boolean {
  try {
    const text = inspect(new Response("ab", { headers: { "x-a": "1" } }));
    const bytes = inspect(new Response(new Uint8Array([1, 2, 3])));
    const stream = new ReadableStream<Uint8Array>();
    const streamed = inspect(new Response(stream));
    const none = inspect(new Response(null, { status: 204 }));
    const json = inspect(Response.json({ a: 1 }));
    return text?.kind === "whole" && text.data === "ab" &&
      bytes?.kind === "whole" && bytes.data.length === 3 &&
      streamed?.kind === "stream" && streamed.stream === stream &&
      none?.kind === "none" &&
      json?.kind === "whole" && json.data === '{"a":1}';
  } catch {
    return false;
  }
}

/** Whether whole bodies are recognised (false: every body is relayed as a stream). */
export const WHOLE_BODIES = inspectionWorks();

/**
 * The body of `response` as the server writes it; `options.inspect: false` forces the
 * stream reading (tests use it to cover that path).
 */
export function bodyOf(response: Response, options: { inspect?: boolean } = {}): AnswerBody {
  if (WHOLE_BODIES && options.inspect !== false) {
    const found = inspect(response);
    if (found) return found;
  }
  if (response.bodyUsed) return USED;
  const stream = response.body;
  return stream ? { kind: "stream", stream } : NONE;
}

/** Statuses whose answers never have a body. */
export function bodiless(status: number): boolean {
  return status === 204 || status === 304 || status < 200;
}

const encoder = new TextEncoder();

/** Writes `text` (latin1: every char below 256) into `out` at `at`; returns the bytes written. */
export function writeLatin1(text: string, options: { out: Uint8Array; at: number }): number {
  const { out, at } = options;
  if (!NON_ASCII.test(text)) return encoder.encodeInto(text, out.subarray(at)).written;
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  return text.length;
}

const NON_ASCII = /[\u0080-\uffff]/;

/** Today's `Date` field value, worked out at most once a second. */
export function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}
let dateSecond = -1;
let dateText = "";
