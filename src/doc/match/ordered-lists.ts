/**
 * The expression operators that order or cut a list, as MongoDB computes them: `$sortArray`,
 * `$minN`, `$maxN`, `$firstN`, `$lastN` and `$reverseArray`.
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
      const key = (options as { local?: { groupId?: unknown } }).local?.groupId;
      const n = countOf(op, evalExpr(key as never, args.n as never, options));
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

/** The members of `list` that are values (neither null nor missing), in MongoDB's order. */
function valuesInOrder(list: unknown[], direction: 1 | -1): unknown[] {
  const values = list.filter((v) => v !== null && v !== undefined);
  return sorted(values, (a, b) => direction * compareValues(a, b));
}

/** `sortBy` of `$sortArray`: 1 or -1 (whole values), or a sort specification's fields. */
function sortOrder(sortBy: unknown): 1 | -1 | SortField[] {
  const direction = (value: unknown): 1 | -1 | undefined => {
    const n = numberValue(value);
    return n === 1 || n === -1 ? n : undefined;
  };
  const whole = direction(sortBy);
  if (whole !== undefined) return whole;
  if (!isPlainObject(sortBy) || Object.keys(sortBy).length === 0) {
    throw new Error("$sortArray: 'sortBy' must be 1, -1 or a sort specification");
  }
  return Object.entries(sortBy).map(([path, value]) => {
    const dir = direction(value);
    if (path === "" || path.startsWith("$") || path.split(".").includes("")) {
      throw new Error(`$sortArray: '${path}' cannot be sorted on`);
    }
    if (dir === undefined) throw new Error(`$sortArray: '${path}' must be sorted by 1 or -1`);
    return { parts: path.split("."), dir };
  });
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
  // A member that is not a document has none of the fields: its keys are missing.
  const keyed = input.map((member) => ({
    member,
    keys: sortKeys(isPlainObject(member) ? member : {}, order),
  }));
  return sorted(keyed, (x, y) => compareKeys(x.keys, y.keys, order)).map((k) => k.member);
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

/** The operators of this module, by name. */
export const orderedListExpressions: Record<string, AnyFn> = {
  $sortArray,
  $reverseArray,
  $firstN: nOperator("$firstN", (list, n) => list.slice(0, n)),
  $lastN: nOperator("$lastN", (list, n) => list.slice(Math.max(0, list.length - n))),
  $minN: nOperator("$minN", (list, n) => valuesInOrder(list, 1).slice(0, n)),
  $maxN: nOperator("$maxN", (list, n) => valuesInOrder(list, -1).slice(0, n)),
};
