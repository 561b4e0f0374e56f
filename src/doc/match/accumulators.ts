/**
 * The engine's sums, averages, extremes and arithmetic as MongoDB computes them, over numbers
 * of every BSON type: `$sum`, `$avg`, `$min` and `$max` (as `$group` accumulators and as
 * expressions) and `$add`, `$subtract`, `$multiply` and `$divide`. A `Decimal128` among the
 * values makes an exact decimal result (decimal.ts: `0.10 + 0.20` is `0.30`); `Long`, `Int32`
 * and `Double` values count by their value. `$min` and `$max` pick in MongoDB's order of types
 * and values and skip null and missing values.
 *
 * mingo's own skipped every BSON number (a `$sum` of decimals was 0, their `$avg` null, its
 * `$add` of one refused) and ordered them as opaque objects; its `$sum` and `$avg` expressions
 * took only a list.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { Decimal128 } from "mongodb";
 * import { engineOptions } from "./engine.ts";
 *
 * const docs = [{ p: Decimal128.fromString("0.10") }, { p: Decimal128.fromString("0.20") }];
 * new Aggregator([{ $group: { _id: null, s: { $sum: "$p" } } }], engineOptions()).run(docs);
 * // [{ _id: null, s: Decimal128("0.30") }]
 * ```
 */
import * as accumulatorOperators from "mingo/operators/accumulator";
import * as expressionOperators from "mingo/operators/expression";
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { compareValues } from "./compare.ts";
import { decimalAverage, decimalProduct, decimalQuotient, decimalSum } from "./decimal.ts";
import { bsonType, isBsonNumber, isNumeric, valueOf } from "./numbers.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const push = (accumulatorOperators as unknown as Record<string, AnyFn>).$push;

/** The sum of the numbers among `values` (others skipped): decimal when one is. */
function sumOf(values: unknown[]): unknown {
  const numbers = values.filter(isNumeric);
  if (numbers.some((v) => bsonType(v) === "Decimal128")) return decimalSum(numbers);
  let sum = 0;
  for (const n of numbers) sum += valueOf(n);
  return sum;
}

/** The mean of the numbers among `values` (others skipped), null when there are none. */
function averageOf(values: unknown[]): unknown {
  const numbers = values.filter(isNumeric);
  if (numbers.length === 0) return null;
  if (numbers.some((v) => bsonType(v) === "Decimal128")) return decimalAverage(numbers);
  let sum = 0;
  for (const n of numbers) sum += valueOf(n);
  return sum / numbers.length;
}

/** The least (`sign` -1) or greatest (1) of `values` in MongoDB's order; null and missing skipped. */
function extremeOf(values: unknown[], sign: 1 | -1): unknown {
  let best: unknown = undefined;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (best === undefined || compareValues(v, best) * sign > 0) best = v;
  }
  return best === undefined ? null : best;
}

/**
 * The values an expression operator works on: a list of expressions, each one value; one
 * expression, its value, or the members of the list it gives (MongoDB's reading of `$sum` and
 * `$avg` with one operand).
 */
function operands(obj: Doc, expr: unknown, options: Options): unknown[] {
  if (Array.isArray(expr)) return expr.map((e) => evalExpr(obj as never, e as never, options));
  const value = evalExpr(obj as never, expr as never, options);
  return Array.isArray(value) ? value : [value];
}

/** `$group` accumulators computed as MongoDB computes them (see the module doc). */
export const numericAccumulators: Record<string, AnyFn> = {
  $sum: (coll: Doc[], expr: unknown, options: Options) =>
    typeof expr === "number" ? coll.length * expr : sumOf(push(coll, expr, options)),
  $avg: (coll: Doc[], expr: unknown, options: Options) => averageOf(push(coll, expr, options)),
  $min: (coll: Doc[], expr: unknown, options: Options) => extremeOf(push(coll, expr, options), -1),
  $max: (coll: Doc[], expr: unknown, options: Options) => extremeOf(push(coll, expr, options), 1),
};

/**
 * `$sum`, `$avg`, `$min` and `$max` expressions computed as MongoDB computes them (see the
 * module doc). mingo
 * looks an operator up among the expressions first, in a `$group` too (with the group's
 * documents for a document): there they are the accumulators.
 */
export const numericExpressions: Record<string, AnyFn> = {
  $sum: (obj: Doc | Doc[], expr: unknown, options: Options) =>
    Array.isArray(obj)
      ? numericAccumulators.$sum(obj, expr, options)
      : sumOf(operands(obj, expr, options)),
  $avg: (obj: Doc | Doc[], expr: unknown, options: Options) =>
    Array.isArray(obj)
      ? numericAccumulators.$avg(obj, expr, options)
      : averageOf(operands(obj, expr, options)),
  $min: (obj: Doc | Doc[], expr: unknown, options: Options) =>
    Array.isArray(obj)
      ? numericAccumulators.$min(obj, expr, options)
      : extremeOf(operands(obj, expr, options), -1),
  $max: (obj: Doc | Doc[], expr: unknown, options: Options) =>
    Array.isArray(obj)
      ? numericAccumulators.$max(obj, expr, options)
      : extremeOf(operands(obj, expr, options), 1),
};

const EXPRESSIONS = expressionOperators as unknown as Record<string, AnyFn>;

/** Whether a number of a BSON type is among `values`. */
const holdsBsonNumber = (values: unknown[]) => values.some(isBsonNumber);

/** Whether every one of `values` is a number of any type. */
const allNumbers = (values: unknown[]) => values.every(isNumeric);

/**
 * An arithmetic expression (`$add`, `$subtract`, `$multiply`, `$divide`) that computes with
 * BSON numbers as MongoDB does (a `Decimal128` operand makes a decimal result) and leaves any
 * other operands (plain numbers, dates, null) to mingo's.
 */
function arithmetic(op: string, compute: (values: unknown[]) => unknown): AnyFn {
  const mingo = EXPRESSIONS[op];
  return (obj: Doc, expr: unknown, options: Options) => {
    if (Array.isArray(expr)) {
      const values = expr.map((e) => evalExpr(obj as never, e as never, options));
      if (holdsBsonNumber(values) && allNumbers(values)) return compute(values);
    }
    return mingo(obj, expr, options);
  };
}

const hasDecimal = (values: unknown[]) => values.some((v) => bsonType(v) === "Decimal128");

/** Arithmetic expressions over BSON numbers (see {@link arithmetic}). */
export const arithmeticExpressions: Record<string, AnyFn> = {
  $add: arithmetic(
    "$add",
    (values) =>
      hasDecimal(values) ? decimalSum(values) : values.reduce((s: number, v) => s + valueOf(v), 0),
  ),
  $multiply: arithmetic(
    "$multiply",
    (values) =>
      hasDecimal(values)
        ? decimalProduct(values)
        : values.reduce((p: number, v) => p * valueOf(v), 1),
  ),
  $subtract: arithmetic(
    "$subtract",
    ([a, b]) =>
      hasDecimal([a, b]) ? decimalSum([a, decimalProduct([b, -1])]) : valueOf(a) - valueOf(b),
  ),
  $divide: arithmetic("$divide", ([a, b]) => {
    if (valueOf(b) === 0) throw new Error("$divide: can't divide by zero");
    return hasDecimal([a, b]) ? decimalQuotient(a, b) : valueOf(a) / valueOf(b);
  }),
};
