/**
 * The query engine's `$type`, as MongoDB reads it: a value the path reaches matches when it
 * is of one of the named BSON types, or is an array holding an element of one (an array
 * inside it is not entered, as for equality); an array is itself of type `array`. Types are
 * named by alias (`"string"`, `"objectId"`, `"number"` for any numeric type...) or by number
 * (2, 7...), alone or in a list; an unknown name, a fractional or unknown number and an empty
 * list are refused (a client's 400). A missing field is of no type, `null` of type `null`.
 *
 * The path is walked as MongoDB walks it (comparisons.ts): arrays of documents entered, a
 * segment that is a number also naming an array position.
 *
 * Numbers as the driver stores them: a JavaScript number that is an integer within 32 bits
 * (and not -0) is an `int`, any other (fractions, larger integers, NaN, infinities) a
 * `double`; `long` and `decimal` are BSON `Long` and `Decimal128` values (and a `bigint` a
 * `long`).
 *
 * mingo's own matched no array element (`{"tags": {"$type": "string"}}` missed
 * `{"tags": ["a"]}`), knew neither `objectId`, `binData`, `timestamp` nor the BSON numbers,
 * and answered false where MongoDB refuses the operand.
 *
 * @example
 * ```ts
 * import { Query } from "mingo/query";
 * import { engineOptions } from "./engine.ts";
 *
 * new Query({ tags: { $type: "string" } }, engineOptions()).test({ tags: [1, "a"] }); // true
 * ```
 */
import type { Doc } from "../types.ts";
import { reaching } from "./comparisons.ts";
import { bsonType } from "./numbers.ts";

type TypeTest = (v: unknown) => boolean;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** A plain number the driver writes as a 32-bit integer. */
const isInt32 = (v: number) =>
  Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX && !Object.is(v, -0);

const isInt: TypeTest = (v) => typeof v === "number" ? isInt32(v) : bsonType(v) === "Int32";
const isDouble: TypeTest = (v) => typeof v === "number" ? !isInt32(v) : bsonType(v) === "Double";
const isLong: TypeTest = (v) => typeof v === "bigint" || bsonType(v) === "Long";
const isDecimal: TypeTest = (v) => bsonType(v) === "Decimal128";
const ofBsonType = (name: string): TypeTest => (v) => bsonType(v) === name;

/** An embedded document: an object of no other BSON type (a DBRef is one). */
const isDocument: TypeTest = (v) => {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  if (v instanceof Date || v instanceof RegExp || v instanceof Uint8Array) return false;
  const type = bsonType(v);
  return type === undefined || type === "DBRef";
};

const hasScope = (v: unknown) => (v as { scope?: unknown }).scope != null;

/** The tests of MongoDB's type aliases. */
const BY_ALIAS: Record<string, TypeTest> = {
  double: isDouble,
  string: (v) => typeof v === "string",
  object: isDocument,
  array: Array.isArray,
  binData: (v) => v instanceof Uint8Array || bsonType(v) === "Binary",
  // Deprecated in BSON; the driver stores `undefined` as null or leaves the field out.
  undefined: () => false,
  objectId: ofBsonType("ObjectId"),
  bool: (v) => typeof v === "boolean",
  date: (v) => v instanceof Date,
  null: (v) => v === null,
  regex: (v) => v instanceof RegExp || bsonType(v) === "BSONRegExp",
  dbPointer: ofBsonType("DBPointer"),
  javascript: (v) => bsonType(v) === "Code" && !hasScope(v),
  symbol: ofBsonType("BSONSymbol"),
  javascriptWithScope: (v) => bsonType(v) === "Code" && hasScope(v),
  int: isInt,
  timestamp: ofBsonType("Timestamp"),
  long: isLong,
  decimal: isDecimal,
  minKey: ofBsonType("MinKey"),
  maxKey: ofBsonType("MaxKey"),
  number: (v) => isInt(v) || isDouble(v) || isLong(v) || isDecimal(v),
};

/** MongoDB's type numbers and their aliases. */
const BY_NUMBER: Record<number, string> = {
  1: "double",
  2: "string",
  3: "object",
  4: "array",
  5: "binData",
  6: "undefined",
  7: "objectId",
  8: "bool",
  9: "date",
  10: "null",
  11: "regex",
  12: "dbPointer",
  13: "javascript",
  14: "symbol",
  15: "javascriptWithScope",
  16: "int",
  17: "timestamp",
  18: "long",
  19: "decimal",
  [-1]: "minKey",
  127: "maxKey",
};

/** The test of one type operand (an alias or a number); throws on an unknown one. */
function typeTest(operand: unknown): TypeTest {
  if (typeof operand === "string") {
    if (Object.hasOwn(BY_ALIAS, operand)) return BY_ALIAS[operand];
    throw new Error(`$type: unknown type name alias: ${operand}`);
  }
  const n = typeof operand === "number" ? operand : Number.NaN;
  if (Number.isInteger(n) && Object.hasOwn(BY_NUMBER, n)) return BY_ALIAS[BY_NUMBER[n]];
  throw new Error(`$type: invalid numerical type code: ${String(operand)}`);
}

/**
 * Whether one value the path reaches matches: it is of a type `test` takes, or is an array
 * with an element of one.
 */
function leafTest(test: TypeTest): TypeTest {
  return (v) => {
    if (v === undefined) return false;
    if (test(v)) return true;
    if (Array.isArray(v)) {
      for (const e of v) if (test(e)) return true;
    }
    return false;
  };
}

/** mingo's query operator signature: a selector and an operand give a document matcher. */
export function $type(selector: string, operand: unknown): (obj: Doc) => boolean {
  const operands = Array.isArray(operand) ? operand : [operand];
  if (operands.length === 0) throw new Error("$type: must match at least one type");
  const tests = operands.map(typeTest);
  const test = tests.length === 1 ? tests[0] : (v: unknown) => tests.some((t) => t(v));
  return reaching(selector, leafTest(test));
}

/** The aliases a value can have, in the order {@link typeName} tries them. */
const NAMES = Object.keys(BY_ALIAS).filter((alias) => alias !== "number" && alias !== "undefined");

/**
 * The `$type` aggregation expression: the BSON type name of a value as MongoDB gives it
 * (`"objectId"`, `"int"`, `"double"`, `"decimal"`...; `"missing"` for a missing value).
 * mingo's gave `"objectid"` and read every number as `"int"` or `"double"` by its value alone.
 */
export function typeName(v: unknown): string {
  if (v === undefined) return "missing";
  return NAMES.find((alias) => BY_ALIAS[alias](v)) ?? "object";
}
