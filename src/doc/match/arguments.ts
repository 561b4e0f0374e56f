/**
 * The arguments document of an expression operator, checked as MongoDB checks one: a
 * document, with known keys only and the required ones present.
 *
 * @example
 * ```ts
 * checkKeys("$zip", { inputs: [] }, ["inputs", "defaults"], ["inputs"]); // the document
 * checkKeys("$zip", { input: [] }, ["inputs"], ["inputs"]); // throws: $zip does not take 'input'
 * ```
 * @module
 */
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
