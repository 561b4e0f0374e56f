/**
 * A direct matcher for the common filter shape: top-level fields compared with plain
 * values (strings, numbers, booleans, Dates, ObjectIds) by equality, `$ne`, `$gt`,
 * `$gte`, `$lt`, `$lte`, `$in`, `$nin` and `$exists`. It follows MongoDB's rules (an
 * array field matches when one element does; comparisons only within one type class)
 * and skips mingo's per-document path resolution. Other filters return null.
 */
import type { Doc, Filter } from "../types.ts";
import { compareValues } from "./compare.ts";
import { isPlainObject } from "../../util/plain.ts";

/**
 * Names every plain object inherits (`__proto__`, `constructor`, `toString`, ...): reading
 * one from a document that lacks it would find Object.prototype's, so conditions on them are
 * left to the engine, which reads a document's own fields.
 */
const INHERITED = new Set(["__proto__", ...Object.getOwnPropertyNames(Object.prototype)]);

/** A condition on one field's value. */
export type Test = (value: unknown) => boolean;

/** Operand kinds the matcher handles; null, arrays, regexes and documents are left to mingo. */
function typeClass(v: unknown): string | null {
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
      return Number.isNaN(v) ? null : "number";
    case "boolean":
      return "boolean";
  }
  if (v instanceof Date) return "date";
  if (
    v !== null && typeof v === "object" && (v as { _bsontype?: string })._bsontype === "ObjectId"
  ) {
    return "objectid";
  }
  return null;
}

function classOf(v: unknown): string | null {
  if (typeof v === "object" && v !== null) {
    const t = (v as { _bsontype?: string })._bsontype;
    if (t === "Decimal128" || t === "Int32" || t === "Double" || t === "Long") return "number";
  }
  return typeClass(v);
}

function equals(a: unknown, b: unknown, cls: string): boolean {
  if (a === b) return true;
  return classOf(a) === cls && compareValues(a, b) === 0;
}

/** Whether `v` (not a plain number) is of the number class (a BSON number). */
const numberClass = (v: unknown) => classOf(v) === "number";
const cmp = compareValues;

/** Applies `test` to the value and, for arrays, to each element. */
function anyValue(test: Test): Test {
  return (v) => {
    if (test(v)) return true;
    if (Array.isArray(v)) {
      for (const e of v) if (test(e)) return true;
    }
    return false;
  };
}

/**
 * The test of one comparison operator against operand `x`, applied to a field's value (an
 * array matches when one element does); null when the operand is not handled here.
 */
export function operatorTest(op: string, x: unknown): Test | null {
  if (op === "$exists") {
    return x ? (v) => v !== undefined : (v) => v === undefined;
  }
  if (op === "$in" || op === "$nin") {
    if (!Array.isArray(x) || x.length > 1000) return null;
    const classes = x.map(classOf);
    if (classes.some((c) => c === null)) return null;
    const inTest = anyValue((v) => x.some((w, i) => equals(v, w, classes[i]!)));
    return op === "$in" ? inTest : (v) => !inTest(v);
  }
  const test = generalTest(op, x);
  return test && typeof x !== "object" ? primitiveFirst(op, x as Primitive, test) : test;
}

/**
 * The test of a comparison operator (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`) against `x`,
 * without the shortcut for primitive values of {@link operatorTest} (which must answer the
 * same: tests compare the two); null when the operand is not handled here.
 */
export function generalTest(op: string, x: unknown): Test | null {
  const cls = classOf(x);
  if (cls === null) return null;
  if (typeof x === "number") {
    // A plain number against a plain number (the common case): compared directly. A NaN
    // value fails every comparison, as it is of no type class here.
    switch (op) {
      case "$gt":
        return anyValue((v) => typeof v === "number" ? v > x : numberClass(v) && cmp(v, x) > 0);
      case "$gte":
        return anyValue((v) => typeof v === "number" ? v >= x : numberClass(v) && cmp(v, x) >= 0);
      case "$lt":
        return anyValue((v) => typeof v === "number" ? v < x : numberClass(v) && cmp(v, x) < 0);
      case "$lte":
        return anyValue((v) => typeof v === "number" ? v <= x : numberClass(v) && cmp(v, x) <= 0);
    }
  }
  switch (op) {
    case "$eq":
      return anyValue((v) => equals(v, x, cls));
    case "$ne": {
      const eq = anyValue((v) => equals(v, x, cls));
      return (v) => !eq(v);
    }
    case "$gt":
      return anyValue((v) => classOf(v) === cls && compareValues(v, x) > 0);
    case "$gte":
      return anyValue((v) => classOf(v) === cls && compareValues(v, x) >= 0);
    case "$lt":
      return anyValue((v) => classOf(v) === cls && compareValues(v, x) < 0);
    case "$lte":
      return anyValue((v) => classOf(v) === cls && compareValues(v, x) <= 0);
  }
  return null;
}

type Primitive = string | number | boolean;

/**
 * `test` (of `op` against a string, number or boolean operand `x`) with its answer for a
 * primitive value worked out directly, as `test` would give it: a primitive value is no
 * array and no BSON number, so it equals `x` only when it is `x` (a NaN is of no class, and
 * `-0` is `0`), and a number compares with a number operand as JavaScript compares them
 * (false with a NaN, which is of no class). Objects, arrays and null, and orderings of other
 * primitives, go to `test`. The matcher runs once per document a query reads: this keeps the
 * common comparisons to one call.
 */
function primitiveFirst(op: string, x: Primitive, test: Test): Test {
  switch (op) {
    case "$eq":
      return (v) => typeof v !== "object" ? v === x : test(v);
    case "$ne":
      return (v) => typeof v !== "object" ? v !== x : test(v);
  }
  if (typeof x === "number") {
    switch (op) {
      case "$gt":
        return (v) => typeof v === "number" ? v > x : test(v);
      case "$gte":
        return (v) => typeof v === "number" ? v >= x : test(v);
      case "$lt":
        return (v) => typeof v === "number" ? v < x : test(v);
      case "$lte":
        return (v) => typeof v === "number" ? v <= x : test(v);
    }
  }
  return test;
}

/**
 * Compiles `filter` into a direct predicate, or returns null if it is not in the simple shape
 * (a top-level `$and` of simple filters counts: an item's lookup joined to a soft-delete or
 * predefined filter).
 */
export function compileSimple(filter: Filter): ((doc: Doc) => boolean) | null {
  const conditions = simpleConditions(filter);
  if (conditions === null) return null;
  const fields = conditions.map(([field]) => field);
  const tests = conditions.map(([, test]) => test);
  return (doc) => {
    for (let i = 0; i < tests.length; i++) if (!tests[i](doc[fields[i]])) return false;
    return true;
  };
}

/**
 * The conditions of a filter in the simple shape (see {@link compileSimple}), members of
 * `$and`s included: a document matches when the value of each condition's top-level field
 * passes its test. Null for any other filter.
 */
export function simpleConditions(filter: Filter, depth = 0): Array<[string, Test]> | null {
  const conditions: Array<[string, Test]> = [];
  for (const [field, cond] of Object.entries(filter)) {
    if (field === "$and" && depth < 4) {
      if (!Array.isArray(cond) || cond.length === 0) return null;
      for (const member of cond) {
        const inner = isPlainObject(member) ? simpleConditions(member as Filter, depth + 1) : null;
        if (!inner) return null;
        conditions.push(...inner);
      }
      continue;
    }
    if (field[0] === "$" || field.includes(".") || INHERITED.has(field)) return null;
    if (isPlainObject(cond)) {
      const ops = Object.keys(cond);
      if (ops.length === 0 || ops.some((o) => o[0] !== "$")) return null;
      for (const op of ops) {
        const test = operatorTest(op, cond[op]);
        if (!test) return null;
        conditions.push([field, test]);
      }
    } else {
      const test = operatorTest("$eq", cond);
      if (!test) return null;
      conditions.push([field, test]);
    }
  }
  return conditions;
}
