/**
 * The comparison query operators of the query engine: mingo's, replaced where they would
 * answer otherwise than MongoDB and the direct matcher (fastmatch.ts).
 *
 * BSON numbers: mingo compares a Decimal128 (or Long, Int32, Double) operand with stored
 * values as an opaque object, so `{"box.price": {"$lt": Decimal128("12.5")}}` would compare
 * text. With such an operand the comparison is made numerically, across every numeric type,
 * as MongoDB does.
 *
 * The range operators (`$gt`, `$gte`, `$lt`, `$lte`) with an operand the direct matcher
 * compares (a number, string, boolean, date or ObjectId) are the direct matcher's comparison
 * on the values the path reaches (fastmatch.ts), so a filter answers alike whichever of the
 * two tests it: mingo's own found a NaN equal to every number (`{"$lte": NaN}` matched every
 * number, `{"$gte": 5}` a NaN, where MongoDB's NaN equals NaN alone and orders against
 * nothing) and compares strings by UTF-16 code units (MongoDB, and the direct matcher, by
 * code points). `$in` and `$nin` with such members likewise (mingo's did not search a list
 * under a list of documents: `parts.sizes` in `{"parts": [{"sizes": [1, 7]}]}`; and inside
 * `$elemMatch` they found a field in a member that is no document: `{"$elemMatch": {"b":
 * {"$gte": 5}}}` matched `[6, 7]`). `$eq` and `$ne` with such an operand likewise. A range
 * against a list compares a stored list as a whole, and its members that are lists, in
 * MongoDB's order (mingo's compared the members alone).
 *
 * A path segment that is a number names an array position as MongoDB reads it (checked
 * against MongoDB's own test of numeric path components): at an array it reaches both the
 * element at that position, compared as one value (`{"a.0": 42}` does not match
 * `{"a": [[42]]}`), and the field of that name in the array's documents (it matches
 * `{"a": [{"0": 42}]}`); mingo's read only the position, and an array there by its members.
 *
 * Against null (`$eq`, `$ne`, the ranges, `$in`/`$nin` with a null member) the path is walked
 * as MongoDB's equality to null walks it (a member of a list that lacks the field counts as a
 * missing field; mingo's found no null through a list of documents and made `{"$gte": null}`
 * match nothing).
 *
 * `$all` with such members and `$exists` walk the path the same way: mingo's `$all` found
 * neither a scalar equal to its one member (`{"v": {"$all": [7]}}` on `{"v": 7}`, which MongoDB
 * reads as `{"v": 7}`) nor a member in a list under a list of documents, and its `$exists`
 * entered an array inside an array. `$all`'s other members (null, lists, patterns, `$elemMatch`
 * conditions) are each `{path: member}` for the engine, as MongoDB reads them (mingo's found no
 * missing field for `null` nor a field equal to a list member).
 *
 * Operands MongoDB refuses are refused (a client's 400): a regular expression given to `$ne`
 * or a range, an `$in` or `$nin` that is no list or holds an operator, an `$all` holding an
 * operator other than `$elemMatch`, or `$elemMatch` conditions beside values.
 */
import * as queryOperators from "mingo/operators/query";
import { Query } from "mingo/query";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { compareValues, pathValues } from "./compare.ts";
import { operatorTest, type Test } from "./fastmatch.ts";
import { isBsonNumber } from "./numbers.ts";
import { isPlainObject } from "../../util/plain.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signature
type AnyFn = (...args: any[]) => any;

const MINGO = queryOperators as unknown as Record<string, AnyFn>;

/** The range operators that hold for an equal value: against NaN, they find NaN. */
const INCLUSIVE = new Set(["$lte", "$gte"]);

/** A path segment that may name an array position. */
const INDEX = /^\d+$/;

const isNaNNumber = (v: unknown) => typeof v === "number" && Number.isNaN(v);

/** `$lte` or `$gte` NaN: the value is a NaN or an array holding one. */
const IS_NAN: Test = (v) => isNaNNumber(v) || (Array.isArray(v) && v.some(isNaNNumber));

/** `$lt` or `$gt` NaN: nothing orders against a NaN. */
const NEVER: Test = () => false;

/**
 * Whether `test` holds for a value `parts` (no array positions among them) reach from
 * `value`, walked as MongoDB walks a path: an array on the way stands for its elements that
 * are documents (an array inside it is not entered), and the leaf is tested as it is (`test`
 * itself tries an array's elements).
 */
function reaches(value: unknown, parts: string[], i: number, test: Test): boolean {
  if (i === parts.length) return test(value);
  if (Array.isArray(value)) {
    for (const item of value) {
      if (!Array.isArray(item) && reaches(item, parts, i, test)) return true;
    }
    return false;
  }
  if (value === null || typeof value !== "object" || value instanceof Date) return false;
  const key = parts[i];
  return Object.hasOwn(value, key) && reaches((value as Doc)[key], parts, i + 1, test);
}

/**
 * {@link reaches} on a path that may name array positions, as MongoDB walks one: at an array, a
 * segment that is a number reaches the element at that position (whatever it is) as well as the
 * field of that name in the array's documents. A value reached as an array's element by its
 * position is one value at the end of the path: with `whole`, an array there is handed to
 * `test` inside a one-element array, so that a test trying an array's members compares it as
 * one value (`{"a.0": 42}` does not match `{"a": [[42]]}`; MongoDB's own test of numeric path
 * components). Tests that read the array itself (`$size`, `$elemMatch`) get it as it is.
 */
function reachesIndexed(
  value: unknown,
  parts: string[],
  i: number,
  walk: { test: Test; whole: boolean },
  positional = false,
): boolean {
  if (i === parts.length) {
    return walk.test(positional && walk.whole && Array.isArray(value) ? [value] : value);
  }
  const key = parts[i];
  if (Array.isArray(value)) {
    if (INDEX.test(key)) {
      const n = Number(key);
      if (n < value.length && reachesIndexed(value[n], parts, i + 1, walk, true)) return true;
    }
    for (const item of value) {
      if (!Array.isArray(item) && reachesIndexed(item, parts, i, walk)) return true;
    }
    return false;
  }
  if (value === null || typeof value !== "object" || value instanceof Date) return false;
  return Object.hasOwn(value, key) && reachesIndexed((value as Doc)[key], parts, i + 1, walk);
}

/**
 * Whether `parts` (no array positions among them) reach null or nothing from `value`, as
 * MongoDB's equality to null reads a path: the field is missing or null, or a list at the end
 * holds a null; on the way, anything but a document has no field (a missing field), and a
 * list stands for its members, an empty one for a missing field (so `{"a.b": null}` matches
 * `{"a": []}`, `{"a": [1]}` and `{"a": [{"b": 3}, {}]}`, not `{"a": [{"b": 3}]}`).
 */
function reachesNull(value: unknown, parts: string[], i: number): boolean {
  if (i === parts.length) {
    return value === null || value === undefined || (Array.isArray(value) && value.includes(null));
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return true;
    for (const item of value) {
      if (Array.isArray(item) || !holdsFields(item) || reachesNull(item, parts, i)) return true;
    }
    return false;
  }
  if (!holdsFields(value)) return true;
  const key = parts[i];
  return !Object.hasOwn(value, key) || reachesNull(value[key], parts, i + 1);
}

/** Whether a path segment can name a field of `value` (an object, not a date). */
function holdsFields(value: unknown): value is Doc {
  return value !== null && typeof value === "object" && !(value instanceof Date);
}

/** A document matcher: the path reaches null or nothing ({@link reachesNull}); with `negated`, not. */
function reachingNull(parts: string[], negated: boolean): (obj: Doc) => boolean {
  return negated
    ? (obj: Doc) => !reachesNull(obj, parts, 0)
    : (obj: Doc) => reachesNull(obj, parts, 0);
}

/**
 * The matcher of an operator against a null operand on a path naming no array position, as
 * MongoDB reads it: `$eq`, `$gte`, `$lte` and `$in` with a null member match null or nothing
 * ({@link reachesNull}), `$ne` and `$nin` the other documents, `$gt` and `$lt` nothing; null
 * for other operands and paths. `$in`'s other members are tested by `others`.
 */
function nullMatcher(
  op: string,
  selector: string,
  value: unknown,
  others: (rest: unknown[]) => AnyFn,
): AnyFn | null {
  const members = op === "$in" || op === "$nin";
  if (members ? !Array.isArray(value) || !value.includes(null) : value !== null) return null;
  const parts = walkedPath(selector);
  if (parts === null) return null;
  if (op === "$gt" || op === "$lt") return NEVER_DOC;
  if (!members) return reachingNull(parts, op === "$ne");
  const rest = (value as unknown[]).filter((member) => member !== null);
  const isNull = reachingNull(parts, false);
  const other = rest.length === 0 ? NEVER_DOC : others(rest) as (obj: Doc) => boolean;
  return op === "$in"
    ? (obj: Doc) => isNull(obj) || other(obj)
    : (obj: Doc) => !isNull(obj) && !other(obj);
}

/** A document matcher that matches nothing. */
const NEVER_DOC = (_obj: Doc) => false;

/** The segments of `selector`, or null when one may name an array position (mingo's to read). */
function walkedPath(selector: string): string[] | null {
  const parts = selector.split(".");
  return parts.some((part) => INDEX.test(part)) ? null : parts;
}

/** A document matcher: `test` holds for a value `parts` reach (with `negated`, for none). */
function reachingParts(parts: string[], test: Test, negated = false): (obj: Doc) => boolean {
  return negated
    ? (obj: Doc) => !reaches(obj, parts, 0, test)
    : (obj: Doc) => reaches(obj, parts, 0, test);
}

/**
 * A document matcher: `test` holds for a value `selector` reaches (with `negated`, for none),
 * walked as MongoDB walks a path (see {@link reaches}); a segment that is a number also names
 * an array position ({@link reachesIndexed}; `asIs`: `test` reads an array itself, not its
 * members).
 */
export function reaching(
  selector: string,
  test: Test,
  options: { negated?: boolean; asIs?: boolean } = {},
): (obj: Doc) => boolean {
  const { negated = false, asIs = false } = options;
  const parts = walkedPath(selector);
  if (parts !== null) return reachingParts(parts, test, negated);
  const all = selector.split(".");
  const walk = { test, whole: !asIs };
  return negated
    ? (obj: Doc) => !reachesIndexed(obj, all, 0, walk)
    : (obj: Doc) => reachesIndexed(obj, all, 0, walk);
}

/**
 * A range operator against an operand the direct matcher compares (a number, BSON number,
 * string, boolean, date or ObjectId), as MongoDB compares (see the module doc); null for
 * other operands.
 */
function rangeMatcher(op: string, selector: string, value: unknown): AnyFn | null {
  if (Array.isArray(value)) return reaching(selector, listRange(op, value), { asIs: true });
  const nan = typeof value === "number" && Number.isNaN(value);
  const test = nan ? (INCLUSIVE.has(op) ? IS_NAN : NEVER) : operatorTest(op, value);
  if (test === null) return null;
  return reaching(selector, test);
}

/** How a comparison's sign answers each range operator. */
const ORDERED: Record<string, (sign: number) => boolean> = {
  $gt: (sign) => sign > 0,
  $gte: (sign) => sign >= 0,
  $lt: (sign) => sign < 0,
  $lte: (sign) => sign <= 0,
};

/**
 * A range against a list, as MongoDB compares one: with the value reached when it is a list,
 * as a whole (member by member in MongoDB's order, then by length), and with each of its
 * members that is a list (mingo's compared members alone).
 */
function listRange(op: string, operand: unknown[]): Test {
  const holds = ORDERED[op];
  const one = (v: unknown) => Array.isArray(v) && holds(compareValues(v, operand));
  return (v) => Array.isArray(v) && (one(v) || v.some(one));
}

/**
 * `$in` or `$nin` with members the direct matcher compares, on a path naming no array position:
 * whether a value the path reaches is one of them (for `$nin`, none is); null otherwise.
 */
function memberMatcher(op: string, selector: string, value: unknown): AnyFn | null {
  const test = operatorTest("$in", value);
  return test === null ? null : reaching(selector, test, { negated: op === "$nin" });
}

/**
 * `$exists` on a path naming no array position: a value is reached (for `$exists: false`,
 * none is); null otherwise.
 */
function existsMatcher(selector: string, value: unknown): AnyFn {
  return reaching(selector, ANY, { negated: !value, asIs: true });
}

/**
 * `$all`: every member is matched, as `{path: member}` each (MongoDB's reading); none given,
 * nothing matches. Members all `{"$elemMatch": ...}` are each that condition on the path;
 * a member the direct matcher compares, on a path naming no array position, is its test on
 * the values the path reaches. MongoDB refuses other operators among the members, and
 * `$elemMatch` members beside others.
 */
function allMatcher(selector: string, value: unknown, options: Options): AnyFn {
  if (!Array.isArray(value)) throw new Error("$all needs a list");
  if (value.length === 0) return NEVER_DOC;
  const operators = value.filter((member) =>
    isPlainObject(member) && Object.keys(member).some((key) => key[0] === "$")
  );
  const elemMatches = operators.filter((member) =>
    Object.keys(member as Doc).length === 1 && Object.hasOwn(member as Doc, "$elemMatch")
  );
  if (operators.length > elemMatches.length) {
    throw new Error("$all takes values and $elemMatch conditions, no other operator");
  }
  if (elemMatches.length > 0 && elemMatches.length < value.length) {
    throw new Error("$all cannot mix $elemMatch conditions with values");
  }
  const each = value.map((member): (obj: Doc) => boolean => {
    const test = operatorTest("$eq", member);
    if (test !== null) return reaching(selector, test);
    const query = new Query({ [selector]: member }, options);
    return (obj: Doc) => query.test(obj);
  });
  return (obj: Doc) => each.every((matches) => matches(obj));
}

/** `$exists`: a value reached (a member holding `undefined` is none, as for the direct matcher). */
const ANY: Test = (v) => v !== undefined;

const RANGES = new Set(["$gt", "$gte", "$lt", "$lte"]);

function wrap(op: string): AnyFn {
  const mingo = MINGO[op];
  const range = RANGES.has(op);
  const members = op === "$in" || op === "$nin";
  const nullable = op !== "$all" && op !== "$exists";
  return (selector: string, value: unknown, options: Options) => {
    refuseOperand(op, value);
    if (nullable) {
      const matcher = nullMatcher(op, selector, value, (rest) => MEMBERS(selector, rest, options));
      if (matcher) return matcher;
    }
    if (range) return rangeMatcher(op, selector, value) ?? mingo(selector, value, options);
    if (op === "$all") return allMatcher(selector, value, options);
    if (op === "$exists") return existsMatcher(selector, value);
    if (members) {
      const matcher = memberMatcher(op, selector, value);
      if (matcher) return matcher;
    }
    if (op === "$eq" || op === "$ne") {
      const test = operatorTest("$eq", value);
      if (test !== null) return reaching(selector, test, { negated: op === "$ne" });
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

const isRegex = (v: unknown) =>
  v instanceof RegExp ||
  (v !== null && typeof v === "object" && (v as { _bsontype?: string })._bsontype === "BSONRegExp");

/** Operators that compare with their operand, which MongoDB refuses to be a pattern. */
const NO_PATTERN = new Set(["$ne", "$gt", "$gte", "$lt", "$lte"]);

/**
 * Throws for an operand MongoDB refuses: a regular expression to `$ne` or a range, and an
 * `$in` or `$nin` that is no list or holds an operator document (`{"$elemMatch": ...}`).
 */
function refuseOperand(op: string, value: unknown): void {
  if (NO_PATTERN.has(op) && isRegex(value)) {
    throw new Error(`${op} cannot take a regular expression`);
  }
  if (op !== "$in" && op !== "$nin") return;
  if (!Array.isArray(value)) throw new Error(`${op} needs a list`);
  for (const member of value) {
    if (isPlainObject(member) && Object.keys(member).some((key) => key[0] === "$")) {
      throw new Error(`${op} cannot hold an operator ({"$..."})`);
    }
  }
}

/** `$in` with members that hold no null (the other members of an `$in` holding one). */
const MEMBERS: AnyFn = (selector: string, members: unknown[], options: Options) =>
  memberMatcher("$in", selector, members) ?? MINGO.$in(selector, members, options);

/** Query operators that replace mingo's comparisons (see the module doc). */
export const comparisonOperators: Record<string, AnyFn> = Object.fromEntries(
  ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$exists"].map((op) => [
    op,
    wrap(op),
  ]),
);
