/**
 * Exact decimal sums and averages for `Decimal128` values, as MongoDB computes `$sum` and
 * `$avg` over decimals: a value is a coefficient and a power of ten (`1.25` is 125 × 10^-2),
 * added exactly with `bigint`s and rounded to the 34 significant digits of a `Decimal128`
 * (half to even). Plain numbers join a decimal sum by their shortest decimal text (`0.1` is
 * 1 × 10^-1), as MongoDB converts a double to a decimal.
 *
 * @example
 * ```ts
 * import { Decimal128 } from "mongodb";
 * const sum = decimalSum([Decimal128.fromString("0.10"), Decimal128.fromString("0.20")]);
 * String(sum); // "0.30"
 * ```
 */
import { Decimal128 } from "../bson.ts";
import { isNumeric } from "./numbers.ts";

/** A finite decimal: `coefficient` × 10^`exponent`. */
export interface Exact {
  coefficient: bigint;
  exponent: number;
}

const DECIMAL_TEXT = /^([+-]?)(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** The exact value of a number's decimal text; null for NaN and the infinities. */
function exactOf(text: string): Exact | null {
  const m = DECIMAL_TEXT.exec(text);
  if (!m) return null;
  const [, sign, whole, fraction = "", exp = "0"] = m;
  const digits = BigInt(whole + fraction);
  return { coefficient: sign === "-" ? -digits : digits, exponent: Number(exp) - fraction.length };
}

/** `value` at `exponent` (no larger than its own): its coefficient scaled. */
const scaled = (value: Exact, exponent: number) =>
  value.coefficient * 10n ** BigInt(value.exponent - exponent);

/** The most significant digits a `Decimal128` holds. */
const DIGITS = 34;

/** `value` rounded to {@link DIGITS} significant digits, half to even, as a `Decimal128`. */
function toDecimal(value: Exact): Decimal128 {
  let { coefficient, exponent } = value;
  const negative = coefficient < 0n;
  let digits = negative ? -coefficient : coefficient;
  const extra = digits.toString().length - DIGITS;
  if (extra > 0) {
    const unit = 10n ** BigInt(extra);
    const kept = digits / unit;
    const rest = digits % unit;
    const half = unit / 2n;
    digits = rest > half || (rest === half && kept % 2n === 1n) ? kept + 1n : kept;
    exponent += extra;
  }
  coefficient = negative ? -digits : digits;
  return Decimal128.fromStringWithRounding(`${coefficient}E${exponent}`);
}

/** A number of any type as decimal text, or null when it is no number. */
function decimalText(v: unknown): string | null {
  return isNumeric(v) ? String(v) : null;
}

/** The exact sum of `values` (numbers of any type); NaN/infinity: a `Decimal128` of it. */
export function decimalSum(values: unknown[]): Decimal128 {
  const exact = exactSum(values);
  return typeof exact === "number" ? Decimal128.fromString(String(exact)) : toDecimal(exact);
}

/** The mean of `values` (numbers of any type, at least one) as a `Decimal128`. */
export function decimalAverage(values: unknown[]): Decimal128 {
  const exact = exactSum(values);
  if (typeof exact === "number") return Decimal128.fromString(String(exact / values.length));
  // Enough digits below the point for 34 significant ones, then one more to round on.
  const shift = DIGITS + 2 + values.length.toString().length;
  const dividend = exact.coefficient * 10n ** BigInt(shift);
  const count = BigInt(values.length);
  let coefficient = dividend / count;
  let exponent = exact.exponent - shift;
  // An exact quotient keeps no more digits than it needs, down to the sum's own exponent
  // (IEEE 754's ideal exponent: 3.75 / 2 is 1.875, 4.0 / 2 is 2.0).
  if (dividend % count === 0n) {
    while (exponent < exact.exponent && coefficient % 10n === 0n) {
      coefficient /= 10n;
      exponent++;
    }
  }
  return toDecimal({ coefficient, exponent });
}

/** The product of `values` (numbers of any type) as a `Decimal128`, exact to 34 digits. */
export function decimalProduct(values: unknown[]): Decimal128 {
  let product: Exact = { coefficient: 1n, exponent: 0 };
  for (const v of values) {
    const text = decimalText(v);
    const exact = text === null ? null : exactOf(text);
    if (exact === null) {
      return Decimal128.fromString(
        String(values.reduce((p: number, n) => p * Number(String(n)), 1)),
      );
    }
    product = {
      coefficient: product.coefficient * exact.coefficient,
      exponent: product.exponent + exact.exponent,
    };
  }
  return toDecimal(product);
}

/** `dividend` / `divisor` (numbers of any type, the divisor not 0) as a `Decimal128`. */
export function decimalQuotient(dividend: unknown, divisor: unknown): Decimal128 {
  const a = exactOf(decimalText(dividend) ?? "");
  const b = exactOf(decimalText(divisor) ?? "");
  if (a === null || b === null) {
    return Decimal128.fromString(String(Number(String(dividend)) / Number(String(divisor))));
  }
  const shift = DIGITS + 2 + b.coefficient.toString().length;
  const scaledDividend = a.coefficient * 10n ** BigInt(shift);
  let coefficient = scaledDividend / b.coefficient;
  let exponent = a.exponent - b.exponent - shift;
  if (scaledDividend % b.coefficient === 0n) {
    const ideal = a.exponent - b.exponent;
    while (exponent < ideal && coefficient % 10n === 0n) {
      coefficient /= 10n;
      exponent++;
    }
  }
  return toDecimal({ coefficient, exponent });
}

/**
 * `value` (a number of any type, finite) rounded to `place` digits after the point (before it
 * when negative): half to even (`round`), toward zero (`trunc`), down (`floor`) or up
 * (`ceil`), on its decimal value (a
 * plain number's shortest decimal text, as MongoDB reads one: 1.35 is 1.35). Undefined for
 * NaN and the infinities, which round to themselves.
 */
export function roundedAt(
  value: unknown,
  place: number,
  mode: "round" | "trunc" | "floor" | "ceil",
): { exact: Exact; decimal: boolean } | undefined {
  const exact = exactOf(decimalText(value) ?? "");
  if (exact === null) return undefined;
  const decimal = (value as { _bsontype?: string })?._bsontype === "Decimal128";
  const drop = -place - exact.exponent;
  if (drop <= 0) return { exact, decimal };
  const unit = 10n ** BigInt(drop);
  const negative = exact.coefficient < 0n;
  const digits = negative ? -exact.coefficient : exact.coefficient;
  let kept = digits / unit;
  const rest = digits % unit;
  if (mode === "round") {
    const half = unit / 2n;
    if (rest > half || (rest === half && kept % 2n === 1n)) kept += 1n;
  } else if (rest > 0n && (mode === "floor" ? negative : mode === "ceil" && !negative)) {
    // Away from zero: down for a negative value, up for a positive one.
    kept += 1n;
  }
  return { exact: { coefficient: negative ? -kept : kept, exponent: -place }, decimal };
}

/** An exact value as a plain number, or as a `Decimal128`. */
export function fromExact(value: { exact: Exact; decimal: boolean }): number | Decimal128 {
  const { coefficient, exponent } = value.exact;
  return value.decimal ? toDecimal(value.exact) : Number(`${coefficient}e${exponent}`);
}

/**
 * `value` without trailing zeros (`10.50` is `10.5`, `1.0E+3` is `1E+3`): one form for every
 * way of writing a number, as a group key needs; NaN and the infinities as they are.
 */
export function normalizedDecimal(value: Decimal128): Decimal128 {
  const exact = exactOf(String(value));
  if (exact === null) return value;
  let { coefficient, exponent } = exact;
  if (coefficient === 0n) return Decimal128.fromString("0");
  while (coefficient % 10n === 0n) {
    coefficient /= 10n;
    exponent++;
  }
  return toDecimal({ coefficient, exponent });
}

/**
 * The remainder of `dividend` / `divisor` (numbers of any type, the divisor not 0), truncated
 * division (the sign of the dividend), as a `Decimal128`, exact.
 */
export function decimalRemainder(dividend: unknown, divisor: unknown): Decimal128 {
  const a = exactOf(decimalText(dividend) ?? "");
  const b = exactOf(decimalText(divisor) ?? "");
  if (a === null || b === null) {
    return Decimal128.fromString(String(Number(String(dividend)) % Number(String(divisor))));
  }
  const exponent = Math.min(a.exponent, b.exponent);
  return toDecimal({ coefficient: scaled(a, exponent) % scaled(b, exponent), exponent });
}

/** The exact sum, or the JavaScript sum when a value is NaN or infinite. */
function exactSum(values: unknown[]): Exact | number {
  const parts: Exact[] = [];
  for (const v of values) {
    const text = decimalText(v);
    const exact = text === null ? null : exactOf(text);
    if (exact === null) return values.reduce((sum: number, n) => sum + Number(String(n)), 0);
    parts.push(exact);
  }
  const exponent = Math.min(0, ...parts.map((p) => p.exponent));
  let coefficient = 0n;
  for (const part of parts) coefficient += scaled(part, exponent);
  return { coefficient, exponent };
}
