/**
 * The engine's expression operators that mingo computes otherwise than MongoDB, as MongoDB
 * computes them: `$round` (half to even) and `$trunc` with one or two arguments, `$toString`,
 * `$toObjectId`, `$toDate`, `$toDecimal` and `$convert`, `$toUpper` and `$toLower` (ASCII
 * letters only). Each section says what mingo's did.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $project: { r: { $round: ["$x", 1] } } }], engineOptions())
 *   .run([{ x: 0.35 }]); // [{ r: 0.4 }]
 * ```
 */
import * as expressionOperators from "mingo/operators/expression";
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import { Decimal128, Long, ObjectId } from "../bson.ts";
import { isPlainObject } from "../../util/plain.ts";
import type { Doc } from "../types.ts";
import { decimalRemainder, fromExact, roundedAt } from "./decimal.ts";
import { bsonType, isNumeric, valueOf } from "./numbers.ts";
import { typeName } from "./type-operator.ts";
import { listOperands } from "./arguments.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const EXPRESSIONS = expressionOperators as unknown as Record<string, AnyFn>;

/**
 * `$round` or `$trunc` as MongoDB computes them: `[number, place]` or a number alone (place 0),
 * the place a whole number from -20 to 100; half to even for `$round`, on the number's decimal
 * value; null for null or a missing value, NaN and the infinities as they are; a `Decimal128`
 * gives a `Decimal128`. Anything else is refused.
 */
function rounding(op: "$round" | "$trunc"): AnyFn {
  const mode = op === "$round" ? "round" : "trunc";
  return (obj: Doc, expr: unknown, options: Options) => {
    const args = Array.isArray(expr) ? expr : [expr];
    if (args.length < 1 || args.length > 2) throw new Error(`${op} takes 1 or 2 arguments`);
    const [value, place = 0] = args.map((e) => evalExpr(obj as never, e as never, options));
    if (value === null || value === undefined || place === null || place === undefined) {
      return null;
    }
    if (!isNumeric(value)) throw new Error(`${op} only supports numeric types`);
    const digits = valueOf(place);
    if (!Number.isInteger(digits) || digits < -20 || digits > 100) {
      throw new Error(`${op}: the place must be a whole number from -20 to 100`);
    }
    const rounded = roundedAt(value, digits, mode);
    return rounded === undefined ? value : fromExact(rounded);
  };
}

/** `$round` and `$trunc` (see {@link rounding}). */
export const roundingExpressions: Record<string, AnyFn> = {
  $round: rounding("$round"),
  $trunc: rounding("$trunc"),
};

const isObjectId = (v: unknown) => bsonType(v) === "ObjectId";

/** A value as `$toString` gives it, or undefined when MongoDB cannot convert it. */
function stringOf(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return String(v);
  if (v instanceof Date) return v.toISOString();
  if (isObjectId(v)) return (v as { toHexString(): string }).toHexString();
  if (isNumeric(v)) return String(v);
  return undefined;
}

/** A value as `$toObjectId` gives it, or undefined when MongoDB cannot convert it. */
function objectIdOf(v: unknown): unknown {
  if (isObjectId(v)) return v;
  if (typeof v === "string" && /^[0-9a-fA-F]{24}$/.test(v)) return new ObjectId(v);
  return undefined;
}

/** A conversion `$convert`'s `to` names that is computed here (string or objectId). */
function ownConversion(to: unknown): ((v: unknown) => unknown) | undefined {
  switch (to) {
    case "string":
    case 2:
      return stringOf;
    case "objectId":
    case 7:
      return objectIdOf;
    case "date":
    case 9:
      return dateOf;
    case "decimal":
    case 19:
      return decimalOf;
    case "bool":
    case 8:
      return boolOf;
    case "int":
    case 16:
      return (v) => wholeOf(v, 2 ** 31);
    case "long":
    case 18:
      return (v) => wholeOf(v, 2 ** 63);
    case "double":
    case 1:
      return doubleOf;
  }
  return undefined;
}

/**
 * A value as `$toDate` gives it: a long, double or decimal is milliseconds since the epoch
 * (mingo's read a number as text: `1.5` was in the year 2001), an ObjectId its creation time,
 * text a date's text; undefined when MongoDB cannot convert it (a boolean, a 32-bit integer).
 */
function dateOf(v: unknown): Date | undefined {
  if (v instanceof Date) return v;
  // As MongoDB: a 32-bit integer is no date; a long, double or decimal is milliseconds.
  if (typeName(v) === "int") return undefined;
  if (isNumeric(v)) {
    const ms = Math.trunc(valueOf(v));
    return Number.isFinite(ms) ? new Date(ms) : undefined;
  }
  if (isObjectId(v)) return (v as { getTimestamp(): Date }).getTimestamp();
  if (typeof v === "string") {
    const date = new Date(v);
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  return undefined;
}

/** A value as `$toDecimal` gives it (a number of any type, numeric text, a boolean, a date's ms). */
function decimalOf(v: unknown): Decimal128 | undefined {
  if (bsonType(v) === "Decimal128") return v as Decimal128;
  const text = typeof v === "boolean"
    ? (v ? "1" : "0")
    : v instanceof Date
    ? String(v.getTime())
    : isNumeric(v)
    ? String(v)
    : typeof v === "string" && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)
    ? v.trim()
    : undefined;
  return text === undefined ? undefined : Decimal128.fromStringWithRounding(text);
}

/** A value as `$toBool` gives it: false for false and every zero, true for anything else. */
function boolOf(v: unknown): boolean {
  if (typeof v === "boolean") return v;
  if (isNumeric(v)) return valueOf(v) !== 0;
  return true;
}

/**
 * A value as `$toInt` (`limit` 2^31) or `$toLong` (2^63) gives it: a number truncated toward
 * zero, a boolean 0 or 1, whole-number text, a date's milliseconds for a long; undefined beyond
 * the limit and for what MongoDB cannot convert.
 */
function wholeOf(v: unknown, limit: number): number | undefined {
  let n: number;
  if (typeof v === "boolean") n = v ? 1 : 0;
  else if (isNumeric(v)) n = Math.trunc(valueOf(v));
  else if (v instanceof Date && limit > 2 ** 31) n = v.getTime();
  else if (typeof v === "string" && /^\s*[+-]?\d+\s*$/.test(v)) n = Number(v);
  else return undefined;
  return Number.isFinite(n) && n >= -limit && n < limit ? n : undefined;
}

/** A value as `$toDouble` gives it: a number, a boolean 0 or 1, numeric text, a date's ms. */
function doubleOf(v: unknown): number | undefined {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (isNumeric(v)) return valueOf(v);
  if (v instanceof Date) return v.getTime();
  if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
  return undefined;
}

/**
 * `$toString`, `$toObjectId` and `$convert` to a string or an ObjectId, as MongoDB converts
 * (an ObjectId to its hex digits, a `Long` or `Decimal128` to its digits, 24 hex digits to an
 * ObjectId; null for null); other conversions are mingo's.
 */
export const conversionExpressions: Record<string, AnyFn> = {
  $toString: (obj: Doc, expr: unknown, options: Options) =>
    convertOne(evalExpr(obj as never, expr as never, options), stringOf, "$toString"),
  $toObjectId: (obj: Doc, expr: unknown, options: Options) =>
    convertOne(evalExpr(obj as never, expr as never, options), objectIdOf, "$toObjectId"),
  $toDate: (obj: Doc, expr: unknown, options: Options) =>
    convertOne(evalExpr(obj as never, expr as never, options), dateOf, "$toDate"),
  $toDecimal: (obj: Doc, expr: unknown, options: Options) =>
    convertOne(evalExpr(obj as never, expr as never, options), decimalOf, "$toDecimal"),
  $convert: (obj: Doc, expr: unknown, options: Options) => {
    const spec = expr as { input?: unknown; to?: unknown; onError?: unknown; onNull?: unknown };
    const to = evalExpr(obj as never, spec?.to as never, options);
    const convert = ownConversion(to);
    if (!convert) return EXPRESSIONS.$convert(obj, expr, options);
    const input = evalExpr(obj as never, spec.input as never, options);
    if (input === null || input === undefined) {
      return Object.hasOwn(spec, "onNull")
        ? evalExpr(obj as never, spec.onNull as never, options)
        : null;
    }
    const out = convert(input);
    if (out !== undefined) return out;
    if (Object.hasOwn(spec, "onError")) {
      return evalExpr(obj as never, spec.onError as never, options);
    }
    throw new Error(`$convert cannot convert this value to ${String(to)}`);
  },
};

/** One conversion: null for null or missing, the converted value, or an error. */
function convertOne(v: unknown, convert: (v: unknown) => unknown, op: string): unknown {
  if (v === null || v === undefined) return null;
  const out = convert(v);
  if (out === undefined) throw new Error(`${op} cannot convert this value`);
  return out;
}

/**
 * `$toUpper` or `$toLower` as MongoDB computes them: null or a missing value gives `""`, a
 * number (of any type) or a date its text, and only the ASCII letters change case (`ó` stays);
 * a boolean, a pattern or a document is refused.
 */
function caseMap(op: string, upper: boolean): AnyFn {
  const change = upper ? /[a-z]+/g : /[A-Z]+/g;
  return (obj: Doc, expr: unknown, options: Options) => {
    if (Array.isArray(expr) && expr.length !== 1) throw new Error(`${op} takes one argument`);
    const value = evalExpr(obj as never, (Array.isArray(expr) ? expr[0] : expr) as never, options);
    if (value === null || value === undefined) return "";
    const text = typeof value === "string"
      ? value
      : isNumeric(value) || value instanceof Date
      ? stringOf(value)!
      : undefined;
    if (text === undefined) throw new Error(`${op} needs a string, a number or a date`);
    return text.replace(change, (letters) => upper ? letters.toUpperCase() : letters.toLowerCase());
  };
}

/** `$toUpper` and `$toLower` (see {@link caseMap}). */
export const caseExpressions: Record<string, AnyFn> = {
  $toUpper: caseMap("$toUpper", true),
  $toLower: caseMap("$toLower", false),
};

/** The `$type` expression (type-operator.ts: `typeName`). */
export const typeExpression: Record<string, AnyFn> = {
  $type: (obj: Doc, expr: unknown, options: Options) =>
    typeName(evalExpr(obj as never, (Array.isArray(expr) ? expr[0] : expr) as never, options)),
};

/**
 * `$switch`, `$cond` and `$ifNull` with their arguments checked as MongoDB checks them before
 * mingo's run: `$switch` takes `branches` (a non-empty list of `{case, then}`) and `default`,
 * and refuses a document no branch takes when it has no `default`; `$cond` takes `if`, `then`
 * and `else` (or a list of three); `$ifNull` at least two arguments. mingo's accepted every
 * one of these mistakes.
 */
export const checkedConditionals: Record<string, AnyFn> = {
  $switch: (obj: Doc, expr: unknown, options: Options) => {
    if (!isPlainObject(expr)) throw new Error("$switch needs a document");
    const unknown = Object.keys(expr).find((key) => key !== "branches" && key !== "default");
    if (unknown !== undefined) throw new Error(`$switch: unknown argument ${unknown}`);
    const branches = expr.branches;
    if (branches !== undefined && !Array.isArray(branches)) {
      throw new Error("$switch: branches must be a list");
    }
    if (!Array.isArray(branches) || branches.length === 0) {
      throw new Error("$switch needs at least one branch");
    }
    for (const branch of branches) {
      if (!isPlainObject(branch)) throw new Error("$switch: each branch must be a document");
      const extra = Object.keys(branch).find((key) => key !== "case" && key !== "then");
      if (extra !== undefined) throw new Error(`$switch: unknown argument to a branch: ${extra}`);
      if (!Object.hasOwn(branch, "case")) throw new Error("$switch: a branch needs a case");
      if (!Object.hasOwn(branch, "then")) throw new Error("$switch: a branch needs a then");
    }
    if (!Object.hasOwn(expr, "default")) {
      const taken = branches.some((branch) =>
        truthy(evalExpr(obj as never, (branch as Doc).case as never, options))
      );
      if (!taken) throw new Error("$switch found no branch for a document and has no default");
    }
    return EXPRESSIONS.$switch(obj, expr, options);
  },
  $cond: (obj: Doc, expr: unknown, options: Options) => {
    if (Array.isArray(expr)) {
      if (expr.length !== 3) throw new Error("$cond takes three arguments: if, then, else");
    } else if (isPlainObject(expr)) {
      const extra = Object.keys(expr).find((key) => !["if", "then", "else"].includes(key));
      if (extra !== undefined) throw new Error(`$cond: unknown argument ${extra}`);
      for (const key of ["if", "then", "else"]) {
        if (!Object.hasOwn(expr, key)) throw new Error(`$cond needs '${key}'`);
      }
    }
    return EXPRESSIONS.$cond(obj, expr, options);
  },
  $ifNull: (obj: Doc, expr: unknown, options: Options) => {
    if (!Array.isArray(expr) || expr.length < 2) {
      throw new Error("$ifNull needs at least two arguments");
    }
    return EXPRESSIONS.$ifNull(obj, expr, options);
  },
};

/** MongoDB's truth of an expression's value: all but false, null, missing and 0. */
function truthy(v: unknown): boolean {
  return !(v === false || v === null || v === undefined || (isNumeric(v) && valueOf(v) === 0));
}

/**
 * Array and string expressions with MongoDB's answers where mingo's differ: `$mod` (null for a
 * null or missing argument, numbers of every type, a zero divisor refused: mingo's gave NaN),
 * `$split` (null for a null or missing argument, an empty separator refused: mingo's split into
 * characters), `$size` (refuses what is no list: mingo's gave null), `$arrayElemAt` (an index
 * of any numeric type, far past the end leaving the field out: mingo's refused it).
 */
export const listAndTextExpressions: Record<string, AnyFn> = {
  $mod: (obj: Doc, expr: unknown, options: Options) => {
    const [a, b] = listOperands("$mod", { obj, expr, options }, { min: 2 });
    if (a === null || a === undefined || b === null || b === undefined) return null;
    if (!isNumeric(a) || !isNumeric(b)) throw new Error("$mod only supports numeric types");
    if (valueOf(b) === 0) throw new Error("$mod: can't divide by zero");
    if (bsonType(a) === "Decimal128" || bsonType(b) === "Decimal128") {
      return decimalRemainder(a, b);
    }
    if (bsonType(a) === "Long" && bsonType(b) === "Long") {
      const remainder = BigInt(String(a)) % BigInt(String(b));
      return Number.isSafeInteger(Number(remainder))
        ? Number(remainder)
        : Long.fromBigInt(remainder);
    }
    return valueOf(a) % valueOf(b);
  },
  $split: (obj: Doc, expr: unknown, options: Options) => {
    const [text, separator] = listOperands("$split", { obj, expr, options }, { min: 2 });
    if (text === null || text === undefined || separator === null || separator === undefined) {
      return null;
    }
    if (typeof text !== "string" || typeof separator !== "string") {
      throw new Error("$split needs a string to split and a string separator");
    }
    if (separator === "") throw new Error("$split needs a non-empty separator");
    return text.split(separator);
  },
  $size: (obj: Doc, expr: unknown, options: Options) => {
    const value = evalExpr(obj as never, (Array.isArray(expr) ? expr[0] : expr) as never, options);
    if (!Array.isArray(value)) throw new Error("$size needs a list");
    return value.length;
  },
  $arrayElemAt: (obj: Doc, expr: unknown, options: Options) => {
    const [list, index] = listOperands("$arrayElemAt", { obj, expr, options }, { min: 2 });
    if (list === null || list === undefined || index === null || index === undefined) {
      return null;
    }
    if (!Array.isArray(list)) throw new Error("$arrayElemAt needs a list");
    const n = isNumeric(index) ? valueOf(index) : Number.NaN;
    if (!Number.isInteger(n) || n < -(2 ** 31) || n > 2 ** 31 - 1) {
      throw new Error("$arrayElemAt needs a whole number of 32 bits as its index");
    }
    return n < 0 ? list[list.length + n] : list[n];
  },
};
