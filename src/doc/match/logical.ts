/**
 * The query engine's logical operators, refusing what MongoDB refuses before mingo reads
 * them: `$and`, `$or` and `$nor` need a non-empty list of documents (mingo's `$and: []`
 * matched every document, `$or: []` none), and `$not` a regular expression or a non-empty
 * document of operators (mingo's read `{"$not": "a"}` as `{"$not": {"$eq": "a"}}` and
 * `{"$not": {}}` as a condition nothing meets). A refusal is a client's 400.
 *
 * @example
 * ```ts
 * import { Query } from "mingo/query";
 * import { engineOptions } from "./engine.ts";
 *
 * new Query({ $or: [] }, engineOptions()); // throws: $or must be a non-empty list
 * ```
 */
import * as queryOperators from "mingo/operators/query";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { isPlainObject } from "../../util/plain.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signature
type AnyFn = (...args: any[]) => any;

const MINGO = queryOperators as unknown as Record<string, AnyFn>;

/** `$and`, `$or` or `$nor`, with its operand checked first. */
function listOperator(op: "$and" | "$or" | "$nor"): AnyFn {
  return (selector: string, operand: unknown, options: Options) => {
    if (!Array.isArray(operand) || operand.length === 0) {
      throw new Error(`${op} must be a non-empty list`);
    }
    if (!operand.every(isPlainObject)) throw new Error(`${op} takes a list of documents`);
    return MINGO[op](selector, operand, options);
  };
}

/** `$not`, with its operand checked first. */
function not(selector: string, operand: unknown, options: Options): (obj: Doc) => boolean {
  const regex = operand instanceof RegExp ||
    (operand !== null && typeof operand === "object" &&
      (operand as { _bsontype?: string })._bsontype === "BSONRegExp");
  if (!regex) {
    if (!isPlainObject(operand)) throw new Error("$not needs a regular expression or a document");
    const keys = Object.keys(operand);
    if (keys.length === 0) throw new Error("$not cannot be empty");
    const field = keys.find((key) => key[0] !== "$");
    if (field !== undefined) throw new Error(`$not takes operators, not the field ${field}`);
  }
  return MINGO.$not(selector, operand, options);
}

/**
 * `filter` without its `$comment`s (a note for the database's logs, of any value, which
 * matches every document; mingo refused it as an unknown operator): at its top level and in
 * the branches of `$and`, `$or` and `$nor`. The same object when it has none.
 */
export function withoutComments<T extends Doc>(filter: T, depth = 0): T {
  if (depth > 32) return filter;
  let out: Doc | undefined;
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    if (key === "$comment") {
      out ??= { ...filter };
      delete out[key];
    } else if ((key === "$and" || key === "$or" || key === "$nor") && Array.isArray(value)) {
      const branches = value.map((branch) =>
        isPlainObject(branch) ? withoutComments(branch, depth + 1) : branch
      );
      if (branches.some((branch, i) => branch !== value[i])) {
        out ??= { ...filter };
        out[key] = branches;
      }
    }
  }
  return (out ?? filter) as T;
}

/** Logical query operators that check their operand before mingo's (see the module doc). */
export const logicalOperators: Record<string, AnyFn> = {
  $and: listOperator("$and"),
  $or: listOperator("$or"),
  $nor: listOperator("$nor"),
  $not: not,
};
