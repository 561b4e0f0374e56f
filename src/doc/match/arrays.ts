/**
 * List and document operators as MongoDB computes them: `$first` and `$last` (an empty list
 * gives nothing), `$concatArrays` (one operand that is not a list literal is one list),
 * `$indexOfArray` (a start past the end finds nothing; numbers equal across types),
 * `$mergeObjects` (documents only), `$arrayToObject` (one form of member, string keys),
 * `$zip`, `$getField` and `$setField` (arguments checked as MongoDB checks them), `$const`,
 * `$tsSecond` and `$tsIncrement`.
 *
 * mingo's `$last` of an empty list was an error, `$concatArrays: "$list"` read the list's
 * members as its operands, `$indexOfArray` ignored a start past the end, `$mergeObjects`
 * merged a string's characters and skipped a number, `$arrayToObject` made keys of numbers
 * and null and took pairs of one or three members, and `$const`, `$tsSecond` and
 * `$tsIncrement` did not exist.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $project: { _id: 0, l: { $last: "$a" } } }], engineOptions())
 *   .run([{ a: [] }]); // [{}]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import * as expressionOperators from "mingo/operators/expression";
import type { Options } from "mingo/types";
import { isPlainObject } from "../../util/plain.ts";
import type { Doc } from "../types.ts";
import { checkKeys, listOperands } from "./arguments.ts";
import { compareValues } from "./compare.ts";
import { bsonType, numberValue } from "./numbers.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const MINGO = expressionOperators as unknown as Record<string, AnyFn>;

/**
 * `expression`, or mingo's operator of that name in a `$group`, where mingo looks an operator
 * up among the expressions first, with the group's documents for a document (its operator
 * then accumulates).
 */
function orAccumulator(op: string, expression: AnyFn): AnyFn {
  const mingo = MINGO[op];
  return (obj: Doc | Doc[], expr: unknown, options: Options) =>
    Array.isArray(obj) ? mingo(obj, expr, options) : expression(obj, expr, options);
}

/** `$first` or `$last` of a list: null for null or missing, nothing for an empty list. */
function end(op: "$first" | "$last"): AnyFn {
  return (obj: Doc, expr: unknown, options: Options) => {
    const list = listOperands(op, { obj, expr, options }, { min: 1, lone: true })[0];
    if (list === null || list === undefined) return null;
    if (!Array.isArray(list)) throw new Error(`${op} needs a list`);
    return op === "$first" ? list[0] : list[list.length - 1];
  };
}

/** Sets a field of a result, `__proto__` too, as an own field (never a prototype change). */
function setField(out: Doc, key: string, value: unknown): void {
  if (key !== "__proto__") out[key] = value;
  else {Object.defineProperty(out, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });}
}

/** `$concatArrays`: the lists joined; null when one is null or missing. */
function $concatArrays(obj: Doc, expr: unknown, options: Options): unknown {
  const lists = (Array.isArray(expr) ? expr : [expr]).map((e) =>
    evalExpr(obj as never, e as never, options)
  );
  if (lists.some((l) => l === null || l === undefined)) return null;
  if (lists.some((l) => !Array.isArray(l))) throw new Error("$concatArrays needs lists");
  return (lists as unknown[][]).flat(1);
}

/** A position operand: a whole number of 0 or more. */
function position(value: unknown): number {
  const n = numberValue(value);
  if (n === undefined || !Number.isInteger(n) || n < 0) {
    throw new Error("$indexOfArray: a position must be a whole number of 0 or more");
  }
  return n;
}

/** `$indexOfArray: [list, value, start?, end?]`: the first position of an equal member, or -1. */
function $indexOfArray(obj: Doc, expr: unknown, options: Options): unknown {
  if (!Array.isArray(expr) || expr.length < 2 || expr.length > 4) {
    throw new Error("$indexOfArray takes 2 to 4 arguments");
  }
  const [list, value, start, stop] = expr.map((e) => evalExpr(obj as never, e as never, options));
  if (list === null || list === undefined) return null;
  if (!Array.isArray(list)) throw new Error("$indexOfArray needs a list to search");
  const from = start === undefined ? 0 : position(start);
  const to = stop === undefined ? list.length : Math.min(position(stop), list.length);
  for (let i = from; i < to; i++) {
    if (compareValues(list[i], value ?? null) === 0) return i;
  }
  return -1;
}

/** `$mergeObjects`: the documents merged, later fields winning; null and missing skipped. */
function $mergeObjects(obj: Doc, expr: unknown, options: Options): Doc {
  const out: Doc = {};
  for (const e of Array.isArray(expr) ? expr : [expr]) {
    const doc = evalExpr(obj as never, e as never, options);
    if (doc === null || doc === undefined) continue;
    if (!isPlainObject(doc)) throw new Error("$mergeObjects needs documents");
    for (const [key, value] of Object.entries(doc)) {
      if (value !== undefined) {
        setField(out, key, value);
      }
    }
  }
  return out;
}

/**
 * `$arrayToObject`: a document from `[key, value]` pairs or `{k, v}` documents (one form for
 * the whole list), each key a string without a NUL character; a later key wins.
 */
function $arrayToObject(obj: Doc, expr: unknown, options: Options): unknown {
  const op = "$arrayToObject";
  const list = listOperands(op, { obj, expr, options }, { min: 1, lone: true })[0];
  if (list === null || list === undefined) return null;
  if (!Array.isArray(list)) throw new Error(`${op} needs a list`);
  const out: Doc = {};
  const pairs = Array.isArray(list[0]);
  for (const member of list) {
    let key: unknown;
    let value: unknown;
    if (pairs) {
      if (!Array.isArray(member) || member.length !== 2) {
        throw new Error(`${op} needs every member to be a [key, value] pair`);
      }
      [key, value] = member;
    } else {
      const keys = isPlainObject(member) ? Object.keys(member) : [];
      if (keys.length !== 2 || !Object.hasOwn(member, "k") || !Object.hasOwn(member, "v")) {
        throw new Error(`${op} needs every member to be a {k, v} document`);
      }
      ({ k: key, v: value } = member as Doc);
    }
    if (typeof key !== "string") throw new Error(`${op} needs string keys`);
    if (key.includes("\0")) throw new Error(`${op}: a key cannot hold a NUL character`);
    setField(out, key, value);
  }
  return out;
}

/** `$tsSecond` or `$tsIncrement` of a Timestamp. */
function timestampPart(op: "$tsSecond" | "$tsIncrement"): AnyFn {
  return (obj: Doc, expr: unknown, options: Options) => {
    const ts = listOperands(op, { obj, expr, options }, { min: 1, lone: true })[0];
    if (ts === null || ts === undefined) return null;
    if (bsonType(ts) !== "Timestamp") throw new Error(`${op} needs a Timestamp`);
    const t = ts as { high: number; low: number };
    return (op === "$tsSecond" ? t.high : t.low) >>> 0;
  };
}

/**
 * `$zip: {inputs, useLongestLength, defaults}` checked as MongoDB checks it (a non-empty list
 * of inputs, a boolean `useLongestLength`, `defaults` only with it and one per input), then
 * mingo's.
 */
function $zip(obj: Doc, expr: unknown, options: Options): unknown {
  const args = checkKeys("$zip", expr, ["inputs", "useLongestLength", "defaults"], ["inputs"]);
  if (!Array.isArray(args.inputs) || args.inputs.length === 0) {
    throw new Error("$zip needs a non-empty list of inputs");
  }
  const longest = args.useLongestLength;
  if (longest !== undefined && typeof longest !== "boolean") {
    throw new Error("$zip: 'useLongestLength' must be a boolean");
  }
  if (Object.hasOwn(args, "defaults")) {
    if (longest !== true) throw new Error("$zip: 'defaults' needs 'useLongestLength: true'");
    if (!Array.isArray(args.defaults) || args.defaults.length !== args.inputs.length) {
      throw new Error("$zip: 'defaults' must be a list with one value per input");
    }
  }
  return MINGO.$zip(obj, args, options);
}

/**
 * The field name of `$getField` or `$setField`: a constant string not starting with `$`, or any
 * constant string given as `{$literal: ...}`.
 */
function fieldName(op: string, field: unknown): string {
  if (typeof field === "string" && !field.startsWith("$")) return field;
  if (isPlainObject(field) && Object.keys(field).length === 1 && Object.hasOwn(field, "$literal")) {
    if (typeof field.$literal === "string") return field.$literal;
  }
  throw new Error(`${op}: 'field' must be a constant string`);
}

/**
 * `$getField: name` or `{field, input}`: the field of that exact name (dots included) of the
 * input document (by default the current one); null for a null input, nothing for a missing
 * one, a missing field or an input that is not a document.
 */
function $getField(obj: Doc, expr: unknown, options: Options): unknown {
  let field: string;
  let input: unknown = "$$CURRENT";
  if (isPlainObject(expr) && !Object.hasOwn(expr, "$literal")) {
    const args = checkKeys("$getField", expr, ["field", "input"], ["field"]);
    field = fieldName("$getField", args.field);
    if (Object.hasOwn(args, "input")) input = args.input;
  } else {
    field = fieldName("$getField", expr);
  }
  const doc = evalExpr(obj as never, input as never, options);
  if (doc === null) return null;
  return isPlainObject(doc) && Object.hasOwn(doc, field) ? doc[field] : undefined;
}

/** `$setField: {field, input, value}` checked (a constant field name), then mingo's. */
function $setField(obj: Doc, expr: unknown, options: Options): unknown {
  const args = checkKeys("$setField", expr, ["field", "input", "value"], [
    "field",
    "input",
    "value",
  ]);
  const field = { $literal: fieldName("$setField", args.field) };
  return MINGO.$setField(obj, { ...args, field }, options);
}

/** The operators of this module, by name. */
export const arrayExpressions: Record<string, AnyFn> = {
  $first: orAccumulator("$first", end("$first")),
  $last: orAccumulator("$last", end("$last")),
  $concatArrays,
  $indexOfArray,
  $mergeObjects: orAccumulator("$mergeObjects", $mergeObjects),
  $arrayToObject,
  $zip,
  $getField,
  $setField,
  $const: (_obj: Doc, expr: unknown) => expr,
  $tsSecond: timestampPart("$tsSecond"),
  $tsIncrement: timestampPart("$tsIncrement"),
};

/** A list's members with equal values (numbers of any type alike) kept once, sorted. */
export function distinct(list: unknown[]): unknown[] {
  const sorted = [...list].sort(compareValues);
  return sorted.filter((v, i) => i === 0 || compareValues(v, sorted[i - 1]) !== 0);
}

/** Whether `list` holds a member equal to `value`. */
const holds = (list: unknown[], value: unknown) => list.some((v) => compareValues(v, value) === 0);

/**
 * A set operator: its list operands evaluated (`nullGives`: a null or missing one gives null;
 * otherwise it is refused), each a list, then `compute`d with values equal as MongoDB
 * compares them.
 */
function setOperator(
  op: string,
  count: [number, number],
  compute: (lists: unknown[][]) => unknown,
  nullGives = true,
): AnyFn {
  return (obj: Doc, expr: unknown, options: Options) => {
    const lists = (Array.isArray(expr) ? expr : [expr]).map((e) =>
      evalExpr(obj as never, e as never, options)
    );
    if (lists.length < count[0] || lists.length > count[1]) {
      throw new Error(`${op} takes ${count[0]} to ${count[1]} lists`);
    }
    if (nullGives && lists.some((l) => l === null || l === undefined)) return null;
    if (lists.some((l) => !Array.isArray(l))) throw new Error(`${op} needs lists`);
    return compute(lists as unknown[][]);
  };
}

/** The set operators, as MongoDB computes them (see {@link setOperator}). */
export const setExpressions: Record<string, AnyFn> = {
  $setUnion: setOperator("$setUnion", [0, Infinity], (lists) => distinct(lists.flat(1))),
  $setIntersection: setOperator(
    "$setIntersection",
    [0, Infinity],
    (lists) =>
      lists.length === 0 ? [] : distinct(lists[0]).filter((v) => lists.every((l) => holds(l, v))),
  ),
  $setDifference: setOperator(
    "$setDifference",
    [2, 2],
    ([a, b]) => distinct(a).filter((v) => !holds(b, v)),
  ),
  $setEquals: setOperator("$setEquals", [2, Infinity], (lists) => {
    const first = distinct(lists[0]);
    return lists.every((l) => {
      const d = distinct(l);
      return d.length === first.length && d.every((v, i) => compareValues(v, first[i]) === 0);
    });
  }, false),
  $setIsSubset: setOperator(
    "$setIsSubset",
    [2, 2],
    ([a, b]) => a.every((v) => holds(b, v)),
    false,
  ),
};

/** A 32-bit whole operand of `op` (any numeric type), else an error. */
function int32(op: string, value: unknown): number {
  const n = numberValue(value);
  if (n === undefined || !Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) {
    throw new Error(`${op} needs 32-bit whole numbers`);
  }
  return n;
}

/** `$slice: [list, n]` or `[list, position, n]`: null for a null or missing operand. */
function $slice(obj: Doc, expr: unknown, options: Options): unknown {
  if (!Array.isArray(expr) || expr.length < 2 || expr.length > 3) {
    throw new Error("$slice takes 2 or 3 arguments");
  }
  const values = expr.map((e) => evalExpr(obj as never, e as never, options));
  if (values.some((v) => v === null || v === undefined)) return null;
  const [list, ...numbers] = values;
  if (!Array.isArray(list)) throw new Error("$slice needs a list");
  return MINGO.$slice(
    obj,
    [{ $literal: list }, ...numbers.map((n) => int32("$slice", n))],
    options,
  );
}

/** The most numbers one `$range` makes (MongoDB's limit is 64 MiB of them). */
const MAX_RANGE = 4_000_000;

/** `$range: [start, end, step?]`: 32-bit whole numbers of any numeric type. */
function $range(obj: Doc, expr: unknown, options: Options): unknown {
  if (!Array.isArray(expr) || expr.length < 2 || expr.length > 3) {
    throw new Error("$range takes 2 or 3 arguments");
  }
  const values = expr.map((e) => int32("$range", evalExpr(obj as never, e as never, options)));
  const [start, end, step = 1] = values;
  if (step === 0) throw new Error("$range needs a step other than 0");
  // As MongoDB's memory limit for one $range: a list of millions of numbers is refused.
  if (Math.ceil((end - start) / step) > MAX_RANGE) {
    throw new Error(`$range would make more than ${MAX_RANGE} numbers`);
  }
  return MINGO.$range(obj, values, options);
}

/** `$slice` and `$range` (see each). */
export const sliceExpressions: Record<string, AnyFn> = { $slice, $range };
