/**
 * The engine's sums, averages and extremes as MongoDB computes them, over numbers of every
 * BSON type: `$sum` and `$avg` (as `$group` accumulators and as expressions), `$min` and
 * `$max` accumulators. A `Decimal128` among the values makes an exact decimal result
 * (decimal.ts: `0.10 + 0.20` is `0.30`); `Long`, `Int32` and `Double` values count by their
 * value. `$min` and `$max` pick in MongoDB's order of types and values and skip null and
 * missing values.
 *
 * mingo's own skipped every BSON number (a `$sum` of decimals was 0, their `$avg` null) and
 * ordered them as opaque objects; its `$sum` and `$avg` expressions took only a list.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { Decimal128 } from "mongodb";
 * import { engineOptions } from "./engine.ts";
 *
 * const docs = [{ p: Decimal128.fromString("0.10") }, { p: Decimal128.fromString("0.20") }];
 * new Aggregator([{ $group: { _id: null, s: { $sum: "$p" } } }], engineOptions()).run(docs);
 * // [{ _id: null, s: Decimal128("0.30") }]
 * ```
 */
import * as accumulatorOperators from "mingo/operators/accumulator";
import * as expressionOperators from "mingo/operators/expression";
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import { ObjectId } from "../bson.ts";
import { isPlainObject } from "../../util/plain.ts";
import type { Doc } from "../types.ts";
import { compareValues } from "./compare.ts";
import {
  decimalAverage,
  decimalProduct,
  decimalQuotient,
  decimalSum,
  fromExact,
  roundedAt,
} from "./decimal.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const push = (accumulatorOperators as unknown as Record<string, AnyFn>).$push;

const bsonType = (v: unknown): string | undefined =>
  v !== null && typeof v === "object" ? (v as { _bsontype?: string })._bsontype : undefined;

const BSON_NUMBERS = new Set(["Decimal128", "Long", "Int32", "Double"]);

/** Whether `v` is a number of any type. */
const isNumeric = (v: unknown) =>
  typeof v === "number" || typeof v === "bigint" || BSON_NUMBERS.has(bsonType(v) ?? "");

/** The value of a number of any type as a JavaScript number. */
const valueOf = (v: unknown) => typeof v === "number" ? v : Number(String(v));

/** The sum of the numbers among `values` (others skipped): decimal when one is. */
function sumOf(values: unknown[]): unknown {
  const numbers = values.filter(isNumeric);
  if (numbers.some((v) => bsonType(v) === "Decimal128")) return decimalSum(numbers);
  let sum = 0;
  for (const n of numbers) sum += valueOf(n);
  return sum;
}

/** The mean of the numbers among `values` (others skipped), null when there are none. */
function averageOf(values: unknown[]): unknown {
  const numbers = values.filter(isNumeric);
  if (numbers.length === 0) return null;
  if (numbers.some((v) => bsonType(v) === "Decimal128")) return decimalAverage(numbers);
  let sum = 0;
  for (const n of numbers) sum += valueOf(n);
  return sum / numbers.length;
}

/** The least (`sign` -1) or greatest (1) of `values` in MongoDB's order; null and missing skipped. */
function extremeOf(values: unknown[], sign: 1 | -1): unknown {
  let best: unknown = undefined;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (best === undefined || compareValues(v, best) * sign > 0) best = v;
  }
  return best === undefined ? null : best;
}

/**
 * The values an expression operator works on: a list of expressions, each one value; one
 * expression, its value, or the members of the list it gives (MongoDB's reading of `$sum` and
 * `$avg` with one operand).
 */
function operands(obj: Doc, expr: unknown, options: Options): unknown[] {
  if (Array.isArray(expr)) return expr.map((e) => evalExpr(obj as never, e as never, options));
  const value = evalExpr(obj as never, expr as never, options);
  return Array.isArray(value) ? value : [value];
}

/** `$group` accumulators computed as MongoDB computes them (see the module doc). */
export const numericAccumulators: Record<string, AnyFn> = {
  $sum: (coll: Doc[], expr: unknown, options: Options) =>
    typeof expr === "number" ? coll.length * expr : sumOf(push(coll, expr, options)),
  $avg: (coll: Doc[], expr: unknown, options: Options) => averageOf(push(coll, expr, options)),
  $min: (coll: Doc[], expr: unknown, options: Options) => extremeOf(push(coll, expr, options), -1),
  $max: (coll: Doc[], expr: unknown, options: Options) => extremeOf(push(coll, expr, options), 1),
};

/**
 * `$sum`, `$avg`, `$min` and `$max` expressions computed as MongoDB computes them (see the
 * module doc). mingo
 * looks an operator up among the expressions first, in a `$group` too (with the group's
 * documents for a document): there they are the accumulators.
 */
export const numericExpressions: Record<string, AnyFn> = {
  $sum: (obj: Doc | Doc[], expr: unknown, options: Options) =>
    Array.isArray(obj)
      ? numericAccumulators.$sum(obj, expr, options)
      : sumOf(operands(obj, expr, options)),
  $avg: (obj: Doc | Doc[], expr: unknown, options: Options) =>
    Array.isArray(obj)
      ? numericAccumulators.$avg(obj, expr, options)
      : averageOf(operands(obj, expr, options)),
  $min: (obj: Doc | Doc[], expr: unknown, options: Options) =>
    Array.isArray(obj)
      ? numericAccumulators.$min(obj, expr, options)
      : extremeOf(operands(obj, expr, options), -1),
  $max: (obj: Doc | Doc[], expr: unknown, options: Options) =>
    Array.isArray(obj)
      ? numericAccumulators.$max(obj, expr, options)
      : extremeOf(operands(obj, expr, options), 1),
};

const EXPRESSIONS = expressionOperators as unknown as Record<string, AnyFn>;

/** Whether a number of a BSON type is among `values`. */
const holdsBsonNumber = (values: unknown[]) =>
  values.some((v) => BSON_NUMBERS.has(bsonType(v) ?? ""));

/** Whether every one of `values` is a number of any type. */
const allNumbers = (values: unknown[]) => values.every(isNumeric);

/**
 * An arithmetic expression (`$add`, `$subtract`, `$multiply`, `$divide`) that computes with
 * BSON numbers as MongoDB does (a `Decimal128` operand makes a decimal result) and leaves any
 * other operands (plain numbers, dates, null) to mingo's.
 */
function arithmetic(op: string, compute: (values: unknown[]) => unknown): AnyFn {
  const mingo = EXPRESSIONS[op];
  return (obj: Doc, expr: unknown, options: Options) => {
    if (Array.isArray(expr)) {
      const values = expr.map((e) => evalExpr(obj as never, e as never, options));
      if (holdsBsonNumber(values) && allNumbers(values)) return compute(values);
    }
    return mingo(obj, expr, options);
  };
}

const hasDecimal = (values: unknown[]) => values.some((v) => bsonType(v) === "Decimal128");

/** Arithmetic expressions over BSON numbers (see {@link arithmetic}). */
export const arithmeticExpressions: Record<string, AnyFn> = {
  $add: arithmetic(
    "$add",
    (values) =>
      hasDecimal(values) ? decimalSum(values) : values.reduce((s: number, v) => s + valueOf(v), 0),
  ),
  $multiply: arithmetic(
    "$multiply",
    (values) =>
      hasDecimal(values)
        ? decimalProduct(values)
        : values.reduce((p: number, v) => p * valueOf(v), 1),
  ),
  $subtract: arithmetic(
    "$subtract",
    ([a, b]) =>
      hasDecimal([a, b]) ? decimalSum([a, decimalProduct([b, -1])]) : valueOf(a) - valueOf(b),
  ),
  $divide: arithmetic("$divide", ([a, b]) => {
    if (valueOf(b) === 0) throw new Error("$divide: can't divide by zero");
    return hasDecimal([a, b]) ? decimalQuotient(a, b) : valueOf(a) / valueOf(b);
  }),
};

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
  if (to === "string" || to === 2) return stringOf;
  if (to === "objectId" || to === 7) return objectIdOf;
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

/** Time zones mingo reads itself: `Area/City` names and offsets (`+05:30`). */
const MINGO_ZONE = /^(?:[a-zA-Z_]+\/[a-zA-Z_]+|[+-]\d{2}(?::?\d{2})?)$/;

/** The UTC offset, in minutes, of time zone `zone` at `date`; throws for an unknown zone. */
function offsetMinutes(date: Date, zone: string): number {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    }).formatToParts(date);
  } catch {
    throw new Error(`unrecognized time zone identifier: ${zone}`);
  }
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const local = Date.UTC(
    part("year"),
    part("month") - 1,
    part("day"),
    part("hour"),
    part("minute"),
    part("second"),
  );
  return Math.round((local - Math.floor(date.getTime() / 1000) * 1000) / 60_000);
}

/** An offset in minutes as mingo reads one (`+0530`). */
function offsetText(minutes: number): string {
  const abs = Math.abs(minutes);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${minutes < 0 ? "-" : "+"}${pad(Math.floor(abs / 60))}${pad(abs % 60)}`;
}

/**
 * A date expression taking `{date, timezone}` that reads every time zone MongoDB does (`UTC`,
 * `Etc/GMT+5`, `America/Argentina/Buenos_Aires`: mingo's read `Area/City` names and offsets
 * only): such a zone is handed to mingo's as its offset at that date. A null time zone gives
 * null, as in MongoDB.
 */
function zoned(op: string): AnyFn {
  const mingo = EXPRESSIONS[op];
  return (obj: Doc, expr: unknown, options: Options) => {
    if (!isPlainObject(expr) || !Object.hasOwn(expr, "timezone")) return mingo(obj, expr, options);
    const zone = evalExpr(obj as never, expr.timezone as never, options);
    if (zone === null || zone === undefined) return null;
    if (typeof zone !== "string" || MINGO_ZONE.test(zone)) return mingo(obj, expr, options);
    const date = evalExpr(obj as never, expr.date as never, options);
    if (!(date instanceof Date)) return mingo(obj, expr, options);
    return mingo(obj, { ...expr, timezone: offsetText(offsetMinutes(date, zone)) }, options);
  };
}

/** Date expressions with MongoDB's time zones (see {@link zoned}). */
export const zonedDateExpressions: Record<string, AnyFn> = Object.fromEntries(
  [
    "$dateToString",
    "$dateToParts",
    "$year",
    "$month",
    "$dayOfMonth",
    "$dayOfWeek",
    "$dayOfYear",
    "$hour",
    "$minute",
    "$second",
    "$millisecond",
    "$week",
    "$isoWeek",
    "$isoWeekYear",
    "$isoDayOfWeek",
  ].map((op) => [op, zoned(op)]),
);

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
