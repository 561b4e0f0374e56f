/**
 * JSON rendering of response bodies (BSON-aware) and JSONP wrapping.
 */
import { QueryError } from "../query/errors.ts";
import { type DateFormatter, toPlain } from "./convert.ts";

/** Options of {@link renderJson}. */
export interface RenderOptions {
  /** Indent with 4 spaces (the `pretty` query flag). */
  pretty: boolean;
  /** Formats dates (DATE_FORMAT). */
  formatDate: DateFormatter;
}

/** Renders a body as JSON: ObjectId as hex, dates formatted, Decimal128 as a string. */
export function renderJson(body: unknown, opts: RenderOptions): string {
  return JSON.stringify(toPlain(body, opts.formatDate), null, opts.pretty ? 4 : undefined) ??
    "null";
}

const JSONP_RE = /^[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*$/;

/** True for a safe JSONP callback name: dotted JavaScript identifiers, at most 128 chars. */
export function isValidJsonpCallback(name: string): boolean {
  return name.length <= 128 && JSONP_RE.test(name);
}

/**
 * Wraps rendered JSON as `callback(json)`.
 * @throws QueryError (400) when the callback name is not valid.
 */
export function wrapJsonp(callback: string, json: string): string {
  if (!isValidJsonpCallback(callback)) {
    throw new QueryError("invalid JSONP callback name", "callback");
  }
  // U+2028/2029 are legal in JSON but were line terminators in older JavaScript engines.
  // The empty comment keeps the answer from starting with client text (Rosetta Flash).
  return `/**/${callback}(${json.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")})`;
}
