/**
 * Storage encoding: canonical Extended JSON for documents, compact string keys for
 * `_id` values and index entries.
 */
import { Buffer } from "node:buffer";
import type { Doc } from "../store.ts";
import { EJSON, ObjectId } from "../bson.ts";

/** Serializes a document as canonical EJSON, keeping BSON types through a restart. */
export function encodeDoc(doc: Doc): string {
  return EJSON.stringify(doc, { relaxed: false });
}

/**
 * Parses a stored document back into JS/BSON values (as `EJSON.parse` in relaxed mode).
 * Plain JSON parsing first; the common wrappers (`$oid`, `$numberInt`, `$numberDouble`,
 * `$date`) are revived directly and every other wrapper by the EJSON library, which is
 * several times slower over a whole document.
 */
export function decodeDoc(text: string): Doc {
  return revive(JSON.parse(text)) as Doc;
}

/**
 * Decodes stored documents given as one JSON array of `_id` keys and document texts,
 * alternating (as SQLite concatenates them for loading: one parse per batch instead of one
 * per row), and hands each document to `add` with its key.
 *
 * Equal dates that follow each other (`_created` and `_updated`, documents written in the
 * same second) become one shared Date: only for documents the store keeps, which are
 * never mutated in place and are copied before they are handed out.
 */
export function decodeEntries(text: string, add: (key: string, doc: Doc) => void): void {
  const items = JSON.parse(text) as unknown[];
  sharingDates = true;
  try {
    for (let i = 0; i + 1 < items.length; i += 2) {
      add(items[i] as string, revive(items[i + 1]) as Doc);
    }
  } finally {
    sharingDates = false;
    lastDate = null;
  }
}

/** Whether revived dates may be shared (see decodeEntries), and the last one revived. */
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
          const id = objectIdFromHex(x);
          if (id) return id;
        }
        break;
      case "$numberInt":
        if (typeof x === "string" && /^-?\d{1,10}$/.test(x)) return Number(x);
        break;
      case "$date": {
        const ms = (x as { $numberLong?: unknown } | null)?.$numberLong;
        if (typeof ms === "string" && /^-?\d{1,16}$/.test(ms)) return dateOf(Number(ms));
        break;
      }
    }
  }
  return EJSON.deserialize(o, { relaxed: true });
}

/** Hex digit values by character code; -1 for anything else. */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = HEX[65 + i] = 10 + i;

/** ObjectIds revived per shared byte slab (each id is a 12-byte view of one). */
const IDS_PER_SLAB = 4096;
let slab = Buffer.allocUnsafeSlow(12 * IDS_PER_SLAB);
let slabUsed = 0;

/**
 * The ObjectId of a 24-digit hex string, or null if it is not one. Several times faster
 * than `ObjectId.createFromHexString` (which goes through a hex Buffer decoder), and ids
 * share byte slabs instead of holding one small buffer each.
 */
function objectIdFromHex(hex: string): ObjectId | null {
  if (slabUsed === slab.length) {
    slab = Buffer.allocUnsafeSlow(12 * IDS_PER_SLAB);
    slabUsed = 0;
  }
  for (let i = 0; i < 12; i++) {
    const hi = hex.charCodeAt(2 * i);
    const lo = hex.charCodeAt(2 * i + 1);
    const byte = ((hi < 128 ? HEX[hi] : -1) << 4) | (lo < 128 ? HEX[lo] : -1);
    if (byte < 0) return null;
    slab[slabUsed + i] = byte;
  }
  const id = new ObjectId(slab.subarray(slabUsed, slabUsed + 12));
  slabUsed += 12;
  return id;
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
  if ((value as { _bsontype?: string })._bsontype === "ObjectId") return "o" + String(value);
  return "j" + EJSON.stringify({ v: value }, { relaxed: false });
}
