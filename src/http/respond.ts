/**
 * Turns a service Reply into a Response: content negotiation (JSON / XML), `pretty`,
 * JSONP, and bodiless answers for HEAD, 204 and 304.
 */
import { Buffer } from "node:buffer";
import { negotiate } from "../render/negotiate.ts";
import { renderJson, type RenderOptions } from "../render/json.ts";
import { isValidJsonpCallback, wrapJsonp } from "./jsonp.ts";
import { renderXml } from "../render/xml.ts";
import type { Settings } from "../settings/check.ts";
import type { Reply } from "../services/runtime.ts";
import { applyLateFields, type LateFields, markAnswer } from "./answer_fields.ts";

const encoder = new TextEncoder();

/** What turning replies into responses needs: the settings and the bodies' date format. */
export type ResponseOptions = Pick<RenderOptions, "formatDate"> & { settings: Settings };

/** Options of {@link toResponse}: {@link ResponseOptions} and the request's method. */
export interface ToResponseOptions extends ResponseOptions {
  /** The effective method (after method override); by default `request.method`. */
  method?: string;
  /** The request's query parameters (null when it has none), parsed once per request. */
  query: URLSearchParams | null;
  /** The JSONP callback the request asks for, unchecked (null when none). */
  jsonp: string | null;
  /** Fields the middlewares add to the request's answer (answer_fields.ts); none by default. */
  late?: LateFields;
}

/**
 * The response to `request` carrying `reply`, rendered as the request asks (format,
 * `pretty`, JSONP) with `options.settings` and `options.formatDate`.
 */
export function toResponse(request: Request, reply: Reply, options: ToResponseOptions): Response {
  const { method = request.method } = options;
  const headers: Record<string, string> = {};
  for (const name in reply.headers) headers[name.toLowerCase()] = reply.headers[name];
  // HEAD renders like GET (same Content-Type and Content-Length) and sends no body.
  const head = method === "HEAD";
  const bodiless = reply.status === 204 || reply.status === 304 || reply.body === undefined;
  const { settings } = options;
  const minBytes = settings.COMPRESS_MIN_BYTES;
  const { query, jsonp } = options;
  const pretty = query?.has("pretty") ?? false;
  // An invalid name never wraps; the route answers it 400.
  const callback = jsonp !== null && isValidJsonpCallback(jsonp) ? jsonp : null;
  const format = negotiate(request.headers.get("accept"), settings.RENDERERS) ??
    settings.RENDERERS[0];
  const { late } = options;
  if (bodiless) {
    // A 304 says what its 200 may: caches keep the stored answer's Vary or widen it.
    if (minBytes > 0 && reply.status === 304) varyEncoding(headers);
    return answer(null, { status: reply.status, headers, late, settled: true });
  }
  let text: string;
  if (format === "xml" && !callback) {
    text = renderXml(reply.body, { pretty, formatDate: options.formatDate });
    headers["content-type"] = "application/xml; charset=utf-8";
  } else {
    text = renderJson(reply.body, {
      pretty,
      formatDate: options.formatDate,
      sortKeys: settings.JSON_SORT_KEYS,
    });
    if (callback) {
      text = wrapJsonp(callback, text);
      headers["content-type"] = "application/javascript; charset=utf-8";
      headers["x-content-type-options"] = "nosniff";
    } else headers["content-type"] = "application/json";
  }
  // Deno sends a text body with its Content-Length: the bytes are counted here only when a
  // HEAD must tell them, or when compression may apply (it skips short answers by the header).
  // Otherwise the text goes to Deno as it is, with no buffer of its own to allocate and free.
  // Every answer rendered here has a compressible type: with compression on, each one long
  // enough to be compressed says it varies with Accept-Encoding (the compression middleware
  // then has nothing to add). A shorter one is never compressed: it varies with nothing, and
  // carries its Content-Length when the client accepts an encoding, so that the middleware
  // sees it is short. A short answer and a HEAD need the count alone (of an ASCII text, its
  // length): their text is not encoded here.
  let length: number | undefined;
  const short = minBytes > 0 && text.length < minBytes &&
    (text.length * 3 < minBytes || (length = utf8Length(text)) < minBytes);
  if (minBytes > 0 && !short) varyEncoding(headers);
  const compressible = minBytes > 0 && request.headers.get("accept-encoding") !== null;
  // Compression has nothing to do with a short answer, nor with one the client takes as it is.
  const settled = short || !compressible;
  if ((head && settled) || (short && compressible)) {
    headers["content-length"] = String(length ?? utf8Length(text));
  }
  if (settled) return answer(head ? null : text, { status: reply.status, headers, late, settled });
  // A HEAD that may be compressed carries its bytes on to the compression middleware, which
  // measures them as its GET would be sent and drops them.
  const bytes = encoder.encode(text);
  headers["content-length"] = String(bytes.byteLength);
  return answer(bytes, { status: reply.status, headers, late, settled });
}

/**
 * The UTF-8 byte count of `text` (as encoded: a lone surrogate counts 3), without encoding it:
 * for an item's 500 characters 0.05-0.15 us, where a search for a non-ASCII character took
 * 0.6-0.9 us.
 */
function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * The `Response`, with the request's late fields (answer_fields.ts) in it and marked so;
 * `settled`: the compression middleware has nothing to do with it.
 */
function answer(
  body: BodyInit | null,
  init: {
    status: number;
    headers: Record<string, string>;
    late: LateFields | undefined;
    settled: boolean;
  },
): Response {
  const { headers, late } = init;
  if (late) applyLateFields(headers, late);
  // Made with its status alone, its fields set one by one: fields given in the init are also
  // copied into a record Deno prepares for `Deno.serve`'s native path, which measured no
  // cheaper served (and dearer in process, and when a middleware changes a field later).
  const response = new Response(body, { status: init.status });
  const fields = response.headers;
  for (const name in headers) fields.set(name, headers[name]);
  return markAnswer(response, init.settled);
}

/** Adds `Accept-Encoding` to the answer's `Vary`. */
function varyEncoding(headers: Record<string, string>): void {
  headers.vary = headers.vary ? `${headers.vary}, Accept-Encoding` : "Accept-Encoding";
}
