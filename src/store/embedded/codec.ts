/**
 * Storage encoding: canonical Extended JSON for documents, compact string keys for
 * `_id` values and index entries.
 */
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
        if (typeof x === "string" && x.length === 24) return ObjectId.createFromHexString(x);
        break;
      case "$numberInt":
        if (typeof x === "string" && /^-?\d{1,10}$/.test(x)) return Number(x);
        break;
      case "$date": {
        const ms = (x as { $numberLong?: unknown } | null)?.$numberLong;
        if (typeof ms === "string" && /^-?\d{1,16}$/.test(ms)) return new Date(Number(ms));
        break;
      }
    }
  }
  return EJSON.deserialize(o, { relaxed: true });
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
