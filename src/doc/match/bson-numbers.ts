/**
 * mingo's comparison query operators, extended to BSON numbers: mingo compares a
 * Decimal128 (or Long, Int32, Double) operand with stored values as an opaque object, so
 * `{"box.price": {"$lt": Decimal128("12.5")}}` would compare text. With such an operand the
 * comparison is made numerically, across every numeric type, as MongoDB does; other
 * operands go to mingo unchanged.
 *
 * `$lte` and `$gte` with a plain number operand are mingo's `$lt` or `$eq` (`$gt` or `$eq`):
 * mingo's own finds a NaN equal to every number, so `{"$lte": NaN}` matched every number and
 * `{"$gte": 5}` a NaN, where MongoDB's NaN equals NaN alone and orders against nothing.
 */
import * as queryOperators from "mingo/operators/query";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { pathValues } from "./compare.ts";
import { operatorTest } from "./fastmatch.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signature
type AnyFn = (...args: any[]) => any;

const NUMERIC = new Set(["Decimal128", "Long", "Int32", "Double"]);

function isBsonNumber(v: unknown): boolean {
  return v !== null && typeof v === "object" &&
    NUMERIC.has((v as { _bsontype?: string })._bsontype ?? "");
}

const MINGO = queryOperators as unknown as Record<string, AnyFn>;

/** The strict comparison beside `$eq` that makes up `$lte` or `$gte`. */
const STRICT: Record<string, string> = { $lte: "$lt", $gte: "$gt" };

function wrap(op: string): AnyFn {
  const mingo = MINGO[op];
  const strict = STRICT[op];
  return (selector: string, value: unknown, options: Options) => {
    if (strict !== undefined && typeof value === "number") {
      const below = MINGO[strict](selector, value, options) as (obj: Doc) => boolean;
      const equal = MINGO.$eq(selector, value, options) as (obj: Doc) => boolean;
      return (obj: Doc) => below(obj) || equal(obj);
    }
    const bson = Array.isArray(value) ? value.some(isBsonNumber) : isBsonNumber(value);
    const test = bson ? operatorTest(op, value) : null;
    if (!test) return mingo(selector, value, options);
    const parts = selector.split(".");
    // The values the path reaches (array elements spread), tested as one array: a
    // positive operator matches when one of them does, a negated one when none does.
    return (obj: Doc) => test(pathValues(obj, parts));
  };
}

/** Query operators that replace mingo's for BSON number operands. */
export const bsonNumberOperators: Record<string, AnyFn> = Object.fromEntries(
  ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"].map((op) => [op, wrap(op)]),
);
