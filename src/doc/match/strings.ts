/**
 * String operators as MongoDB computes them: `$indexOfBytes` (UTF-8 bytes), `$indexOfCP`
 * (code points), `$strcasecmp` (numbers and dates as their text, ASCII letters folded only),
 * `$replaceOne` and `$replaceAll` (an empty `find` matches before every character and at the
 * end; an operand of the wrong type is an error even beside a null one), `$substr`/`$substrBytes`
 * (cut to the text's end, a negative length to the end) and `$substrCP`.
 *
 * mingo's counted `$indexOfBytes` in UTF-16 units (`"a∫∫b"` has its `b` at byte 7, not 3),
 * had no `$indexOfCP`, refused a number or a date in `$strcasecmp` and folded every letter's
 * case (`ó` and `Ó` are not equal there), replaced nothing for an empty `find`, refused a
 * `$substrBytes` past the end of the text and a number as its text, and took a negative
 * `$substrCP` position.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $project: { _id: 0, i: { $indexOfBytes: ["$s", "b"] } } }], engineOptions())
 *   .run([{ s: "a∫∫b" }]); // [{ i: 7 }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import * as expressionOperators from "mingo/operators/expression";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { bsonType, isNumeric, numberValue } from "./numbers.ts";
import { checkKeys, listOperands } from "./arguments.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

/** A start or end position: a whole number of 0 or more. */
function position(op: string, value: unknown): number {
  const n = numberValue(value);
  if (n === undefined || !Number.isInteger(n) || n < 0) {
    throw new Error(`${op}: a position must be a whole number of 0 or more`);
  }
  return n;
}

/** The UTF-8 bytes of the code point starting at `text[i]`. */
function bytesAt(text: string, i: number): number {
  const c = text.codePointAt(i)!;
  return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
}

/** The code units of the code point starting at `text[i]`. */
const unitsAt = (text: string, i: number) => text.codePointAt(i)! > 0xffff ? 2 : 1;

/**
 * `$indexOfBytes` or `$indexOfCP`: `[string, substring, start?, end?]`, positions counted in
 * UTF-8 bytes or in code points (`size` gives a character's); -1 when not found. The search is
 * the runtime's own (linear in practice); positions are converted in one walk of the text.
 */
function indexOf(op: string, size: (text: string, i: number) => number): AnyFn {
  return (obj: Doc, expr: unknown, options: Options) => {
    const [text, sub, start, end] = listOperands(op, { obj, expr, options }, { min: 2, max: 4 });
    if (text === null || text === undefined) return null;
    if (typeof text !== "string") throw new Error(`${op} needs a string to search`);
    if (typeof sub !== "string") throw new Error(`${op} needs a string to find`);
    const from = start === undefined ? 0 : position(op, start);
    const to = end === undefined ? Infinity : position(op, end);
    // Walk to the first character at or after `from` (a match cannot start inside one).
    let i = 0;
    let at = 0;
    while (i < text.length && at < from) {
      at += size(text, i);
      i += unitsAt(text, i);
    }
    if (at < from) return -1;
    const found = text.indexOf(sub, i);
    if (found < 0) return -1;
    while (i < found) {
      at += size(text, i);
      i += unitsAt(text, i);
    }
    let length = 0;
    for (let j = 0; j < sub.length; j += unitsAt(sub, j)) length += size(sub, j);
    return at + length <= to ? at : -1;
  };
}

/** A `$strcasecmp` operand as text: null or missing is `""`, a number or date its text. */
function textOf(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (isNumeric(value)) return String(value);
  if (value instanceof Date) return value.toISOString();
  if (bsonType(value) === "Timestamp") return String(value);
  throw new Error("$strcasecmp needs strings, numbers or dates");
}

/** `$strcasecmp`: -1, 0 or 1, comparing code points with ASCII letters folded only. */
function $strcasecmp(obj: Doc, expr: unknown, options: Options): number {
  const [a, b] = listOperands("$strcasecmp", { obj, expr, options }, { min: 2, max: 2 }).map((v) =>
    textOf(v).replace(/[A-Z]+/g, (s) => s.toLowerCase())
  );
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return Math.sign(x.length - y.length);
}

/** `$replaceOne` or `$replaceAll: {input, find, replacement}`. */
function replace(op: "$replaceOne" | "$replaceAll"): AnyFn {
  return (obj: Doc, expr: unknown, options: Options) => {
    const keys = ["input", "find", "replacement"];
    const args = checkKeys(op, expr, keys, keys);
    const values = keys.map((key) => evalExpr(obj as never, args[key] as never, options));
    // The type of every operand is checked before a null one gives null, as in MongoDB.
    for (const v of values) {
      if (v !== null && v !== undefined && typeof v !== "string") {
        throw new Error(`${op} needs strings`);
      }
    }
    if (values.some((v) => v === null || v === undefined)) return null;
    const [input, find, replacement] = values as string[];
    if (find !== "") {
      return op === "$replaceAll"
        ? input.split(find).join(replacement)
        : input.replace(find, () => replacement);
    }
    // An empty string is found before every character and at the end.
    if (op === "$replaceOne") return replacement + input;
    return Array.from(input, (c) => replacement + c).join("") + replacement;
  };
}

/** A substring operator's text: a string, null or missing as `""`, a number or date as text. */
function substringText(op: string, value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (isNumeric(value)) return String(value);
  if (value instanceof Date) return value.toISOString();
  if (bsonType(value) === "Timestamp") return String(value);
  throw new Error(`${op} needs a string, a number or a date`);
}

/** A substring operator's position or length: a number of any type (a fraction dropped). */
function wholeArgument(op: string, value: unknown): number {
  const n = typeof value === "boolean" ? undefined : numberValue(value);
  if (n === undefined || Number.isNaN(n)) throw new Error(`${op} needs numeric positions`);
  return Math.trunc(n);
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/**
 * `$substrBytes` (and `$substr`): `[text, start, length]` in UTF-8 bytes; a negative length
 * runs to the end, a start or length past the end is cut to it; a start or end inside a
 * character is refused.
 */
function substrBytes(op: string): AnyFn {
  return (obj: Doc, expr: unknown, options: Options) => {
    const [text, start, length] = listOperands(op, { obj, expr, options }, { min: 3, max: 3 });
    const bytes = utf8.encode(substringText(op, text));
    const from = wholeArgument(op, start);
    const count = wholeArgument(op, length);
    if (from < 0) throw new Error(`${op}: the start must not be negative`);
    if (from >= bytes.length) return "";
    const to = count < 0 ? bytes.length : Math.min(bytes.length, from + count);
    // A UTF-8 continuation byte (10xxxxxx) is inside a character.
    const inside = (i: number) => i < bytes.length && (bytes[i] & 0xc0) === 0x80;
    if (inside(from) || inside(to)) {
      throw new Error(`${op}: the range starts or ends inside a UTF-8 character`);
    }
    return fromUtf8.decode(bytes.subarray(from, to));
  };
}

/** `$substrCP`: `[text, start, count]` in code points, both whole and not negative. */
function $substrCP(obj: Doc, expr: unknown, options: Options): string {
  const op = "$substrCP";
  const [text, start, count] = listOperands(op, { obj, expr, options }, { min: 3, max: 3 });
  const points = Array.from(substringText(op, text));
  const [from, n] = [start, count].map((v) => {
    const value = numberValue(v);
    if (value === undefined || !Number.isInteger(value) || value < 0 || value >= 2 ** 31) {
      throw new Error(`${op}: the start and the count must be 32-bit whole numbers of 0 or more`);
    }
    return value;
  });
  return points.slice(from, from + n).join("");
}

/** `$trim`, `$ltrim` or `$rtrim`: a document of `input` and `chars` (checked), then mingo's. */
function trim(op: string): AnyFn {
  const mingo = (expressionOperators as unknown as Record<string, AnyFn>)[op];
  return (obj: Doc, expr: unknown, options: Options) => {
    return mingo(obj, checkKeys(op, expr, ["input", "chars"], ["input"]), options);
  };
}

/** The operators of this module, by name. */
export const stringExpressions: Record<string, AnyFn> = {
  $substr: substrBytes("$substr"),
  $substrBytes: substrBytes("$substrBytes"),
  $substrCP,
  $trim: trim("$trim"),
  $ltrim: trim("$ltrim"),
  $rtrim: trim("$rtrim"),
  $indexOfBytes: indexOf("$indexOfBytes", bytesAt),
  $indexOfCP: indexOf("$indexOfCP", () => 1),
  $strcasecmp,
  $replaceOne: replace("$replaceOne"),
  $replaceAll: replace("$replaceAll"),
};
