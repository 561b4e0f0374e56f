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

/**
 * The matches of a `$regex*` operator whose argument `expr` is evaluated on `obj` (the first
 * only unless `global`).
 */
function search(obj: unknown, expr: unknown, { options, global }: SearchOptions): Found[] {
  const val = evalExpr(obj as never, expr as never, options) as {
    input?: unknown;
    regex?: unknown;
    options?: unknown;
  };
  if (typeof val?.input !== "string") return [];
  const isRe = val.regex instanceof RegExp;
  const source = isRe ? (val.regex as RegExp).source : String(val.regex);
  const flags = typeof val.options === "string"
    ? val.options
    : isRe
    ? (val.regex as RegExp).flags.replace(/[gy]/g, "")
    : "";
  const matcher = compileLinear(source, flags).matcher(val.input);
  const out: Found[] = [];
  while (matcher.find()) {
    const captures: (string | null)[] = [];
    for (let i = 1; i <= matcher.groupCount(); i++) captures.push(matcher.group(i) ?? null);
    out.push({ match: matcher.group(0) ?? "", idx: matcher.start(), captures });
    if (!global) break;
  }
  return out;
}

/** Query operators that replace mingo's. */
export const linearQueryOperators: Record<string, AnyFn> = { $regex };

/** Expression operators that replace mingo's. */
export const linearExpressionOperators: Record<string, AnyFn> = {
  $regexMatch: (obj: unknown, expr: unknown, options: Options) =>
    search(obj, expr, { options, global: false }).length > 0,
  $regexFind: (obj: unknown, expr: unknown, options: Options) =>
    search(obj, expr, { options, global: false })[0] ?? null,
  $regexFindAll: (obj: unknown, expr: unknown, options: Options) =>
    search(obj, expr, { options, global: true }),
};
