/**
 * The query engine's `$elemMatch` with conditions on the elements themselves (`{"scores":
 * {"$elemMatch": {"$gte": 80, "$lt": 85}}}`), as MongoDB reads it: an element is tested as
 * it is, so an element that is an array is one value, not its members (`{"$gte": 5}` does
 * not match `[[6]]`, `{"$eq": [6]}` and `{"$size": 1}` do); the path must reach an array (a
 * field holding 6 has no element); the path is walked as MongoDB walks it (comparisons.ts).
 * With conditions on fields of the elements (`{"$elemMatch": {"b": 1}}`), an element that
 * is a document must meet them, one that is an array is read as a document of its positions,
 * and any other has no fields.
 *
 * mingo's own tested an array element through its members (`{"$in": [6]}` matched `[[6]]`,
 * `{"$ne": 6}` did not), took a path reaching a single value through an array of documents
 * as an array, and entered an element that is an array as a list of documents.
 *
 * @example
 * ```ts
 * import { Query } from "mingo/query";
 * import { engineOptions } from "./engine.ts";
 *
 * const q = new Query({ a: { $elemMatch: { $gte: 5 } } }, engineOptions());
 * q.test({ a: [1, 6] }); // true
 * q.test({ a: [[6]] }); // false: the element [6] is not a number
 * ```
 */
import { Query } from "mingo/query";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { reaching } from "./comparisons.ts";
import { isPlainObject } from "../../util/plain.ts";

/** Keys that make `$elemMatch`'s conditions conditions on fields (mingo's reading too). */
const LOGICAL = new Set(["$and", "$or", "$nor"]);

/** Operators that read an array element itself, not through its members. */
const ON_THE_ARRAY = new Set(["$size", "$elemMatch"]);

/** Operators that no array matches (an element that is one fails them). */
const NEVER_AN_ARRAY = new Set([
  "$mod",
  "$regex",
  "$bitsAllSet",
  "$bitsAllClear",
  "$bitsAnySet",
  "$bitsAnyClear",
]);

type ElementTest = (element: unknown) => boolean;

/**
 * The test of one condition (`op` with `operand`) on an element. mingo's operators test a
 * field's value and, for an array, its members; an element that is an array is handed over
 * inside a one-element array, so that it is compared as one value. `$size` and a nested
 * `$elemMatch` read the array itself.
 */
function conditionTest(op: string, criteria: Doc, options: Options): ElementTest {
  const operand = criteria[op];
  // `$options` goes with its `$regex`.
  const condition: Doc = op === "$regex" && Object.hasOwn(criteria, "$options")
    ? { $regex: operand, $options: criteria.$options }
    : { [op]: operand };
  const query = new Query({ element: condition }, options);
  const itself = ON_THE_ARRAY.has(op) ||
    (op === "$not" && isPlainObject(operand) &&
      Object.keys(operand).some((key) => ON_THE_ARRAY.has(key)));
  if (itself) return (element) => query.test({ element });
  const never = NEVER_AN_ARRAY.has(op);
  return (element) =>
    Array.isArray(element) ? !never && query.test({ element: [element] }) : query.test({ element });
}

/**
 * `$elemMatch` with conditions on fields of the elements: an element that is a document
 * matches when it meets them; an element that is an array is read as a document of its
 * positions (as MongoDB reads it: `{"0": 5}` finds `[[5]]`, `{"b": 5}` does not find
 * `[[{"b": 5}]]`); any other element has no fields.
 */
function onFields(selector: string, criteria: Doc, options: Options): (obj: Doc) => boolean {
  const query = new Query(criteria, options);
  const matches: ElementTest = (element) =>
    Array.isArray(element)
      ? query.test({ ...element })
      : isPlainObject(element) && query.test(element as Doc);
  return reaching(selector, (value) => Array.isArray(value) && value.some(matches), {
    asIs: true,
  });
}

/** mingo's query operator signature: a selector and an operand give a document matcher. */
export function $elemMatch(
  selector: string,
  criteria: unknown,
  options: Options,
): (obj: Doc) => boolean {
  // As MongoDB: `{"$elemMatch": 5}` is refused, not a condition nothing meets.
  if (!isPlainObject(criteria)) throw new Error("$elemMatch needs an object");
  const keys = Object.keys(criteria);
  const onElements = keys.length > 0 && keys.every((k) => k[0] === "$" && !LOGICAL.has(k));
  if (!onElements) return onFields(selector, criteria, options);
  const conditions = keys.includes("$regex") ? keys.filter((k) => k !== "$options") : keys;
  const tests = conditions.map((op) => conditionTest(op, criteria as Doc, options));
  const matches: ElementTest = (element) => {
    for (const test of tests) if (!test(element)) return false;
    return true;
  };
  return reaching(selector, (value) => Array.isArray(value) && value.some(matches), {
    asIs: true,
  });
}
