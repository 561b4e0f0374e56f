/**
 * The `$group` accumulators that collect values, as MongoDB computes them: `$push` (every value,
 * in the documents' order) and `$addToSet` (each value once). A missing value is left out
 * (mingo pushed null for it), and `$addToSet` tells values apart as MongoDB does: numbers equal
 * across their types, documents by their fields in order (mingo kept a `Long` 1 beside a 1 and
 * took `{a: 1, b: 2}` and `{b: 2, a: 1}` for one).
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
import { compareValues } from "./compare.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

/** mingo's options of a computation: a new one per group, its root set per document. */
interface Compute {
  update(locals: { root: unknown }): Options;
}

/**
 * The values `expr` takes over `docs`, each document the root of its evaluation (as mingo's
 * `$push` evaluates them), missing ones left out.
 */
export function valuesOver(docs: Doc[], expr: unknown, options: Options): unknown[] {
  const init = (options.constructor as { init?: (options: Options) => Compute }).init;
  const compute = init?.(options);
  const values: unknown[] = [];
  for (const doc of docs) {
    const value = evalExpr(
      doc as never,
      expr as never,
      compute ? compute.update({ root: doc }) : options,
    );
    if (value !== undefined) values.push(value);
  }
  return values;
}

/** `values` without repeats (MongoDB's equality), first occurrences kept, in their order. */
function distinct(values: unknown[]): unknown[] {
  const kept: unknown[] = [];
  for (const value of values) {
    if (!kept.some((other) => compareValues(other, value) === 0)) kept.push(value);
  }
  return kept;
}

/** The operators of this module, by name. */
export const collectingAccumulators: Record<string, AnyFn> = {
  $push: (docs: Doc[], expr: unknown, options: Options) => valuesOver(docs, expr, options),
  $addToSet: (docs: Doc[], expr: unknown, options: Options) =>
    distinct(valuesOver(docs, expr, options)),
};
