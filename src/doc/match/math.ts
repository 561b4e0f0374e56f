/**
 * The one-number math operators (`$abs`, `$ceil`, `$floor`, `$sqrt`, `$exp`, `$ln`, `$log10`,
 * the trigonometric ones), `$log`, `$pow`, `$atan2` and `$isNumber` as MongoDB computes them,
 * over numbers of every BSON type: a `Decimal128` gives a `Decimal128` (exact for `$abs`,
 * `$ceil` and `$floor`), a 64-bit integer stays whole.
 *
 * mingo's refused a `Long` or a `Decimal128` ("must resolve to number": `$floor` of a `decimal`
 * field was an error), refused the one-element list form (`{$log10: [10]}`) and a null `$pow`
 * operand (MongoDB: null), gave NaN or an infinity where MongoDB refuses the operand (`$ln` of
 * 0, `$acos` of 2, `$sin` of an infinity), and `$isNumber` was false for a `Long`, an `Int32`
 * and a `Decimal128`.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { Decimal128 } from "mongodb";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $project: { _id: 0, f: { $floor: "$p" } } }], engineOptions())
 *   .run([{ p: Decimal128.fromString("-1.5") }]); // [{ f: Decimal128("-2") }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import * as accumulatorOperators from "mingo/operators/accumulator";
import type { Options } from "mingo/types";
import { Decimal128, Long } from "../bson.ts";
import type { Doc } from "../types.ts";
import { fromExact, roundedAt } from "./decimal.ts";
import { checkKeys, listOperands } from "./arguments.ts";
import { bsonType, isNumeric, numberValue } from "./numbers.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const PUSH = (accumulatorOperators as unknown as Record<string, AnyFn>).$push;

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** A numeric operand's value as a JavaScript number; an error for what is no number. */
function valueOf(op: string, v: unknown): number {
  const n = numberValue(v);
  if (n === undefined) throw new Error(`${op} only supports numeric types`);
  return n;
}

const isDecimal = (v: unknown) => bsonType(v) === "Decimal128";

/** A whole operand as a `bigint` (an `Int32`, a `Long`, a `bigint`), else undefined. */
function wholeOf(v: unknown): bigint | undefined {
  if (typeof v === "bigint") return v;
  const type = bsonType(v);
  if (type === "Long") return BigInt(String(v));
  if (type === "Int32") return BigInt(Number((v as { valueOf(): unknown }).valueOf()));
  return undefined;
}

/** A whole result: a plain number while exact, else a `Long`; an error past 64 bits. */
function wholeResult(op: string, n: bigint): number | Long {
  if (n > INT64_MAX || n < INT64_MIN) throw new Error(`${op}: the result overflows 64 bits`);
  return n >= -(2n ** 53n) && n <= 2n ** 53n ? Number(n) : Long.fromBigInt(n);
}

/** A computed result in the operand's type: a `Decimal128` for a decimal operand. */
const inKind = (like: unknown, n: number) => isDecimal(like) ? Decimal128.fromString(String(n)) : n;

/**
 * A one-number operator: null for null or missing, `compute` of the value otherwise, after
 * `check` (a domain error) when given.
 */
function unary(
  op: string,
  compute: (n: number) => number,
  check?: (n: number) => string | undefined,
): AnyFn {
  return (obj: Doc, expr: unknown, options: Options) => {
    const [v] = listOperands(op, { obj, expr, options }, { min: 1, lone: true });
    if (v === null || v === undefined) return null;
    const n = valueOf(op, v);
    if (Number.isNaN(n)) return v;
    const problem = check?.(n);
    if (problem) throw new Error(`${op}: ${problem}`);
    return inKind(v, compute(n));
  };
}

/** `$abs`, `$ceil` or `$floor`: exact on every type; a whole operand stays whole. */
function exactUnary(op: "$abs" | "$ceil" | "$floor"): AnyFn {
  return (obj: Doc, expr: unknown, options: Options) => {
    const [v] = listOperands(op, { obj, expr, options }, { min: 1, lone: true });
    if (v === null || v === undefined) return null;
    const n = valueOf(op, v);
    const whole = wholeOf(v);
    if (whole !== undefined) return wholeResult(op, op === "$abs" && whole < 0n ? -whole : whole);
    if (isDecimal(v)) {
      if (!Number.isFinite(n)) {
        return op === "$abs" && n < 0 ? Decimal128.fromString("Infinity") : v;
      }
      if (op === "$abs") return Decimal128.fromString(String(v).replace(/^-/, ""));
      return fromExact(roundedAt(v, 0, op === "$ceil" ? "ceil" : "floor")!);
    }
    return op === "$abs" ? Math.abs(n) : op === "$ceil" ? Math.ceil(n) : Math.floor(n);
  };
}

const infinite = (n: number) => Number.isFinite(n) ? undefined : "cannot take an infinity";
const unit = (n: number) => n < -1 || n > 1 ? "the operand must be within -1 and 1" : undefined;
const positive = (n: number) => n <= 0 ? "the operand must be a positive number" : undefined;

/** `$log: [number, base]`: both positive, the base not 1. */
function $log(obj: Doc, expr: unknown, options: Options): unknown {
  const [v, base] = listOperands("$log", { obj, expr, options }, { min: 2 });
  if (v === null || v === undefined || base === null || base === undefined) return null;
  const n = valueOf("$log", v);
  const b = valueOf("$log", base);
  if (Number.isNaN(n) || Number.isNaN(b)) return isDecimal(v) || isDecimal(base) ? v : NaN;
  if (n <= 0) throw new Error("$log: the number must be positive");
  if (b <= 0 || b === 1) throw new Error("$log: the base must be positive and not 1");
  return inKind(isDecimal(v) ? v : base, Math.log(n) / Math.log(b));
}

/**
 * `$pow: [base, exponent]`: whole operands with an exponent of 0 or more give a whole result
 * (a plain number while exact, else a `Long`; past 64 bits a double, as in MongoDB); 0 to a
 * negative power is refused.
 */
function $pow(obj: Doc, expr: unknown, options: Options): unknown {
  const [base, exponent] = listOperands("$pow", { obj, expr, options }, { min: 2 });
  if (base === null || base === undefined || exponent === null || exponent === undefined) {
    return null;
  }
  const b = valueOf("$pow", base);
  const e = valueOf("$pow", exponent);
  if (b === 0 && e < 0) throw new Error("$pow cannot raise 0 to a negative exponent");
  const result = Math.pow(b, e);
  if (isDecimal(base) || isDecimal(exponent)) return Decimal128.fromString(String(result));
  const wb = wholeOf(base) ?? (Number.isInteger(b) ? BigInt(b) : undefined);
  const we = wholeOf(exponent) ?? (Number.isInteger(e) ? BigInt(e) : undefined);
  if (wb === undefined || we === undefined || we < 0n) return result;
  let exact: bigint | undefined;
  if (wb >= -1n && wb <= 1n) exact = wb === -1n ? (we % 2n === 0n ? 1n : -1n) : we === 0n ? 1n : wb;
  else if (we <= 64n) exact = wb ** we;
  return exact !== undefined && exact <= INT64_MAX && exact >= INT64_MIN
    ? wholeResult("$pow", exact)
    : result;
}

/** `$atan2: [y, x]`. */
function $atan2(obj: Doc, expr: unknown, options: Options): unknown {
  const [y, x] = listOperands("$atan2", { obj, expr, options }, { min: 2 });
  if (y === null || y === undefined || x === null || x === undefined) return null;
  const result = Math.atan2(valueOf("$atan2", y), valueOf("$atan2", x));
  return isDecimal(y) || isDecimal(x) ? Decimal128.fromString(String(result)) : result;
}

/** The numbers among `values` (of any numeric type), sorted. */
const sortedNumbers = (values: unknown[]) =>
  values.filter(isNumeric).map((v) => numberValue(v)!).filter((n) => !Number.isNaN(n))
    .sort((a, b) => a - b);

/**
 * The `p` percentile (0 to 1) of sorted numbers: the value of rank ⌈p·n⌉ (`approximate`, which
 * is exact at the sizes a request holds, and `discrete`), or interpolated between the two
 * nearest ranks (`continuous`).
 */
function percentileOf(sorted: number[], p: number, method: string): number {
  if (method !== "continuous") return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
  const at = p * (sorted.length - 1);
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (at - low) * (sorted[high] - sorted[low]);
}

const PERCENTILE_METHODS = new Set(["approximate", "discrete", "continuous"]);

/**
 * `$percentile: {input, p, method}` or `$median: {input, method}`, as an expression (the input
 * a list, or one value) and as a `$group` accumulator (one value a document); numbers of any
 * type count, other values do not; null for each percentile when there is none. The arguments are checked as
 * MongoDB checks them.
 */
function percentile(op: "$percentile" | "$median"): AnyFn {
  return (obj: Doc | Doc[], expr: unknown, options: Options) => {
    const allowed = op === "$percentile" ? ["input", "p", "method"] : ["input", "method"];
    const args = checkKeys(op, expr, allowed, allowed);
    const method = args.method;
    if (typeof method !== "string" || !PERCENTILE_METHODS.has(method)) {
      throw new Error(`${op}: 'method' must be "approximate", "discrete" or "continuous"`);
    }
    let ps = [0.5];
    if (op === "$percentile") {
      const given = Array.isArray(obj) ? args.p : evalExpr(obj as never, args.p as never, options);
      if (
        !Array.isArray(given) || given.length === 0 ||
        given.some((p) => !isNumeric(p) || !(numberValue(p)! >= 0 && numberValue(p)! <= 1))
      ) {
        throw new Error("$percentile: 'p' must be a non-empty list of numbers from 0 to 1");
      }
      ps = given.map((p) => numberValue(p)!);
    }
    let values: unknown[];
    if (Array.isArray(obj)) {
      // mingo's $push evaluates the expression on each document of the group.
      values = PUSH(obj, args.input, options);
    } else {
      const input = evalExpr(obj as never, args.input as never, options);
      values = Array.isArray(input) ? input : [input];
    }
    const sorted = sortedNumbers(values);
    const out = ps.map((p) => sorted.length === 0 ? null : percentileOf(sorted, p, method));
    return op === "$median" ? out[0] : out;
  };
}

/** `$percentile` and `$median`, as expressions and accumulators (see {@link percentile}). */
export const percentileExpressions: Record<string, AnyFn> = {
  $percentile: percentile("$percentile"),
  $median: percentile("$median"),
};

/** The operators of this module, by name. */
export const mathExpressions: Record<string, AnyFn> = {
  $abs: exactUnary("$abs"),
  $ceil: exactUnary("$ceil"),
  $floor: exactUnary("$floor"),
  $sqrt: unary("$sqrt", Math.sqrt, (n) => n < 0 ? "the operand must not be negative" : undefined),
  $exp: unary("$exp", Math.exp),
  $ln: unary("$ln", Math.log, positive),
  $log10: unary("$log10", Math.log10, positive),
  $log,
  $pow,
  $sin: unary("$sin", Math.sin, infinite),
  $cos: unary("$cos", Math.cos, infinite),
  $tan: unary("$tan", Math.tan, infinite),
  $asin: unary("$asin", Math.asin, unit),
  $acos: unary("$acos", Math.acos, unit),
  $atan: unary("$atan", Math.atan),
  $atan2,
  $sinh: unary("$sinh", Math.sinh),
  $cosh: unary("$cosh", Math.cosh),
  $tanh: unary("$tanh", Math.tanh),
  $asinh: unary("$asinh", Math.asinh),
  $acosh: unary("$acosh", Math.acosh, (n) => n < 1 ? "the operand must be 1 or more" : undefined),
  $atanh: unary("$atanh", Math.atanh, unit),
  $degreesToRadians: unary("$degreesToRadians", (n) => n * Math.PI / 180),
  $radiansToDegrees: unary("$radiansToDegrees", (n) => n * 180 / Math.PI),
  $isNumber: (obj: Doc, expr: unknown, options: Options) => {
    const [v] = listOperands("$isNumber", { obj, expr, options }, { min: 1, lone: true });
    return isNumeric(v);
  },
};
