/**
 * Response compression (docs/reading.md): brotli, gzip or deflate, for answers of at
 * least `threshold` bytes with a compressible type, when the client's `Accept-Encoding`
 * allows it. The encoding with the highest quality value wins; on a tie brotli goes first
 * (the smallest output), then gzip, then deflate.
 */
import type { Context, MiddlewareHandler } from "hono";
import { Duplex } from "node:stream";
import { constants, createBrotliCompress } from "node:zlib";
import type { AppEnv } from "../env.ts";
import { isSettled } from "../answer_fields.ts";

/** The encodings offered, in order of preference on equal quality values. */
export const ENCODINGS = ["br", "gzip", "deflate"] as const;
export type Encoding = typeof ENCODINGS[number];

/** Types worth compressing: text, JSON, XML, JavaScript (and `+json` / `+xml` types). */
const COMPRESSIBLE =
  /^\s*(?:text\/(?!event-stream\b)[^;\s]+|application\/(?:json|xml|javascript|x-javascript|ecmascript|x-www-form-urlencoded)|[^;\s/]+\/[^;\s]+\+(?:json|xml|text))\s*(?:;|$)/i;
const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i;
const VARY_ENCODING = /(?:^|,)\s*accept-encoding\s*(?:,|$)/i;
/** `Accept-Encoding` members read at most (the rest are ignored). */
const MAX_MEMBERS = 32;

/**
 * Brotli quality for answers made per request: 4 compresses JSON close to gzip's best at a
 * fraction of brotli's default (11) cost.
 */
const BROTLI_QUALITY = 4;

/** The encoding `header` accepts best among ours, or null (see the module comment). */
export function chooseEncoding(header: string | undefined): Encoding | null {
  if (!header) return null;
  const q = new Map<string, number>();
  for (const member of header.split(",").slice(0, MAX_MEMBERS)) {
    const [name, ...params] = member.split(";").map((p) => p.trim().toLowerCase());
    if (!name || q.has(name)) continue;
    let quality = 1;
    for (const param of params) {
      const m = /^q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.exec(param);
      if (param.startsWith("q=")) quality = m ? Number(m[1]) : 0;
    }
    q.set(name, quality);
  }
  let best: Encoding | null = null;
  let bestQ = 0;
  for (const encoding of ENCODINGS) {
    const quality = q.get(encoding) ?? q.get("*") ?? 0;
    if (quality > bestQ) [best, bestQ] = [encoding, quality];
  }
  return best;
}

function brotli(sizeHint: number | null): ReadableWritablePair<Uint8Array, Uint8Array> {
  const params: Record<number, number> = {
    [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
  };
  if (sizeHint !== null) params[constants.BROTLI_PARAM_SIZE_HINT] = sizeHint;
  return Duplex.toWeb(createBrotliCompress({ params })) as unknown as ReadableWritablePair<
    Uint8Array,
    Uint8Array
  >;
}

/**
 * Answers of a known length up to this size are compressed whole before they are sent, with
 * the compressed Content-Length, so a HEAD carries the same fields as its GET; longer ones
 * (and answers of unknown length) stream compressed, chunked.
 */
const WHOLE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Compresses answers of at least `threshold` bytes (see the module comment). 206, already
 * encoded and `Cache-Control: no-transform` answers never are; a compressed answer's strong
 * `ETag` becomes weak, and `Vary` names `Accept-Encoding`. A HEAD is compressed as its GET
 * would be (the body it carries to here is measured, never sent) when its length is known
 * and its bytes came with it; otherwise it is left as it is.
 */
export function compress(options: { threshold: number }): MiddlewareHandler<AppEnv> {
  const after = compressAnswer(options);
  return async function compress(c, next) {
    await next();
    const pending = after(c);
    if (pending) await pending;
  };
}

/**
 * The compression middleware's work on the answer (see {@link compress}), for a step that
 * runs it after its own: undefined when there is nothing to do, without an async step.
 */
export function compressAnswer(
  options: { threshold: number },
): (c: Context<AppEnv>) => Promise<void> | undefined {
  // A rendered answer that compression leaves as it is says so (answer_fields.ts).
  return (c) => isSettled(c.res) ? undefined : compressNow(c, options);
}

/** The compression of an answer not marked settled (see {@link compress}). */
async function compressNow(c: Context<AppEnv>, options: { threshold: number }): Promise<void> {
  const res = c.res;
  const accepted = c.req.header("accept-encoding");
  const vary = res.headers.get("vary");
  const varies = vary === "*" || (vary !== null && VARY_ENCODING.test(vary));
  // Nothing to compress for this client, and the answer says it varies (rendered answers do).
  if (!accepted && varies) return;
  const length = res.headers.get("content-length");
  const size = length === null ? null : Number(length);
  const head = c.req.method === "HEAD";
  const whole = size !== null && size <= WHOLE_MAX_BYTES;
  const skip = (size !== null && size < options.threshold) || (head && (!whole || !res.body)) ||
    res.status === 206 ||
    res.headers.has("content-encoding") || res.headers.has("transfer-encoding") ||
    !COMPRESSIBLE.test(res.headers.get("content-type") ?? "") ||
    NO_TRANSFORM.test(res.headers.get("cache-control") ?? "");
  if (!skip && !varies) {
    res.headers.set("vary", vary ? `${vary}, Accept-Encoding` : "Accept-Encoding");
  }
  const encoding = skip ? null : chooseEncoding(accepted);
  // `body` is read only now. Reading it turns a byte body into a stream, which Deno sends
  // with the Content-Length header as set; an error answer thrown after an earlier answer
  // carries that answer's Content-Length (Hono's `c.res` setter copies the old headers),
  // which Deno otherwise corrects from the bytes.
  if (!encoding || !res.body) {
    // A HEAD's bytes are never sent (its Content-Length stays).
    if (head && res.body) c.res = new Response(null, res);
    return;
  }
  const stream = encoding === "br" ? brotli(size) : new CompressionStream(encoding);
  const compressed = res.body.pipeThrough(stream);
  if (whole) {
    const bytes = new Uint8Array(await new Response(compressed).arrayBuffer());
    c.res = new Response(head ? null : bytes, res);
    c.res.headers.set("content-length", String(bytes.byteLength));
  } else {
    c.res = new Response(compressed, res);
    c.res.headers.delete("content-length");
  }
  c.res.headers.set("content-encoding", encoding);
  const etag = c.res.headers.get("etag");
  if (etag && !etag.startsWith("W/")) c.res.headers.set("etag", `W/${etag}`);
}
