/**
 * The query engine's `$size`, as MongoDB reads it: a value the path reaches is a list of that
 * many members (a list inside it is one member); the path is walked as MongoDB walks it
 * (comparisons.ts), so `{"a.b": {"$size": 2}}` matches `{"a": [{"b": [1, 2]}]}` and not
 * `{"a": [{"b": 1}, {"b": 2}]}`. The size is a whole number of at least 0, of any numeric
 * type; anything else is refused (a client's 400).
 *
 * mingo's own compared the size with `===` (an `Int32` or `Long` size matched nothing),
 * accepted a negative or fractional size, and read a dotted path through lists of lists.
 *
 * @example
 * ```ts
 * import { Query } from "mingo/query";
 * import { engineOptions } from "./engine.ts";
 *
 * new Query({ "a.b": { $size: 2 } }, engineOptions()).test({ a: [{ b: [1, 2] }] }); // true
 * ```
 */
import type { Doc } from "../types.ts";
import { reaching } from "./comparisons.ts";
import { wholeNumber } from "./numbers.ts";

/** mingo's query operator signature: a selector and an operand give a document matcher. */
export function $size(selector: string, operand: unknown): (obj: Doc) => boolean {
  const size = wholeNumber(operand);
  if (size === undefined || size < 0n || size > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new Error("$size needs a whole number of at least 0");
  }
  const n = Number(size);
  return reaching(selector, (value) => Array.isArray(value) && value.length === n, { asIs: true });
}
