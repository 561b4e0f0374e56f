/**
 * Storage encoding: canonical Extended JSON for documents, compact string keys for
 * `_id` values and index entries.
 */
import type { Doc } from "../store.ts";
import { EJSON } from "../bson.ts";

/** Serializes a document as canonical EJSON, keeping BSON types through a restart. */
export function encodeDoc(doc: Doc): string {
  return EJSON.stringify(doc, { relaxed: false });
}

/** Parses a stored document back into JS/BSON values. */
export function decodeDoc(text: string): Doc {
  return EJSON.parse(text, { relaxed: true }) as Doc;
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
