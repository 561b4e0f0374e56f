/**
 * `$let`, `$map` and `$filter` with their variables checked as MongoDB checks them: a name
 * starts with a lowercase letter (or a non-ASCII one) and holds letters, digits and `_`;
 * `ROOT`, `FOO` or `a.b` is refused, as are arguments these operators do not take. Binding
 * `CURRENT` anew (MongoDB then reads field paths from the value bound) is refused as not
 * supported: the engine reads field paths from the document whatever is bound.
 *
 * mingo's took any name and ignored unknown arguments, and with `CURRENT` bound anew answered
 * null where MongoDB reads the bound value.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * const let_ = { $let: { vars: { ROOT: 1 }, in: "$$ROOT" } };
 * new Aggregator([{ $project: { v: let_ } }], engineOptions()).run([{}]); // throws
 * ```
 * @module
 */
import * as expressionOperators from "mingo/operators/expression";
import type { Options } from "mingo/types";
import { isPlainObject } from "../../util/plain.ts";
import { checkKeys } from "./arguments.ts";
import type { Doc } from "../types.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const MINGO = expressionOperators as unknown as Record<string, AnyFn>;

/** A user variable's name, as MongoDB allows one. */
const NAME = /^[a-z\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*$/;

/** Checks a variable's name: one MongoDB allows, and not `CURRENT` (see the module doc). */
function checkName(op: string, name: unknown): void {
  if (name === "CURRENT") throw new Error(`${op}: binding CURRENT anew is not supported`);
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new Error(`${op}: '${String(name)}' is not a valid variable name`);
  }
}

/** `$let: {vars, in}`. */
function $let(obj: Doc, expr: unknown, options: Options): unknown {
  const args = checkKeys("$let", expr, ["vars", "in"], ["vars", "in"]);
  if (!isPlainObject(args.vars)) throw new Error("$let: 'vars' must be a document");
  const vars = args.vars as Doc;
  for (const name of Object.keys(vars)) checkName("$let", name);
  return MINGO.$let(obj, args, options);
}

/** `$map: {input, as, in}`. */
function $map(obj: Doc, expr: unknown, options: Options): unknown {
  const args = checkKeys("$map", expr, ["input", "as", "in"], ["input", "in"]);
  if (Object.hasOwn(args, "as")) checkName("$map", args.as);
  return MINGO.$map(obj, args, options);
}

/** `$filter: {input, as, cond, limit}`. */
function $filter(obj: Doc, expr: unknown, options: Options): unknown {
  const args = checkKeys("$filter", expr, ["input", "as", "cond", "limit"], ["input", "cond"]);
  if (Object.hasOwn(args, "as")) checkName("$filter", args.as);
  return MINGO.$filter(obj, args, options);
}

/** The operators of this module, by name. */
export const variableExpressions: Record<string, AnyFn> = { $let, $map, $filter };
