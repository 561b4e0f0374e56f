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

/**
 * The compact JSON text (`renderJson`'s) of a value rendered already, standing for that value
 * in a body: compact JSON rendering writes the text as it is; any other rendering (XML,
 * `pretty`, sorted keys) reads it back as the plain data it stands for.
 */
export class RenderedJson {
  constructor(readonly text: string) {}
}

/**
 * Turns the ObjectIds and dates among the top-level `fields` of `doc` into what rendering
 * makes of them (hex, `formatDate`), in `doc` itself; nothing else is touched. For a
 * document the service made for one answer and that nothing reads before it is rendered:
 * when its top level holds nothing else to convert, rendering finds it plain already and
 * passes it on instead of copying it (the copies of a page's 25 documents were most of its
 * conversion).
 */
export function plainFields(
  doc: Record<string, unknown>,
  fields: readonly string[],
  formatDate: DateFormatter,
): void {
  for (let i = 0; i < fields.length; i++) {
    const key = fields[i];
    const v = doc[key];
    if (v === null || typeof v !== "object" || !Object.hasOwn(doc, key)) continue;
    if (v instanceof Date) doc[key] = Number.isNaN(v.getTime()) ? null : formatDate(v);
    else if (
      // As `convert` reads them: only driver-made values are BSON.
      (v as { _bsontype?: unknown })._bsontype === "ObjectId" &&
      Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null
    ) doc[key] = objectIdHex(v as ObjectId);
  }
}

/** Nesting beyond this is a server bug (a cycle), not data. */
const MAX_DEPTH = 256;

/**
 * Returns `value` as plain objects, arrays, strings, numbers, booleans and null: ObjectId ->
 * hex, Date -> `formatDate`, Decimal128 -> string, Binary/Uint8Array -> Base64,
 * Long/Int32/Double -> number, bigint -> number (string when unsafe). Functions are dropped
 * from objects (null in arrays), as JSON does; an `undefined` member of an object may be kept
 * (undefined in arrays becomes null), and every rendering skips it, as JSON does. An object
 * or array that is plain data already (a stored document's address, its list of tags) is
 * returned as it is, not copied: the result is for rendering, and shares such parts with
 * `value`.
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
    // Copied from the first element that changes (none changes: `v` itself).
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      // Strings and booleans, most members of stored documents, stay as they are: no call.
      const kind = typeof item;
      const plain = kind === "string" || kind === "boolean"
        ? item
        : convert(item, fmt, depth + 1) ?? null;
      if (out === null) {
        if (plain === item) continue;
        out = v.slice(0, i);
      }
      out.push(plain);
    }
    return out ?? v;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : fmt(v);
    if (v instanceof RenderedJson) return JSON.parse(v.text);
    if (v instanceof Uint8Array) {
      return Buffer.from(v.buffer, v.byteOffset, v.length).toString("base64");
    }
    // Only driver-made values are BSON: a plain object carrying `_bsontype` is client data.
    const bson = (v as { _bsontype?: unknown })._bsontype;
    if (typeof bson === "string") return convertBson(bson, v);
  }
  if ((v as { [JSON_READY]?: boolean })[JSON_READY] === true) return v;
  const source = v as Record<string, unknown>;
  // Copied from the first member that changes (none changes: `v` itself). A member that
  // stays the same is not `__proto__` (copied as an own key); an `undefined` one stays too,
  // since every rendering drops it as JSON does (an item whose `_etag` an endpoint without
  // IF_MATCH unsets would otherwise be copied whole).
  let out: Record<string, unknown> | null = null;
  if (forIn && (proto === Object.prototype || proto === null)) {
    for (const key in source) {
      const member = source[key];
      const kind = typeof member;
      const plain = kind === "string" || kind === "boolean"
        ? member
        : convert(member, fmt, depth + 1);
      if (out === null) {
        if (plain === member && key !== "__proto__") continue;
        out = copyBefore(source, key, true);
      }
      copyMember(out, key, plain);
    }
  } else {
    for (const key of Object.keys(source)) {
      const member = source[key];
      const kind = typeof member;
      const plain = kind === "string" || kind === "boolean"
        ? member
        : convert(member, fmt, depth + 1);
      if (out === null) {
        if (plain === member && key !== "__proto__") continue;
        out = copyBefore(source, key, false);
      }
      copyMember(out, key, plain);
    }
  }
  // Not a plain object (a class instance that is not BSON): always a copy, as JSON sees it.
  return out ?? (proto === Object.prototype || proto === null ? v : { ...source });
}

/** A new object with the members of `source` that come before `key` (unchanged ones). */
function copyBefore(
  source: Record<string, unknown>,
  key: string,
  forIn: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of forIn ? keysIn(source) : Object.keys(source)) {
    if (k === key) break;
    out[k] = source[k];
  }
  return out;
}

function* keysIn(source: Record<string, unknown>): Generator<string> {
  for (const k in source) yield k;
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
