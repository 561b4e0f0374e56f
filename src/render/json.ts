/**
 * JSON rendering of response bodies (BSON-aware); JSONP wrapping is `http/jsonp.ts`.
 */
import { type DateFormatter, RenderedJson, toPlain } from "./convert.ts";

export { RenderedJson };

/**
 * Marks a body (a plain object) some of whose members are {@link RenderedJson}, or arrays of
 * them: compact rendering writes their texts as they are (see {@link renderJson}).
 */
export const HOLDS_RENDERED: unique symbol = Symbol("holds rendered JSON");

/** The compact JSON text `renderJson` makes of `value` (undefined: `null`). */
export function jsonText(value: unknown, formatDate: DateFormatter): string {
  return JSON.stringify(toPlain(value, formatDate)) ?? "null";
}

/** Options of {@link renderJson}. */
export interface RenderOptions {
  /** Indent with 4 spaces (the `pretty` query flag). */
  pretty: boolean;
  /** Formats dates (DATE_FORMAT). */
  formatDate: DateFormatter;
  /**
   * JSON_SORT_KEYS: render as Eve does with it on: keys sorted at every level, `, ` and
   * `: ` between items, non-ASCII characters escaped.
   */
  sortKeys?: boolean;
}

/** Renders a body as JSON: ObjectId as hex, dates formatted, Decimal128 as a string. */
export function renderJson(body: unknown, opts: RenderOptions): string {
  if (!opts.pretty && !opts.sortKeys) {
    if (body instanceof RenderedJson) return body.text;
    if (
      body !== null && typeof body === "object" &&
      (body as { [HOLDS_RENDERED]?: boolean })[HOLDS_RENDERED] === true
    ) return withRendered(body as Record<string, unknown>, opts.formatDate);
  }
  // Any other rendering reads a rendered text as the data it stands for (see convert.ts).
  const plain = toPlain(body, opts.formatDate);
  if (opts.sortKeys) {
    return opts.pretty ? JSON.stringify(sortedCopy(plain), null, 4) : sortedText(plain);
  }
  // No replacer or indent argument (not even `null, undefined`): V8 then serializes plain data
  // on its fast path (see flatConcat for what keeps it there).
  return (opts.pretty ? JSON.stringify(plain, null, 4) : JSON.stringify(plain)) ?? "null";
}

/**
 * The compact text of `body`, a plain object marked {@link HOLDS_RENDERED}: what
 * `JSON.stringify(toPlain(body))` makes of it, member by member in the same order, with the
 * texts of its {@link RenderedJson} members (alone or in arrays) written as they are.
 */
function withRendered(body: Record<string, unknown>, formatDate: DateFormatter): string {
  // One join of every piece: one string allocated for the whole text.
  const parts: string[] = ["{"];
  for (const key of Object.keys(body)) {
    const member = body[key];
    const start = parts.length;
    if (start > 1) parts.push(",");
    parts.push(JSON.stringify(key), ":");
    if (member instanceof RenderedJson) parts.push(member.text);
    else if (Array.isArray(member) && member.some((m) => m instanceof RenderedJson)) {
      parts.push("[");
      for (let i = 0; i < member.length; i++) {
        if (i > 0) parts.push(",");
        const item = member[i];
        parts.push(item instanceof RenderedJson ? item.text : jsonText(item, formatDate));
      }
      parts.push("]");
    } else {
      const text = JSON.stringify(toPlain(member, formatDate));
      // Members JSON drops (undefined, functions) are dropped here too.
      if (text === undefined) parts.length = start;
      else parts.push(text);
    }
  }
  parts.push("}");
  return parts.join("");
}

/** A copy of plain JSON data with every object's keys in sorted order. */
function sortedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedCopy);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source).sort(byCodeUnits)) {
    if (source[key] !== undefined) out[key] = sortedCopy(source[key]);
  }
  return out;
}

/** Python's `json.dumps(data, sort_keys=True)` text of plain JSON data (Eve's rendering). */
function sortedText(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((v) => v === undefined ? "null" : sortedText(v)).join(", ")}]`;
  }
  if (value === null || typeof value !== "object") return asciiJson(JSON.stringify(value));
  const source = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(source).sort(byCodeUnits)) {
    if (source[key] === undefined) continue;
    parts.push(`${asciiJson(JSON.stringify(key))}: ${sortedText(source[key])}`);
  }
  return `{${parts.join(", ")}}`;
}

const byCodeUnits = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0;

/** JSON text with every non-ASCII character as a `\uXXXX` escape (Python's ensure_ascii). */
function asciiJson(text: string): string {
  return text.replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
