/**
 * Numbers of any BSON numeric type, for the engine's operators that read them: a JavaScript
 * number, a `bigint`, or a BSON `Int32`, `Long`, `Double` or `Decimal128`; their value, and
 * their whole part (`$size`, `$mod`).
 */

/** A value's BSON type name (`Decimal128`, `ObjectId`...), undefined for others. */
export const bsonType = (v: unknown): string | undefined =>
  v !== null && typeof v === "object" ? (v as { _bsontype?: string })._bsontype : undefined;

const BSON_NUMBERS = new Set(["Decimal128", "Long", "Int32", "Double"]);

/** Whether `v` is a number of a BSON type (`Decimal128`, `Long`, `Int32`, `Double`). */
export const isBsonNumber = (v: unknown): boolean => BSON_NUMBERS.has(bsonType(v) ?? "");

/** Whether `v` is a number of any type. */
export const isNumeric = (v: unknown): boolean =>
  typeof v === "number" || typeof v === "bigint" || isBsonNumber(v);

/** The value of a number of any type as a JavaScript number (NaN for what is none). */
export const valueOf = (v: unknown): number => numberValue(v) ?? Number.NaN;

/** The value of a number of any numeric type, as a JavaScript number; undefined for others. */
export function numberValue(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  switch (bsonType(v)) {
    case "Int32":
    case "Double":
      return Number((v as { valueOf(): unknown }).valueOf());
    case "Long":
    case "Decimal128":
      return Number(String(v));
  }
  return undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * `v` truncated toward zero to a 64-bit integer, as MongoDB reads the value of `$mod`'s field
 * and its operands; undefined for what is no number, not finite, or outside 64 bits.
 */
export function truncated(v: unknown): bigint | undefined {
  if (typeof v === "bigint") return v >= INT64_MIN && v <= INT64_MAX ? v : undefined;
  if (bsonType(v) === "Long") return BigInt(String(v));
  const n = numberValue(v);
  if (n === undefined || !Number.isFinite(n)) return undefined;
  const whole = BigInt(Math.trunc(n));
  return whole >= INT64_MIN && whole <= INT64_MAX ? whole : undefined;
}

/** `v` as a whole number when it is a number without a fraction; else undefined. */
export function wholeNumber(v: unknown): bigint | undefined {
  const n = bsonType(v) === "Long" ? undefined : numberValue(v);
  if (n !== undefined && !Number.isInteger(n)) return undefined;
  return truncated(v);
}
