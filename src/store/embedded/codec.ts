/**
 * Storage encoding: canonical Extended JSON for documents, compact string keys for
 * `_id` values and index entries.
 */
import type { Doc } from "../store.ts";
import {
  compactEjson,
  EJSON,
  Long,
  type ObjectId,
  objectIdHex,
  parseObjectId,
} from "../../doc/bson.ts";

/**
 * Serializes a document as Extended JSON, keeping BSON types through a restart: canonical
 * but for plain numbers and `{"$date": <ms>}` dates (see `compactEjson`); files written
 * with fully canonical text read the same.
 */
export function encodeDoc(doc: Doc): string {
  return compactEjson(doc);
}

/**
 * Parses a stored document back into JS/BSON values (as `EJSON.parse` in relaxed mode).
 * Plain JSON parsing first; the common wrappers (`$oid`, `$numberInt`, `$numberDouble`,
 * `$date`) are revived directly and every other wrapper by the EJSON library, which is
 * several times slower over a whole document.
 */
export function decodeDoc(text: string, options: DecodeOptions = {}): Doc {
  exactLongs = options.exactLongs ?? false;
  try {
    return revive(JSON.parse(text)) as Doc;
  } finally {
    exactLongs = false;
  }
}

/** How stored text is read back. */
export interface DecodeOptions {
  /**
   * `{"$numberLong": ...}` is always a Long (text this version writes: a plain number is a
   * plain JSON number). Off for databases created by earlier versions, whose fully
   * canonical text wrote large plain numbers the same way: there it is a Long only within
   * 32 bits, and a number beyond.
   */
  exactLongs?: boolean;
}

/**
 * Decodes one stored document kept as text until first use (see `DocMap`).
 *
 * Equal dates that follow each other (`_created` and `_updated`, documents written in the
 * same second) become one shared Date: within the document and with the stored document
 * decoded before it. Only for documents the store keeps, which are never mutated in place
 * and are copied before they are handed out.
 */
export function decodeStored(text: string, options: DecodeOptions = {}): Doc {
  sharingDates = true;
  lastDate = lastStoredDate;
  exactLongs = options.exactLongs ?? false;
  try {
    return revive(JSON.parse(text)) as Doc;
  } finally {
    lastStoredDate = lastDate;
    sharingDates = false;
    exactLongs = false;
    lastDate = null;
  }
}

/**
 * Decodes stored documents given as their texts joined by U+0001 (as the loader reads
 * them: see `DocMap`) with one parse, as {@link decodeStored} decodes each.
 */
export function decodeJoined(texts: string, options: DecodeOptions = {}): Doc[] {
  const items = JSON.parse("[" + texts.replaceAll("\u0001", ",") + "]") as unknown[];
  sharingDates = true;
  lastDate = lastStoredDate;
  exactLongs = options.exactLongs ?? false;
  try {
    for (let i = 0; i < items.length; i++) items[i] = revive(items[i]);
    return items as Doc[];
  } finally {
    lastStoredDate = lastDate;
    sharingDates = false;
    exactLongs = false;
    lastDate = null;
  }
}

/** The last date {@link decodeStored} revived. */
let lastStoredDate: Date | null = null;

/** The decoding in progress reads `$numberLong` as a Long always (see DecodeOptions). */
let exactLongs = false;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Whether revived dates may be shared (see decodeStored), and the last one revived. */
let sharingDates = false;
let lastDate: Date | null = null;

/** A Date of `ms`: the last one revived when equal and sharing is on. */
function dateOf(ms: number): Date {
  if (!sharingDates) return new Date(ms);
  if (lastDate === null || lastDate.getTime() !== ms) lastDate = new Date(ms);
  return lastDate;
}

function revive(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = revive(v[i]);
    return v;
  }
  const o = v as Record<string, unknown>;
  let wrapper = false;
  for (const key in o) {
    if (key.charCodeAt(0) === 36 /* $ */) {
      wrapper = true;
      break;
    }
  }
  if (wrapper) return reviveWrapper(o);
  for (const key of Object.keys(o)) {
    const value = o[key];
    if (value === null || typeof value !== "object") continue;
    if (key === "__proto__") {
      Object.defineProperty(o, key, {
        value: revive(value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else o[key] = revive(value);
  }
  return o;
}

function reviveWrapper(o: Record<string, unknown>): unknown {
  const keys = Object.keys(o);
  if (keys.length === 1) {
    const x = o[keys[0]];
    switch (keys[0]) {
      case "$oid":
        if (typeof x === "string" && x.length === 24) {
          const id = parseObjectId(x);
          if (id) return id;
        }
        break;
      case "$numberInt":
        if (typeof x === "string" && /^-?\d{1,10}$/.test(x)) return Number(x);
        break;
      case "$numberLong":
        // Within 32 bits only a Long (or a bigint) was ever written this way, never a
        // number: it comes back a Long, as it was stored (an `_id` among them). Beyond, the
        // text of earlier versions may hold a number (a large integer), which it stays.
        if (typeof x === "string" && /^-?\d{1,19}$/.test(x)) {
          const n = BigInt(x);
          if (exactLongs ? n >= INT64_MIN && n <= INT64_MAX : n >= -(2n ** 31n) && n < 2n ** 31n) {
            return Long.fromBigInt(n);
          }
        }
        break;
      case "$date": {
        if (typeof x === "number" && Number.isFinite(x)) return dateOf(x);
        const ms = (x as { $numberLong?: unknown } | null)?.$numberLong;
        if (typeof ms === "string" && /^-?\d{1,16}$/.test(ms)) return dateOf(Number(ms));
        break;
      }
    }
  }
  return EJSON.deserialize(o, { relaxed: true });
}

/**
 * The key of one value in an index map. A string is its own key (no copy is made per
 * indexed document) unless it starts with U+0001, which marks the keys of every other
 * kind of value ({@link valueKey} behind it), so keys of different values never collide.
 */
export function indexKey(value: unknown): string {
  if (typeof value === "string") return value.charCodeAt(0) === 1 ? "\u0001s" + value : value;
  return "\u0001" + valueKey(value);
}

/**
 * A string that identifies a value for equality: values MongoDB considers the same key
 * map to the same string. ObjectIds and strings take a fast path; the rest is canonical
 * EJSON (numbers normalised so that 1 and 1.0 agree).
 */
export function valueKey(value: unknown): string {
  switch (typeof value) {
    case "string":
      return "s" + value;
    case "number":
      return "n" + String(value);
    case "boolean":
      return value ? "t" : "f";
    case "undefined":
      return "z";
  }
  if (value === null) return "z";
  if ((value as { _bsontype?: string })._bsontype === "ObjectId") {
    return objectIdHex(value as ObjectId, "o");
  }
  return "j" + EJSON.stringify({ v: value }, { relaxed: false });
}
