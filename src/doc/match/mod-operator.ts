/**
 * The query engine's `$mod`, as MongoDB reads it: `{"$mod": [divisor, remainder]}` matches a
 * value the path reaches (or a member of a list it reaches) that is a number whose whole part
 * (truncated toward zero, 64 bits) leaves that remainder; a number of any numeric type, with
 * a fraction or not (`4.5` is read as 4). The divisor and remainder are truncated alike; a
 * list of other than two numbers, a divisor of 0, and a number that is not finite or beyond
 * 64 bits are refused (a client's 400). The path is walked as MongoDB walks it
 * (comparisons.ts).
 *
 * mingo's own used JavaScript's remainder on the values as they are (`4.5 % 4` is 0.5, so no
 * match), compared BSON numbers as objects, matched a list inside a list, and answered false
 * where MongoDB refuses the operand.
 *
 * @example
 * ```ts
 * import { Query } from "mingo/query";
 * import { engineOptions } from "./engine.ts";
 *
 * new Query({ n: { $mod: [4, 0] } }, engineOptions()).test({ n: 8.5 }); // true
 * ```
 */
import type { Doc } from "../types.ts";
import { reaching } from "./comparisons.ts";
import { truncated } from "./numbers.ts";

/** One operand (divisor or remainder), truncated; throws when MongoDB refuses it. */
function operandOf(value: unknown, name: string): bigint {
  const whole = truncated(value);
  if (whole === undefined) {
    throw new Error(`$mod: the ${name} must be a finite number within 64 bits`);
  }
  return whole;
}

/** mingo's query operator signature: a selector and an operand give a document matcher. */
export function $mod(selector: string, operand: unknown): (obj: Doc) => boolean {
  if (!Array.isArray(operand) || operand.length !== 2) {
    throw new Error("$mod needs a list of two numbers: [divisor, remainder]");
  }
  const divisor = operandOf(operand[0], "divisor");
  const remainder = operandOf(operand[1], "remainder");
  if (divisor === 0n) throw new Error("$mod: the divisor cannot be 0");
  const one = (v: unknown) => {
    const whole = truncated(v);
    return whole !== undefined && whole % divisor === remainder;
  };
  return reaching(selector, (value) => one(value) || (Array.isArray(value) && value.some(one)));
}
