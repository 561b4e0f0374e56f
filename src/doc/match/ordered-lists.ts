/**
 * The expression operators that order or cut a list, as MongoDB computes them: `$sortArray`,
 * `$minN`, `$maxN`, `$firstN`, `$lastN` and `$reverseArray`; and the accumulators that pick
 * documents by a sort, `$top`, `$bottom`, `$topN` and `$bottomN`.
 *
 * What mingo did otherwise: `$sortArray` and `$minN`/`$maxN` ranked lists below numbers
 * (MongoDB's order puts them after documents), `$sortArray` took any `sortBy` and unknown
 * arguments, the n-operators gave null for a missing list and took unknown arguments, and
 * `$reverseArray: [[1, 2]]` gave `[[1, 2]]` (its operand list holds one list, `[1, 2]`).
 * In a `$group`, `$minN` and `$maxN` order the group's values the same way (mingo's put lists
 * first there too).
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $project: { _id: 0, s: { $sortArray: { input: "$a", sortBy: 1 } } } }],
 *   engineOptions()).run([{ a: [[0], "x", 2] }]); // [{ s: [2, "x", [0]] }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import * as accumulatorOperators from "mingo/operators/accumulator";
import type { Options } from "mingo/types";
import { isPlainObject } from "../../util/plain.ts";
import type { Doc } from "../types.ts";
import { checkKeys, listOperands } from "./arguments.ts";
import { typeName } from "./type-operator.ts";
import { compareKeys, compareValues, type SortField, sortKeys } from "./compare.ts";
import { numberValue } from "./numbers.ts";
import { computation } from "./computation.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const PUSH = (accumulatorOperators as unknown as Record<string, AnyFn>).$push;

/** `list` sorted (a copy, stable) by `compare`. */
function sorted<T>(list: readonly T[], compare: (a: T, b: T) => number): T[] {
  return list.slice().sort(compare);
}

/** `n` of an n-operator: a whole number above 0, of any numeric type. */
function countOf(op: string, raw: unknown): number {
  const n = numberValue(raw);
  if (n === undefined || !Number.isInteger(n)) {
    throw new Error(`${op}: 'n' must be a whole number, not ${typeName(raw)}`);
  }
  if (n <= 0) throw new Error(`${op}: 'n' must be greater than 0`);
  return n;
}

/**
 * An n-operator: as an expression, of the list `input` evaluates to (which must be a list);
 * in a `$group` (mingo hands it the group's documents), of the values `input` takes over them,
 * `n` evaluated against the group's key.
 */
function nOperator(op: string, pick: (list: unknown[], n: number) => unknown[]): AnyFn {
  return (obj: Doc | Doc[], expr: unknown, options: Options) => {
    const args = checkKeys(op, expr, ["n", "input"], ["n", "input"]);
    if (Array.isArray(obj)) {
      const n = countOf(op, groupKeyValue(args.n, options));
      // mingo's $push evaluates `input` against each document as its root (missing: null).
      return pick(PUSH(obj, args.input, options), n);
    }
    const n = countOf(op, evalExpr(obj as never, args.n as never, options));
    const input = evalExpr(obj as never, args.input as never, options);
    if (!Array.isArray(input)) {
      throw new Error(`${op}: 'input' must be a list, not ${typeName(input)}`);
    }
    return pick(input, n);
  };
}

/** `expr` (an n-accumulator's `n`) evaluated in a `$group` with the group's key as its root. */
function groupKeyValue(expr: unknown, options: Options): unknown {
  const key = (options as { local?: { groupId?: unknown } }).local?.groupId;
  return evalExpr(key as never, expr as never, computation(options).update({ root: key }));
}

/** The members of `list` that are values (neither null nor missing), in MongoDB's order. */
function valuesInOrder(list: unknown[], direction: 1 | -1): unknown[] {
  const values = list.filter((v) => v !== null && v !== undefined);
  return sorted(values, (a, b) => direction * compareValues(a, b));
}

/** 1 or -1 of any numeric type; else undefined. */
function direction(value: unknown): 1 | -1 | undefined {
  const n = numberValue(value);
  return n === 1 || n === -1 ? n : undefined;
}

/** A sort specification's fields (`{a: 1, "b.c": -1}`), checked for `op`. */
function sortFields(op: string, sortBy: unknown): SortField[] {
  if (!isPlainObject(sortBy) || Object.keys(sortBy).length === 0) {
    throw new Error(`${op}: 'sortBy' must be a sort specification`);
  }
  return Object.entries(sortBy).map(([path, value]) => {
    const dir = direction(value);
    if (path === "" || path.startsWith("$") || path.split(".").includes("")) {
      throw new Error(`${op}: '${path}' cannot be sorted on`);
    }
    if (dir === undefined) throw new Error(`${op}: '${path}' must be sorted by 1 or -1`);
    return { parts: path.split("."), dir };
  });
}

/** `sortBy` of `$sortArray`: 1 or -1 (whole values), or a sort specification's fields. */
function sortOrder(sortBy: unknown): 1 | -1 | SortField[] {
  const whole = direction(sortBy);
  if (whole !== undefined) return whole;
  if (!isPlainObject(sortBy)) {
    throw new Error("$sortArray: 'sortBy' must be 1, -1 or a sort specification");
  }
  return sortFields("$sortArray", sortBy);
}

/** `docs` in the order of `order`, stably; a member that is not a document has no fields. */
function inSortOrder(docs: readonly unknown[], order: SortField[]): unknown[] {
  const keyed = docs.map((member) => ({
    member,
    keys: sortKeys(isPlainObject(member) ? member : {}, order),
  }));
  return sorted(keyed, (x, y) => compareKeys(x.keys, y.keys, order)).map((k) => k.member);
}

/** `$sortArray: {input, sortBy}`: the list sorted; null for a null or missing list. */
function $sortArray(obj: Doc, expr: unknown, options: Options): unknown {
  const args = checkKeys("$sortArray", expr, ["input", "sortBy"], ["input", "sortBy"]);
  const order = sortOrder(args.sortBy);
  const input = evalExpr(obj as never, args.input as never, options);
  if (input === null || input === undefined) return null;
  if (!Array.isArray(input)) {
    throw new Error(`$sortArray: 'input' must be a list, not ${typeName(input)}`);
  }
  if (typeof order === "number") return sorted(input, (a, b) => order * compareValues(a, b));
  return inSortOrder(input, order);
}

/** `$reverseArray`: the list reversed; null for null or missing. */
function $reverseArray(obj: Doc, expr: unknown, options: Options): unknown {
  const call = { obj, expr, options };
  const list = listOperands("$reverseArray", call, { min: 1, lone: true })[0];
  if (list === null || list === undefined) return null;
  if (!Array.isArray(list)) {
    throw new Error(`$reverseArray: the operand must be a list, not ${typeName(list)}`);
  }
  return list.slice().reverse();
}

/**
 * `$top`, `$bottom`, `$topN` and `$bottomN` (in `$group` and in windows): the `output` of
 * the first or last `n` documents in the order of `sortBy` (a sort specification; documents
 * ordered as `$sort` orders them), a missing output as null; `$top` and `$bottom` give the one
 * output itself, not a list of it. mingo's wrapped that one in a list and ordered as its own
 * `$sort`.
 */
function topOrBottom(op: string, end: "top" | "bottom", single: boolean): AnyFn {
  const fields = single ? ["sortBy", "output"] : ["n", "sortBy", "output"];
  return (docs: Doc[], expr: unknown, options: Options) => {
    const args = checkKeys(op, expr, fields, fields);
    const order = sortFields(op, args.sortBy);
    const n = single ? 1 : countOf(op, groupKeyValue(args.n, options));
    const ordered = inSortOrder(docs, order);
    const picked = end === "top"
      ? ordered.slice(0, n)
      : ordered.slice(Math.max(0, ordered.length - n));
    const at = computation(options);
    const outputs = picked.map((doc) =>
      evalExpr(doc as never, args.output as never, at.update({ root: doc })) ?? null
    );
    return single ? outputs[0] ?? null : outputs;
  };
}

/** The accumulators of this module, by name. */
export const orderedListAccumulators: Record<string, AnyFn> = {
  $top: topOrBottom("$top", "top", true),
  $bottom: topOrBottom("$bottom", "bottom", true),
  $topN: topOrBottom("$topN", "top", false),
  $bottomN: topOrBottom("$bottomN", "bottom", false),
};

/** The operators of this module, by name. */
export const orderedListExpressions: Record<string, AnyFn> = {
  $sortArray,
  $reverseArray,
  $firstN: nOperator("$firstN", (list, n) => list.slice(0, n)),
  $lastN: nOperator("$lastN", (list, n) => list.slice(Math.max(0, list.length - n))),
  $minN: nOperator("$minN", (list, n) => valuesInOrder(list, 1).slice(0, n)),
  $maxN: nOperator("$maxN", (list, n) => valuesInOrder(list, -1).slice(0, n)),
};
