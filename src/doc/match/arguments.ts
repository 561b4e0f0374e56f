/**
 * The arguments of an expression operator, checked as MongoDB checks them: a document of
 * known keys with the required ones present ({@link checkKeys}), or a list of so many operands
 * ({@link listOperands}).
 *
 * @example
 * ```ts
 * checkKeys("$zip", { inputs: [] }, ["inputs", "defaults"], ["inputs"]); // the document
 * checkKeys("$zip", { input: [] }, ["inputs"], ["inputs"]); // throws: $zip does not take 'input'
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import { isPlainObject } from "../../util/plain.ts";
import type { Doc } from "../types.ts";

/** `expr` as `op`'s arguments document: the keys `allowed` only, the `required` ones there. */
export function checkKeys(op: string, expr: unknown, allowed: string[], required: string[]): Doc {
  if (!isPlainObject(expr)) throw new Error(`${op} takes a document of arguments`);
  for (const key of Object.keys(expr)) {
    if (!allowed.includes(key)) throw new Error(`${op} does not take '${key}'`);
  }
  for (const key of required) {
    if (!Object.hasOwn(expr, key)) throw new Error(`${op} needs '${key}'`);
  }
  return expr;
}

/** One call of an expression operator: the document, the operand expression, the options. */
export interface Call {
  obj: Doc;
  expr: unknown;
  options: Options;
}

/**
 * The evaluated operands of `op`: a list of `min` to `max` expressions (`max` defaults to
 * `min`); with `lone`, a single expression may also stand without its list (`{$abs: "$x"}`).
 */
export function listOperands(
  op: string,
  call: Call,
  shape: { min: number; max?: number; lone?: boolean },
): unknown[] {
  const { obj, expr, options } = call;
  const { min, max = min, lone = false } = shape;
  const list = Array.isArray(expr) ? expr : lone ? [expr] : null;
  if (list === null || list.length < min || list.length > max) {
    const count = min === max ? `${min}` : `${min} to ${max}`;
    throw new Error(`${op} takes ${count} argument${max === 1 ? "" : "s"}`);
  }
  return list.map((e) => evalExpr(obj as never, e as never, options));
}
