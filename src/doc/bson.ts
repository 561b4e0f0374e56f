/**
 * The BSON value types used everywhere in the service.
 *
 * They are the MongoDB driver's own copy of `bson`, so that one class identity exists in the
 * process: values the driver returns must pass the same `instanceof` checks as values the
 * service creates. That copy is loaded by itself, without the driver (about a fifth of a
 * second of every start), through the driver's package: `bson` required from there is the
 * module the driver requires, the same instance once the MongoDB store loads the driver.
 * Where no package directory can be read (no `node_modules`), the driver is loaded for it.
 */
import type * as Driver from "mongodb";
import { Buffer } from "node:buffer";
import { createRequire } from "node:module";

type Bson = typeof Driver.BSON;

/** The driver's `bson`, required from the driver's package directory; null without one. */
function driversBson(): Bson | null {
  try {
    const driver = Deno.realPathSync(new URL("../../node_modules/mongodb", import.meta.url));
    return createRequire(`${driver}/package.json`)("bson") as Bson;
  } catch {
    return null;
  }
}

const bson: Bson = driversBson() ?? (await import("mongodb")).BSON;

export const ObjectId: typeof Driver.ObjectId = bson.ObjectId;
export type ObjectId = Driver.ObjectId;
export const Binary: typeof Driver.Binary = bson.Binary;
export type Binary = Driver.Binary;
export const DBRef: typeof Driver.DBRef = bson.DBRef;
export type DBRef = Driver.DBRef;
export const Decimal128: typeof Driver.Decimal128 = bson.Decimal128;
export type Decimal128 = Driver.Decimal128;
export const Long: typeof Driver.Long = bson.Long;
export type Long = Driver.Long;
/** The size in bytes of a document as BSON (as MongoDB's `$bsonSize` counts it). */
export const bsonByteSize: (doc: Record<string, unknown>) => number = (doc) =>
  bson.calculateObjectSize(doc);
/** Extended JSON (canonical mode keeps BSON types through text). */
export const EJSON: typeof Driver.BSON.EJSON = bson.EJSON;

/** Renders an id for URLs, `Location` headers and messages: an ObjectId as its hex. */
export function idToString(id: unknown): string {
  return id instanceof ObjectId ? objectIdHex(id) : String(id);
}

// The driver's hex conversions go through Node's Buffer, which under Deno is several times
// slower than a table; ids are converted on every read (URLs, index keys, rendering).
const HEX_DIGITS = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
const HEX_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUES["0123456789abcdef".charCodeAt(i)] = i;
  HEX_VALUES["0123456789ABCDEF".charCodeAt(i)] = i;
}
const hexCodes: number[] = new Array(24).fill(0);
const prefixedCodes: number[] = new Array(25).fill(0);

/**
 * The 24 lower-case hex digits of an ObjectId (what `toHexString` answers), after
 * `prefix` (one character) when given.
 */
export function objectIdHex(id: ObjectId, prefix?: string): string {
  const b = id.id;
  const codes = prefix === undefined ? hexCodes : prefixedCodes;
  let at = 0;
  if (prefix !== undefined) codes[at++] = prefix.charCodeAt(0);
  for (let i = 0; i < 12; i++) {
    codes[at++] = HEX_DIGITS[b[i] >> 4];
    codes[at++] = HEX_DIGITS[b[i] & 15];
  }
  // One flat string: a concatenation would leave a rope that every later use flattens.
  return String.fromCharCode.apply(null, codes);
}

/** Ids whose bytes share one slab (one small buffer each would cost more than the id). */
const IDS_PER_SLAB = 4096;
let slab = Buffer.allocUnsafeSlow(12 * IDS_PER_SLAB);
let slabUsed = 0;

/**
 * The ObjectId of 24 hex digits (either case), or null when `hex` is not one. Many times
 * faster than the driver's constructor, which decodes through Node's Buffer and copies
 * typed arrays into new Buffers.
 */
export function parseObjectId(hex: string): ObjectId | null {
  if (hex.length !== 24) return null;
  if (slabUsed === slab.length) {
    slab = Buffer.allocUnsafeSlow(12 * IDS_PER_SLAB);
    slabUsed = 0;
  }
  for (let i = 0; i < 12; i++) {
    const hi = hex.charCodeAt(2 * i), lo = hex.charCodeAt(2 * i + 1);
    const h = hi < 128 ? HEX_VALUES[hi] : -1, l = lo < 128 ? HEX_VALUES[lo] : -1;
    if (h < 0 || l < 0) return null;
    slab[slabUsed + i] = (h << 4) | l;
  }
  // A Buffer is taken as it is; any other byte array would be copied into a new one.
  const id = new ObjectId(slab.subarray(slabUsed, slabUsed + 12));
  slabUsed += 12;
  return id;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 0x7fffffff;
const INT64_MIN = -Math.pow(2, 63);
const INT64_MAX = Math.pow(2, 63) - 1;
/** Past this nesting the library writes the rest (and reports cycles). */
const DIRECT_DEPTH = 64;

/**
 * Canonical Extended JSON text of `value`: exactly what `EJSON.stringify(value,
 * { relaxed: false })` answers, written directly for strings, numbers, booleans, null,
 * arrays, plain objects, Dates and ObjectIds (the library builds a whole wrapped copy
 * first, which costs every write twice: the ETag and the stored text). Anything else is
 * handed to the library, value by value.
 */
export function canonicalEjson(value: unknown): string {
  return writeEjson(value, 0, false) ?? "null";
}

/**
 * {@link canonicalEjson} of a plain object without its members `a` and `b`: the text of a
 * copy of `doc` without them, written without making the copy (an ETag is the hash of a
 * document but its ETag and links).
 */
export function canonicalEjsonWithout(doc: Record<string, unknown>, a: string, b: string): string {
  return writeWithout(doc, a, b, false);
}

/** {@link compactEjson} of a plain object without its members `a` and `b` (as above). */
export function compactEjsonWithout(doc: Record<string, unknown>, a: string, b: string): string {
  return writeWithout(doc, a, b, true);
}

function writeWithout(
  doc: Record<string, unknown>,
  a: string,
  b: string,
  compact: boolean,
): string {
  const proto = Object.getPrototypeOf(doc);
  if ((proto !== Object.prototype && proto !== null) || doc._bsontype !== undefined) {
    const { [a]: _a, [b]: _b, ...rest } = doc;
    return writeEjson(rest, 0, compact) ?? "null";
  }
  let out = "{";
  let first = true;
  for (const key of Object.keys(doc)) {
    if (key === a || key === b) continue;
    const text = writeEjson(doc[key], 1, compact);
    if (text === undefined) continue;
    out += (first ? "" : ",") + quotedKey(key) + text;
    first = false;
  }
  return out + "}";
}

/**
 * The embedded store's text of a document: {@link canonicalEjson} but for finite numbers,
 * written as plain JSON numbers, and valid dates, written `{"$date": <ms>}` (Extended
 * JSON's legacy form). It reads back to the same values (JavaScript has one number type)
 * in fewer bytes and fewer objects to revive.
 */
export function compactEjson(value: unknown): string {
  return writeEjson(value, 0, true) ?? "null";
}

/** The text of `v`, or undefined where JSON leaves a member out (functions, symbols). */
function writeEjson(v: unknown, depth: number, compact: boolean): string | undefined {
  switch (typeof v) {
    case "string":
      return JSON.stringify(v);
    case "number":
      return compact && Number.isFinite(v) && !Object.is(v, -0) ? String(v) : canonicalNumber(v);
    case "boolean":
      return v ? "true" : "false";
    case "undefined":
      return "null";
    case "function":
    case "symbol":
      return undefined;
  }
  if (v === null) return "null";
  if (depth > DIRECT_DEPTH || typeof v !== "object") return EJSON.stringify(v, { relaxed: false });
  if (Array.isArray(v)) {
    let out = "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ",";
      out += (i in v ? writeEjson(v[i], depth + 1, compact) : undefined) ?? "null";
    }
    return out + "]";
  }
  if (v instanceof Date) {
    const ms = v.getTime();
    return compact && Number.isFinite(ms) ? `{"$date":${ms}}` : `{"$date":{"$numberLong":"${ms}"}}`;
  }
  if (v instanceof ObjectId) return `{"$oid":"${objectIdHex(v)}"}`;
  const proto = Object.getPrototypeOf(v);
  // A plain object carrying `_bsontype` is something the library decides about.
  if (
    (proto !== Object.prototype && proto !== null) ||
    (v as { _bsontype?: unknown })._bsontype !== undefined
  ) {
    return EJSON.stringify(v, { relaxed: false });
  }
  let out = "{";
  let first = true;
  for (const key of Object.keys(v)) {
    const text = writeEjson((v as Record<string, unknown>)[key], depth + 1, compact);
    if (text === undefined) continue;
    out += (first ? "" : ",") + quotedKey(key) + text;
    first = false;
  }
  return out + "}";
}

/** Member names quoted (with their colon) once: documents repeat them. */
const quotedKeys = new Map<string, string>();
const QUOTED_KEYS = 4096;

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key) + ":";
    if (quotedKeys.size >= QUOTED_KEYS) quotedKeys.clear();
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

function canonicalNumber(n: number): string {
  if (Number.isInteger(n) && !Object.is(n, -0)) {
    if (n >= INT32_MIN && n <= INT32_MAX) return `{"$numberInt":"${n}"}`;
    if (n >= INT64_MIN && n <= INT64_MAX) return `{"$numberLong":"${n}"}`;
  }
  return `{"$numberDouble":"${Object.is(n, -0) ? "-0.0" : String(n)}"}`;
}
