/**
 * The comparison expressions (`$cmp`, `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`) as MongoDB
 * computes them: over the whole BSON order (compare.ts), values of different types included,
 * numbers equal across their types (`1`, a `Long` 1 and a `Decimal128` 1.0), documents field by
 * field in order, and a missing value below null (missing is not null, it equals missing).
 *
 * mingo's compared values of different types as a query does (`{$gt: ["$a", null]}` was false
 * for `a: 5`, `{$gt: ["hello", 5]}` false), took a missing value for null, a `Long` 1 for
 * other than 1, and documents with their fields in another order for equal. In `$expr` too,
 * these are the operators, as in MongoDB.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $project: { _id: 0, set: { $gt: ["$a", null] } } }], engineOptions())
 *   .run([{ a: 5 }, {}]); // [{ set: true }, { set: false }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { compareValues } from "./compare.ts";
import { bsonType } from "./numbers.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

/** Two values compared in MongoDB's order for expressions: -1, 0 or 1. */
export function compareExpressionValues(a: unknown, b: unknown): number {
  // Missing sorts below null and above MinKey, and equals missing only.
  if (a === undefined || b === undefined) {
    if (a === b) return 0;
    const other = a === undefined ? b : a;
    const below = bsonType(other) === "MinKey" ? 1 : -1;
    return a === undefined ? below : -below;
  }
  return compareValues(a, b);
}

/** A comparison operator: its two operands compared, the sign of the result judged. */
function comparison(op: string, judge: (c: number) => boolean | number): AnyFn {
  return (obj: Doc, expr: unknown, options: Options) => {
    if (!Array.isArray(expr) || expr.length !== 2) throw new Error(`${op} takes two arguments`);
    const a = evalExpr(obj as never, expr[0] as never, options);
    const b = evalExpr(obj as never, expr[1] as never, options);
    return judge(compareExpressionValues(a, b));
  };
}

/** The operators of this module, by name. */
export const comparisonExpressions: Record<string, AnyFn> = {
  $cmp: comparison("$cmp", (c) => c),
  $eq: comparison("$eq", (c) => c === 0),
  $ne: comparison("$ne", (c) => c !== 0),
  $gt: comparison("$gt", (c) => c > 0),
  $gte: comparison("$gte", (c) => c >= 0),
  $lt: comparison("$lt", (c) => c < 0),
  $lte: comparison("$lte", (c) => c <= 0),
};
