/**
 * JSON rendering of response bodies (BSON-aware); JSONP wrapping is `http/jsonp.ts`.
 */
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
  const plain = toPlain(body, opts.formatDate);
  // No replacer or indent argument (not even `null, undefined`): V8 then serializes plain data
  // on its fast path (see flatConcat for what keeps it there).
  return (opts.pretty ? JSON.stringify(plain, null, 4) : JSON.stringify(plain)) ?? "null";
}
