/**
 * The size operators: `$bsonSize` (a document's size as BSON, in bytes) and `$binarySize` (a
 * string's UTF-8 bytes, or a binary value's). Both give null for null or missing and refuse
 * other types, as MongoDB does; mingo had neither.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $project: { _id: 0, b: { $binarySize: "$s" } } }], engineOptions())
 *   .run([{ s: "é" }]); // [{ b: 2 }]
 * ```
 * @module
 */
import type { Options } from "mingo/types";
import { isPlainObject } from "../../util/plain.ts";
import { bsonByteSize } from "../bson.ts";
import type { Doc } from "../types.ts";
import { listOperands } from "./arguments.ts";
import { typeName } from "./type-operator.ts";
import { bsonType } from "./numbers.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const encoder = new TextEncoder();

/** `$bsonSize`: the document's size as BSON; null for null or missing. */
function $bsonSize(obj: Doc, expr: unknown, options: Options): unknown {
  const value = listOperands("$bsonSize", { obj, expr, options }, { min: 1, lone: true })[0];
  if (value === null || value === undefined) return null;
  if (!isPlainObject(value)) {
    throw new Error(`$bsonSize needs a document, not ${typeName(value)}`);
  }
  return bsonByteSize(value);
}

/** `$binarySize`: a string's UTF-8 bytes or a binary value's bytes; null for null or missing. */
function $binarySize(obj: Doc, expr: unknown, options: Options): unknown {
  const value = listOperands("$binarySize", { obj, expr, options }, { min: 1, lone: true })[0];
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return encoder.encode(value).byteLength;
  if (value instanceof Uint8Array) return value.byteLength;
  if (bsonType(value) === "Binary") return (value as { length(): number }).length();
  throw new Error(`$binarySize needs a string or binary data, not ${typeName(value)}`);
}

/** The operators of this module, by name. */
export const sizeExpressions: Record<string, AnyFn> = { $bsonSize, $binarySize };
