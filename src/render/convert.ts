/**
 * One pass turning a response body into JSON-safe plain values: BSON types become
 * strings or numbers, dates are formatted, bytes become Base64.
 */
import { Buffer } from "node:buffer";
import { setOwn } from "../domain/keys.ts";
import { type ObjectId, objectIdHex } from "../doc/bson.ts";

/** Formats a date for output (DATE_FORMAT). */
export type DateFormatter = (d: Date) => string;

/**
 * Marks an object the service built itself from strings and plain objects of strings (an
 * item's `_links`) and that nothing changes before it is rendered: rendering passes it as
 * it is instead of walking and copying it (the 100 link objects of a page of 25 were over
 * 40% of its conversion). JSON and the XML renderer ignore symbol keys.
 */
export const JSON_READY: unique symbol = Symbol("JSON-ready");

/** Nesting beyond this is a server bug (a cycle), not data. */
const MAX_DEPTH = 256;

/**
 * Returns a copy of `value` made of plain objects, arrays, strings, numbers, booleans and
 * null: ObjectId -> hex, Date -> `formatDate`, Decimal128 -> string, Binary/Uint8Array ->
 * Base64, Long/Int32/Double -> number, bigint -> number (string when unsafe).
 * `undefined` and functions are dropped from objects (null in arrays), as JSON does.
 */
export function toPlain(value: unknown, formatDate: DateFormatter): unknown {
  forIn = !hasEnumerable(Object.prototype);
  return convert(value, formatDate, 0);
}

/**
 * Whether plain objects are walked with for-in, which uses V8's enumeration cache and is
 * faster than `Object.keys`, but also lists enumerable members of Object.prototype: checked
 * once per body (nothing in the service adds any; a dependency could).
 */
let forIn = true;

function hasEnumerable(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

function convert(v: unknown, fmt: DateFormatter, depth: number): unknown {
  if (v === null || typeof v !== "object") return primitive(v);
  if (depth > MAX_DEPTH) throw new Error("response body nested too deeply (cycle?)");
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = convert(v[i], fmt, depth + 1) ?? null;
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : fmt(v);
    if (v instanceof Uint8Array) {
      return Buffer.from(v.buffer, v.byteOffset, v.length).toString("base64");
    }
    // Only driver-made values are BSON: a plain object carrying `_bsontype` is client data.
    const bson = (v as { _bsontype?: unknown })._bsontype;
    if (typeof bson === "string") return convertBson(bson, v);
  }
  if ((v as { [JSON_READY]?: boolean })[JSON_READY] === true) return v;
  const out: Record<string, unknown> = {};
  if (forIn && (proto === Object.prototype || proto === null)) {
    for (const key in v) {
      copyMember(out, key, convert((v as Record<string, unknown>)[key], fmt, depth + 1));
    }
  } else {
    for (const key of Object.keys(v)) {
      copyMember(out, key, convert((v as Record<string, unknown>)[key], fmt, depth + 1));
    }
  }
  return out;
}

function copyMember(out: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined) return;
  // Plain assignment makes an own data property for every key but `__proto__` (the one
  // accessor of Object.prototype), and is several times faster than defineProperty.
  if (key === "__proto__") setOwn(out, key, value);
  else out[key] = value;
}

/** A primitive as JSON takes it: non-finite numbers null, big integers numbers or text. */
function primitive(v: unknown): unknown {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v : null;
    case "bigint":
      return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  return v; // null
}

function convertBson(type: string, v: object): unknown {
  // The driver's BSON classes, as far as rendering reads them (`type` says which one `v` is).
  const bson = v as {
    toHexString(): string;
    toString(encoding?: string): string;
    toNumber(): number;
    oid?: { _bsontype?: string; toHexString(): string };
    collection: string;
    db?: string;
  };
  switch (type) {
    case "ObjectId":
      return objectIdHex(v as ObjectId);
    case "Binary":
      return bson.toString("base64");
    case "Long":
      return bson.toNumber();
    case "DBRef": {
      const id = bson.oid;
      const ref: Record<string, unknown> = {
        $ref: bson.collection,
        $id: id?._bsontype === "ObjectId" ? id.toHexString() : id,
      };
      if (bson.db) ref.$db = bson.db;
      return ref;
    }
    case "Int32":
    case "Double":
      return bson.valueOf();
    default:
      // Decimal128, Timestamp, BSONRegExp, Code, ...: their string form.
      return String(bson.toString());
  }
}
