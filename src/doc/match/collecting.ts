/**
 * The `$group` accumulators that collect values, as MongoDB computes them: `$push` (every value,
 * in the documents' order) and `$addToSet` (each value once). A missing value is left out
 * (mingo pushed null for it), and `$addToSet` tells values apart as MongoDB does: numbers equal
 * across their types, documents by their fields in order (mingo kept a `Long` 1 beside a 1 and
 * took `{a: 1, b: 2}` and `{b: 2, a: 1}` for one); its values come in MongoDB's order of values
 * (a set's order is not kept by MongoDB either).
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $group: { _id: null, v: { $push: "$v" } } }], engineOptions())
 *   .run([{ v: 1 }, {}, { v: null }]); // [{ _id: null, v: [1, null] }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { distinct } from "./arrays.ts";
import { computation } from "./computation.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

/**
 * The values `expr` takes over `docs`, each document the root of its evaluation (as mingo's
 * `$push` evaluates them), missing ones left out.
 */
export function valuesOver(docs: Doc[], expr: unknown, options: Options): unknown[] {
  const at = computation(options);
  const values: unknown[] = [];
  for (const doc of docs) {
    const value = evalExpr(doc as never, expr as never, at.update({ root: doc }));
    if (value !== undefined) values.push(value);
  }
  return values;
}

/** The operators of this module, by name. */
export const collectingAccumulators: Record<string, AnyFn> = {
  $push: (docs: Doc[], expr: unknown, options: Options) => valuesOver(docs, expr, options),
  $addToSet: (docs: Doc[], expr: unknown, options: Options) =>
    distinct(valuesOver(docs, expr, options)),
};
