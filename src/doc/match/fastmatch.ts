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

type Test = (value: unknown) => boolean;

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

/**
 * Compiles `filter` into a direct predicate, or returns null if it is not in the simple shape
 * (a top-level `$and` of simple filters counts: an item's lookup joined to a soft-delete or
 * predefined filter).
 */
export function compileSimple(filter: Filter, depth = 0): ((doc: Doc) => boolean) | null {
  const tests: Array<[string, Test]> = [];
  const all: Array<(doc: Doc) => boolean> = [];
  for (const [field, cond] of Object.entries(filter)) {
    if (field === "$and" && depth < 4) {
      if (!Array.isArray(cond) || cond.length === 0) return null;
      for (const member of cond) {
        const test = isPlainObject(member) ? compileSimple(member as Filter, depth + 1) : null;
        if (!test) return null;
        all.push(test);
      }
      continue;
    }
    if (field[0] === "$" || field.includes(".") || field === "__proto__") return null;
    if (isPlainObject(cond)) {
      const ops = Object.keys(cond);
      if (ops.length === 0 || ops.some((o) => o[0] !== "$")) return null;
      for (const op of ops) {
        const test = operatorTest(op, cond[op]);
        if (!test) return null;
        tests.push([field, test]);
      }
    } else {
      const test = operatorTest("$eq", cond);
      if (!test) return null;
      tests.push([field, test]);
    }
  }
  return (doc) => {
    for (let i = 0; i < tests.length; i++) {
      if (!tests[i][1](doc[tests[i][0]])) return false;
    }
    for (let i = 0; i < all.length; i++) if (!all[i](doc)) return false;
    return true;
  };
}
