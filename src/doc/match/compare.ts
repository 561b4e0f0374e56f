/**
 * MongoDB's cross-type value ordering and document sorting.
 *
 * Order: MinKey < null/missing < numbers < strings and symbols < objects < arrays < binary <
 * ObjectId < booleans < dates < timestamps < regular expressions < code < code with scope <
 * MaxKey. Strings compare by code point
 * (like MongoDB's UTF-8 byte order), numbers across JS/BSON numeric types by value.
 */
import { type Doc, InvalidQueryError, type Sort } from "../types.ts";

const RANK_NULL = 2;
const RANK_NUMBER = 3;
const RANK_STRING = 4;
const RANK_OBJECT = 5;
const RANK_ARRAY = 6;
const RANK_BINARY = 7;
const RANK_OBJECTID = 8;
const RANK_BOOLEAN = 9;
const RANK_DATE = 10;
const RANK_TIMESTAMP = 11;
const RANK_REGEX = 12;
const RANK_CODE = 13;
const RANK_CODE_WITH_SCOPE = 14;
const RANK_MAX_KEY = 15;

function bsonType(v: object): string | undefined {
  return (v as { _bsontype?: string })._bsontype;
}

/** The type bracket of a value in MongoDB's order (values compare within one bracket). */
export function rank(v: unknown): number {
  switch (typeof v) {
    case "undefined":
      return RANK_NULL;
    case "number":
    case "bigint":
      return RANK_NUMBER;
    case "string":
    case "symbol":
      return RANK_STRING;
    case "boolean":
      return RANK_BOOLEAN;
  }
  if (v === null) return RANK_NULL;
  if (Array.isArray(v)) return RANK_ARRAY;
  if (v instanceof Date) return RANK_DATE;
  if (v instanceof RegExp) return RANK_REGEX;
  if (v instanceof Uint8Array) return RANK_BINARY;
  switch (bsonType(v as object)) {
    case "ObjectId":
      return RANK_OBJECTID;
    case "Decimal128":
    case "Int32":
    case "Double":
    case "Long":
      return RANK_NUMBER;
    case "Binary":
      return RANK_BINARY;
    case "Timestamp":
      return RANK_TIMESTAMP;
    case "BSONRegExp":
      return RANK_REGEX;
    case "BSONSymbol":
      return RANK_STRING;
    case "Code":
      return (v as { scope?: unknown }).scope ? RANK_CODE_WITH_SCOPE : RANK_CODE;
    case "MinKey":
      return 1;
    case "MaxKey":
      return RANK_MAX_KEY;
  }
  return RANK_OBJECT;
}

function toNumber(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  const type = bsonType(v as object);
  if (type === "Decimal128") return Number.parseFloat(String(v));
  if (type === "Long") return Number(String(v));
  return Number((v as { valueOf(): unknown }).valueOf());
}

/** Compares strings by Unicode code point (UTF-16 order differs above U+D7FF). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let ca = a.charCodeAt(i);
    let cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // Surrogates encode code points above U+FFFF: move them above U+E000..U+FFFF.
    if (ca >= 0xd800) ca = ca >= 0xe000 ? ca - 0x800 : ca + 0x2000;
    if (cb >= 0xd800) cb = cb >= 0xe000 ? cb - 0x800 : cb + 0x2000;
    return ca < cb ? -1 : 1;
  }
  return a.length - b.length < 0 ? -1 : a.length === b.length ? 0 : 1;
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

/**
 * Two numbers in MongoDB's order: NaN before every other number and equal to NaN (compared
 * as equal to everything, it made sorts depend on the order they met the documents in).
 */
function compareNumbers(x: number, y: number): number {
  if (x < y) return -1;
  if (x > y) return 1;
  if (x === y) return 0;
  const xn = Number.isNaN(x);
  return xn === Number.isNaN(y) ? 0 : xn ? -1 : 1;
}

function bytesOf(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  const bin = v as { buffer: Uint8Array; position: number };
  return bin.buffer.subarray(0, bin.position);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

/** Compares two BSON values in MongoDB's sort order; returns -1, 0 or 1. */
export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case RANK_NULL:
      return 0;
    case RANK_NUMBER: {
      if (typeof a === "number" && typeof b === "number") return compareNumbers(a, b);
      return compareNumbers(toNumber(a), toNumber(b));
    }
    case RANK_STRING:
      return compareStrings(String(a), String(b));
    case RANK_BOOLEAN:
      return a === b ? 0 : a ? 1 : -1;
    case RANK_DATE:
      return sign((a as Date).getTime() - (b as Date).getTime());
    case RANK_OBJECTID:
      return compareBytes((a as { id: Uint8Array }).id, (b as { id: Uint8Array }).id);
    case RANK_BINARY:
      return compareBytes(bytesOf(a), bytesOf(b));
    case RANK_ARRAY:
      return compareArrays(a as unknown[], b as unknown[]);
    case RANK_OBJECT:
      return compareObjects(a as Doc, b as Doc);
    case RANK_TIMESTAMP:
      return compareValues(
        BigInt(String(a as object)),
        BigInt(String(b as object)),
      );
    case RANK_REGEX: {
      const sa = String(a);
      const sb = String(b);
      return compareStrings(sa, sb);
    }
    case RANK_CODE:
    case RANK_CODE_WITH_SCOPE: {
      const byCode = compareStrings(codeOf(a), codeOf(b));
      if (byCode !== 0 || ra === RANK_CODE) return byCode;
      return compareValues((a as { scope: unknown }).scope, (b as { scope: unknown }).scope);
    }
  }
  return 0;
}

/** The source text of a BSON `Code` value. */
function codeOf(v: unknown): string {
  return String((v as { code: unknown }).code);
}

function compareArrays(a: unknown[], b: unknown[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return sign(a.length - b.length);
}

function compareObjects(a: Doc, b: Doc): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const byType = rank(a[ka[i]]) - rank(b[kb[i]]);
    if (byType !== 0) return sign(byType);
    const byName = compareStrings(ka[i], kb[i]);
    if (byName !== 0) return byName;
    const byValue = compareValues(a[ka[i]], b[kb[i]]);
    if (byValue !== 0) return byValue;
  }
  return sign(ka.length - kb.length);
}

/** Marks an empty array at a path: it sorts before null, as in MongoDB. */
export const EMPTY: unique symbol = Symbol("empty array");

/**
 * The values found at a dotted path, descending into arrays; a leaf array contributes its
 * elements (or {@link EMPTY}), a missing field contributes `undefined`.
 */
export function pathValues(doc: Doc, parts: string[]): unknown[] {
  const out: unknown[] = [];
  // Down through plain objects directly; an array on the way needs the branching walk.
  let value: unknown = doc;
  let i = 0;
  while (i < parts.length && hasFields(value)) value = value[parts[i++]];
  if (i === parts.length) pushLeaf(value, out);
  else if (Array.isArray(value)) collect(value, i, { parts, out });
  else out.push(undefined);
  return out;
}

/** Whether a path segment names a field of `value`: an object, not an array or a date. */
function hasFields(value: unknown): value is Doc {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    !(value instanceof Date);
}

/** Adds the value at the end of a path: a leaf array's elements, or {@link EMPTY}. */
function pushLeaf(value: unknown, out: unknown[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(EMPTY);
    else out.push(...value);
  } else {
    out.push(value);
  }
}

/** One {@link pathValues} walk: the path's segments and the values found so far. */
interface PathWalk {
  parts: string[];
  out: unknown[];
}

/** Adds to `walk.out` the values at `walk.parts` from segment `i` on, `value` being there. */
function collect(value: unknown, i: number, walk: PathWalk): void {
  const { parts, out } = walk;
  if (i === parts.length) {
    pushLeaf(value, out);
    return;
  }
  if (Array.isArray(value)) {
    const index = /^\d+$/.test(parts[i]) ? Number(parts[i]) : -1;
    if (index >= 0 && index < value.length) collect(value[index], i + 1, walk);
    else for (const item of value) collect(item, i, walk);
    return;
  }
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    collect((value as Doc)[parts[i]], i + 1, walk);
    return;
  }
  out.push(undefined);
}

/** The sort key of `doc` on `path`: the smallest (asc) or largest (desc) array element. */
export function sortKey(doc: Doc, parts: string[], direction: 1 | -1): unknown {
  const values = pathValues(doc, parts);
  if (values.length === 1) return values[0];
  let best: unknown = values[0];
  for (let i = 1; i < values.length; i++) {
    if (sortCompare(values[i], best) * direction < 0) best = values[i];
  }
  return best;
}

/** A field of a sort specification: its path's segments and its direction. */
export interface SortField {
  parts: string[];
  dir: 1 | -1;
}

/**
 * The sort keys of `doc` on `fields`, one per field, as MongoDB makes them: each field's
 * smallest (ascending) or largest (descending) value, except that fields reaching into one
 * list (`{"a.c": 1, "a.b": 1}` over a list `a`) take their values from one member of it, the
 * member whose pair of values sorts first. Fields reaching into two different lists cannot
 * be sorted on together, as in MongoDB.
 */
export function sortKeys(doc: Doc, fields: SortField[]): unknown[] {
  return memberKeys(doc, fields) ?? fields.map((f) => sortKey(doc, f.parts, f.dir));
}

/** The length of the path prefix of `parts` at which `doc` holds a list; -1 when none. */
function listAt(doc: Doc, parts: string[]): number {
  let value: unknown = doc;
  for (let i = 0; i < parts.length; i++) {
    if (!hasFields(value)) return -1;
    value = value[parts[i]];
    if (Array.isArray(value)) return i + 1;
  }
  return -1;
}

/**
 * {@link sortKeys} when two fields or more reach into one list: the keys of the member that
 * sorts first. Undefined when fewer than two fields reach a list, the list is empty, or a
 * path names a member by its position (the fields' own keys then).
 */
export function memberKeys(doc: Doc, fields: SortField[]): unknown[] | undefined {
  if (fields.length < 2) return undefined;
  const at = fields.map((f) => listAt(doc, f.parts));
  let path: string | undefined;
  let length = 0;
  let count = 0;
  for (let i = 0; i < fields.length; i++) {
    if (at[i] < 0) continue;
    const prefix = fields[i].parts.slice(0, at[i]).join(".");
    if (path === undefined) [path, length] = [prefix, at[i]];
    else if (prefix !== path) {
      throw new InvalidQueryError("cannot sort with keys that are parallel arrays");
    }
    if (/^\d+$/.test(fields[i].parts[at[i]] ?? "")) return undefined;
    count++;
  }
  if (count < 2) return undefined;
  let list: unknown = doc;
  for (const part of fields[at.findIndex((n) => n >= 0)].parts.slice(0, length)) {
    list = (list as Doc)[part];
  }
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const own = fields.map((f, i) => at[i] < 0 ? sortKey(doc, f.parts, f.dir) : undefined);
  let best: unknown[] | undefined;
  for (const member of list) {
    const keys = fields.map((f, i) =>
      at[i] < 0 ? own[i] : sortKey({ member }, ["member", ...f.parts.slice(length)], f.dir)
    );
    if (best === undefined || compareKeys(keys, best, fields) < 0) best = keys;
  }
  return best;
}

/** Two documents' sort keys compared in the order of `fields`. */
export function compareKeys(x: unknown[], y: unknown[], fields: SortField[]): number {
  for (let i = 0; i < fields.length; i++) {
    const c = sortCompare(x[i], y[i]);
    if (c !== 0) return c * fields[i].dir;
  }
  return 0;
}

function sortCompare(a: unknown, b: unknown): number {
  if (a === EMPTY || b === EMPTY) return a === b ? 0 : a === EMPTY ? -1 : 1;
  return compareValues(a, b);
}

/**
 * Returns `docs` ordered by a MongoDB sort specification (a new array unless there is
 * nothing to sort). The sort is stable, so ties keep their natural order.
 */
export function sortDocs<T extends Doc>(docs: T[], sort: Sort): T[] {
  const fields = Object.keys(sort).map((path) => ({
    parts: path.split("."),
    dir: (sort[path] === -1 ? -1 : 1) as 1 | -1,
  }));
  if (fields.length === 0 || docs.length < 2) return docs;
  const keyed = docs.map((doc) => ({ doc, keys: sortKeys(doc, fields) }));
  keyed.sort((x, y) => compareKeys(x.keys, y.keys, fields));
  return keyed.map((k) => k.doc);
}
