/**
 * mingo's regular-expression operators, re-bound to the linear-time engine
 * (../regex.ts): `$regex` in queries and `$regexMatch`/`$regexFind`/`$regexFindAll` in
 * expressions never run a backtracking `RegExp` on stored data.
 */
import { evalExpr } from "mingo/core";
import * as queryOperators from "mingo/operators/query";
import type { Options } from "mingo/types";
import { compileLinear, LinearRegExp } from "../regex.ts";
import type { Doc } from "../types.ts";
import { reaching } from "./comparisons.ts";
import { checkKeys } from "./arguments.ts";

// deno-lint-ignore no-explicit-any
type AnyFn = (...args: any[]) => any;

/**
 * `$regex` with the pattern compiled by the linear-time engine. As MongoDB, a flag other than
 * `i`, `m`, `s` and `u` (`g` from `$options` or a pattern) and a pattern holding a NUL
 * character are refused.
 */
const $regex: AnyFn = (selector: string, value: unknown, options: Options) => {
  const source = value instanceof RegExp ? value.source : String(value);
  const flags = value instanceof RegExp ? value.flags : "";
  const refused = flags.replace(/[imsu]/g, "");
  if (refused) throw new Error(`$regex: invalid flag in regex options: ${refused[0]}`);
  if (source.includes("\0")) throw new Error("$regex: a pattern cannot hold a NUL character");
  const linear = new LinearRegExp(source, flags);
  const matches = (queryOperators.$regex as AnyFn)(selector, linear, options) as Matcher;
  // As MongoDB, a stored pattern equal to this one (source and flags) matches too.
  const same = (v: unknown) => {
    const stored = patternOf(v);
    return stored !== null && stored.source === source &&
      sortedFlags(stored.flags) === sortedFlags(flags);
  };
  const stored = reaching(selector, (v) => same(v) || (Array.isArray(v) && v.some(same)));
  return (obj: Doc) => matches(obj) || stored(obj);
};

type Matcher = (obj: Doc) => boolean;

/** The source and flags of a stored pattern (a `RegExp` or a BSON one); null for others. */
function patternOf(v: unknown): { source: string; flags: string } | null {
  if (v instanceof RegExp) return v;
  if (v === null || typeof v !== "object") return null;
  const bson = v as { _bsontype?: string; pattern?: string; options?: string };
  return bson._bsontype === "BSONRegExp"
    ? { source: bson.pattern ?? "", flags: bson.options ?? "" }
    : null;
}

/** A regex's flags in one order (`u` implied, as MongoDB patterns are Unicode). */
const sortedFlags = (flags: string) => [...flags.replace(/u/g, "")].sort().join("");

interface Found {
  match: string;
  idx: number;
  captures: (string | null)[];
}

/** How one search runs: mingo's evaluation options, and whether it finds every match. */
interface SearchOptions {
  options: Options;
  global: boolean;
}

const REGEX_ARGUMENTS = ["input", "regex", "options"];

/**
 * A pattern with extended syntax (`x`) taken out, as PCRE reads it: whitespace and `#`
 * comments outside character classes dropped, escaped ones kept.
 */
function extended(source: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      out += c + (source[++i] ?? "");
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      out += c;
      continue;
    }
    if (c === "[") inClass = true;
    else if (/\s/.test(c)) continue;
    else if (c === "#") {
      while (i < source.length && source[i] !== "\n") i++;
      continue;
    }
    out += c;
  }
  return out;
}

/**
 * A pattern's leading `(*UTF8)` or `(*UTF)`: patterns are Unicode here already. (`(*UCP)`,
 * which widens `\d` and the POSIX classes to every script, is refused as unsupported.)
 */
const VERBS = /^(?:\(\*UTF8?\))+/;

/**
 * The matches of a `$regex*` operator whose argument `expr` is evaluated on `obj` (the first
 * only unless `global`), its arguments checked as MongoDB checks them: a document of `input`,
 * `regex` and `options`; a string input (none when null or missing); a pattern as text or a
 * regex (none when null or missing), valid even when there is no input, without a NUL
 * character; options of `i`, `m`, `s`, `x` and `u`, given once (in the regex or in
 * `options`). Positions count code points; an empty match at the end of a non-empty input is
 * not one, as in MongoDB.
 */
function search(
  obj: unknown,
  expr: unknown,
  { options, global, op }: SearchOptions & { op: string },
): Found[] {
  const val = checkKeys(op, evalExpr(obj as never, expr as never, options), REGEX_ARGUMENTS, []);
  const { input, regex, options: given } = val;
  if (input !== null && input !== undefined && typeof input !== "string") {
    throw new Error(`${op} needs a string input`);
  }
  const pattern = patternOf(regex);
  if (regex !== null && regex !== undefined && typeof regex !== "string" && pattern === null) {
    throw new Error(`${op} needs a pattern as text or a regex`);
  }
  if (given !== null && given !== undefined && typeof given !== "string") {
    throw new Error(`${op} needs its options as text`);
  }
  if (regex === null || regex === undefined) return [];
  let source = pattern ? pattern.source : regex as string;
  const ownFlags = pattern ? pattern.flags.replace(/[gyu]/g, "") : "";
  if (ownFlags && given) throw new Error(`${op}: options given in the regex and in 'options'`);
  let flags = (given as string | undefined) ?? ownFlags;
  if (/[^imsxu]/.test(flags)) throw new Error(`${op}: invalid regex option in '${flags}'`);
  if (source.includes("\0")) throw new Error(`${op}: a pattern cannot hold a NUL character`);
  if (flags.includes("x")) {
    source = extended(source);
    flags = flags.replace(/x/g, "");
  }
  const compiled = compileLinear(source.replace(VERBS, ""), flags);
  if (typeof input !== "string") return [];
  const matcher = compiled.matcher(input);
  // Positions count code points: a character beyond the BMP is one, not two.
  const wide = /[\uD800-\uDFFF]/.test(input);
  // The code points before the last match, and its code unit: counted on from there.
  let unit = 0;
  let points = 0;
  const out: Found[] = [];
  while (matcher.find()) {
    const start = matcher.start();
    const match = matcher.group(0) ?? "";
    if (match === "" && start === input.length && input.length > 0) break;
    const captures: (string | null)[] = [];
    for (let i = 1; i <= matcher.groupCount(); i++) captures.push(matcher.group(i) ?? null);
    if (wide) {
      for (; unit < start; points++) unit += input.codePointAt(unit)! > 0xffff ? 2 : 1;
    }
    out.push({ match, idx: wide ? points : start, captures });
    if (!global) break;
  }
  return out;
}

/** Query operators that replace mingo's. */
export const linearQueryOperators: Record<string, AnyFn> = { $regex };

/** Expression operators that replace mingo's. */
export const linearExpressionOperators: Record<string, AnyFn> = {
  $regexMatch: (obj: unknown, expr: unknown, options: Options) =>
    search(obj, expr, { options, global: false, op: "$regexMatch" }).length > 0,
  $regexFind: (obj: unknown, expr: unknown, options: Options) =>
    search(obj, expr, { options, global: false, op: "$regexFind" })[0] ?? null,
  $regexFindAll: (obj: unknown, expr: unknown, options: Options) =>
    search(obj, expr, { options, global: true, op: "$regexFindAll" }),
};
