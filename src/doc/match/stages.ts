/**
 * The engine's pipeline stages that mingo runs otherwise than MongoDB, as MongoDB runs them:
 * `$count` (no document for no input, a plain field name), `$group` (keys equal as MongoDB
 * compares them), `$limit` (a whole number above 0), `$bucket` (non-empty buckets, in order),
 * `$bucketAuto` (filled as MongoDB fills them, `_id` first), `$lookup` (a pipeline beside
 * `localField`), `$graphLookup` (values equal as MongoDB compares them), `$sample` (each
 * document once), `$unwind` (its index a Long) and `$setWindowFields` (its windows' bounds
 * checked); `$project` has project.ts, `$addFields` and `$set` add-fields.ts. Each says what
 * mingo's did.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $count: "n" }], engineOptions()).run([]); // []
 * ```
 */
import { Aggregator } from "mingo/aggregator";
import { Lazy } from "mingo/lazy";
import * as pipelineOperators from "mingo/operators/pipeline";
import { evalExpr } from "mingo/core";
import { Query } from "mingo/query";
import type { Options } from "mingo/types";
import { type Decimal128, Long, type ObjectId, objectIdHex } from "../bson.ts";
import { type Doc, InvalidQueryError } from "../types.ts";
import { isPlainObject } from "../../util/plain.ts";
import { normalizedDecimal } from "./decimal.ts";
import { bsonType, numberValue, valueOf } from "./numbers.ts";
import { compareValues, EMPTY, pathValues, rank } from "./compare.ts";
import { computation } from "./computation.ts";
import { withoutComments } from "./logical.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const MINGO = pipelineOperators as unknown as Record<string, AnyFn>;

/**
 * `$count` as MongoDB runs it: no document at all for no input (mingo's gave a count of 0),
 * and a name that is a plain field name other than `_id`.
 */
const countStage: AnyFn = (
  coll: { transform(fn: (docs: Doc[]) => unknown): unknown },
  name: unknown,
) => {
  if (
    typeof name !== "string" || name === "" || name === "_id" || name[0] === "$" ||
    name.includes(".") || name.includes("\0")
  ) {
    throw new Error("$count needs a field name: not empty, not _id, no '$' first, no '.'");
  }
  return coll.transform((docs) => Lazy(docs.length === 0 ? [] : [{ [name]: docs.length }]));
};

/** The private expression operator {@link groupStage} puts around a `$group`'s `_id`. */
const GROUP_KEY = "$__groupKey";

/**
 * A `$group` key as MongoDB compares keys: a missing key is null, as is a missing member of
 * a list, while a missing field of a document is left out (`{a: "$a", b: "$b"}` without `b`
 * is `{a: 1}`, another key than `{a: 1, b: null}`); a number is its value whatever its type
 * (an `Int32` 24, a `Long` 24 and 24 are one key; a `Decimal128` without trailing zeros:
 * `10.50` and `10.5` are one).
 */
function groupKey(v: unknown): unknown {
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(groupKey);
  if (isPlainObject(v)) {
    const out: Doc = {};
    for (const key of Object.keys(v)) if (v[key] !== undefined) out[key] = groupKey(v[key]);
    return out;
  }
  switch (bsonType(v)) {
    case "Int32":
    case "Double":
      return valueOf(v);
    case "Long": {
      const n = valueOf(v);
      return Number.isSafeInteger(n) ? n : v;
    }
    case "Decimal128":
      return normalizedDecimal(v as Decimal128);
  }
  return v;
}

/**
 * `$group` with its keys compared as MongoDB compares them ({@link groupKey}; mingo's took
 * `10.50` and `10.5`, or `[null, null]` from missing and from null fields, for other keys).
 */
const groupStage: AnyFn = (coll: unknown, spec: unknown, options: Options) =>
  isPlainObject(spec) && Object.hasOwn(spec, "_id")
    ? MINGO.$group(coll, { ...spec, _id: { [GROUP_KEY]: spec._id } }, options)
    : MINGO.$group(coll, spec, options);

/** The expression operator behind {@link groupStage}. */
export const groupKeyExpression: Record<string, AnyFn> = {
  [GROUP_KEY]: (obj: Doc, expr: unknown, options: Options) =>
    groupKey(evalExpr(obj as never, expr as never, options)),
};

/**
 * `$limit` as MongoDB takes it: a whole number above 0 of any numeric type (mingo's gave no
 * document for 0 and took `1.5` and `"2"`).
 */
const limitStage: AnyFn = (coll: unknown, value: unknown, options: Options) => {
  const n = numberValue(value);
  if (n === undefined) throw new Error("$limit needs a number");
  if (!Number.isInteger(n)) throw new Error("$limit needs a whole number");
  if (n <= 0) throw new Error("$limit must be positive");
  return MINGO.$limit(coll, n, options);
};

/**
 * mingo's `$bucketAuto` (with a `granularity`), each bucket's `_id` first, as MongoDB writes it
 * (mingo's came after the bucket's other fields).
 */
function granularBuckets(coll: unknown, spec: unknown, options: Options): unknown {
  const buckets = MINGO.$bucketAuto(coll, spec, options) as {
    map(fn: (doc: Doc) => Doc): unknown;
  };
  return buckets.map((bucket) => {
    if (!Object.hasOwn(bucket, "_id")) return bucket;
    const { _id, ...rest } = bucket;
    return { _id, ...rest };
  });
}

/** The fields `$bucket` takes. */
const BUCKET_FIELDS = new Set(["groupBy", "boundaries", "default", "output"]);

/** Checks `$bucket`'s or `$bucketAuto`'s `groupBy` and `output`; the output to compute. */
function bucketParts(op: string, spec: Doc): Doc {
  const groupBy = spec.groupBy;
  if (!(typeof groupBy === "string" && groupBy.startsWith("$")) && !isPlainObject(groupBy)) {
    throw new Error(`${op}'s groupBy must be a field path or an expression object`);
  }
  if (spec.output !== undefined && !isPlainObject(spec.output)) {
    throw new Error(`${op}'s output must be a document`);
  }
  return (spec.output as Doc | undefined) ?? { count: { $sum: 1 } };
}

/** Each document of `docs` with its `groupBy` value (a missing one as null). */
function groupByKeys(docs: Doc[], groupBy: unknown, options: Options) {
  const at = computation(options);
  return docs.map((doc) => ({
    doc,
    key: evalExpr(doc as never, groupBy as never, at.update({ root: doc })) ?? null,
  }));
}

/**
 * `$bucket` as MongoDB runs it (a `$group` on the bucket, then a `$sort` on `_id`): a document
 * per bucket holding documents only, the default bucket in its place in MongoDB's order of
 * `_id`s, `_id` first; the boundaries two or more, of one type, ascending; the default outside
 * them; no other field. mingo's wrote a document for an empty bucket too and took unknown
 * fields.
 */
const bucketWithBoundaries: AnyFn = (coll: unknown, spec: unknown, options: Options) => {
  if (!isPlainObject(spec)) throw new Error("$bucket takes a document");
  for (const key of Object.keys(spec)) {
    if (!BUCKET_FIELDS.has(key)) throw new Error(`$bucket does not take '${key}'`);
  }
  const output = bucketParts("$bucket", spec);
  const bounds = spec.boundaries;
  if (!Array.isArray(bounds) || bounds.length < 2) {
    throw new Error("$bucket needs at least two boundaries");
  }
  for (let i = 1; i < bounds.length; i++) {
    if (compareValues(bounds[i - 1], bounds[i]) >= 0 || !sameKind(bounds[i - 1], bounds[i])) {
      throw new Error("$bucket's boundaries must be of one type and in ascending order");
    }
  }
  const hasDefault = Object.hasOwn(spec, "default");
  if (
    hasDefault && sameKind(spec.default, bounds[0]) &&
    compareValues(spec.default, bounds[0]) >= 0 &&
    compareValues(spec.default, bounds[bounds.length - 1]) < 0
  ) {
    throw new Error("$bucket's default must be outside its boundaries");
  }
  return (coll as { transform(fn: (docs: Doc[]) => unknown): unknown }).transform((docs) => {
    const members = new Map<number, Doc[]>();
    for (const { doc, key } of groupByKeys(docs, spec.groupBy, options)) {
      let at = -1;
      if (sameKind(key, bounds[0])) {
        for (let i = 0; i + 1 < bounds.length; i++) {
          if (compareValues(bounds[i], key) <= 0 && compareValues(key, bounds[i + 1]) < 0) {
            at = i;
            break;
          }
        }
      }
      if (at === -1 && !hasDefault) {
        throw new Error("$bucket found no bucket for a value and has no default");
      }
      const list = members.get(at);
      if (list) list.push(doc);
      else members.set(at, [doc]);
    }
    const buckets = [...members].map(([at, docs]) => ({
      _id: at === -1 ? spec.default : bounds[at],
      ...(evalExpr(docs as never, output as never, options) as Doc),
    }));
    return Lazy(buckets.sort((x, y) => compareValues(x._id, y._id)));
  });
};

/** Whether two values are of one kind in MongoDB's order (numbers of any type are one). */
function sameKind(a: unknown, b: unknown): boolean {
  return rank(a) === rank(b);
}

/** The fields `$bucketAuto` takes. */
const AUTO_BUCKET_FIELDS = new Set(["groupBy", "buckets", "output", "granularity"]);

/**
 * `$bucketAuto` without a `granularity`, as MongoDB fills its buckets: the documents in the
 * order of their `groupBy` values (MongoDB's order of every type, a missing value as null),
 * about as many in each bucket (all the rest in the last), a bucket taking every document
 * equal to its last value, its `max` the next bucket's `min` (the last's its own last value),
 * and `output` (a count by default) computed over each bucket's documents, nulls included
 * (mingo's ordered values of different types otherwise and left nulls out of lists such as
 * `$push`'s). With a `granularity`, mingo's stage, `_id` first.
 */
const bucketAutoStage: AnyFn = (coll: unknown, spec: unknown, options: Options) => {
  if (!isPlainObject(spec)) throw new Error("$bucketAuto takes a document");
  if (spec.granularity !== undefined) return granularBuckets(coll, spec, options);
  for (const key of Object.keys(spec)) {
    if (!AUTO_BUCKET_FIELDS.has(key)) throw new Error(`$bucketAuto does not take '${key}'`);
  }
  const output = bucketParts("$bucketAuto", spec);
  const count = numberValue(spec.buckets);
  if (count === undefined || !Number.isInteger(count) || count <= 0) {
    throw new Error("$bucketAuto's buckets must be a whole number above 0");
  }
  return (coll as { transform(fn: (docs: Doc[]) => unknown): unknown }).transform((docs) => {
    const keyed = groupByKeys(docs, spec.groupBy, options)
      .sort((x, y) => compareValues(x.key, y.key));
    const size = Math.max(1, Math.round(keyed.length / count));
    const buckets: Doc[] = [];
    for (let i = 0, made = 0; i < keyed.length && made < count; made++) {
      const start = i;
      const end = made === count - 1 ? keyed.length : Math.min(keyed.length, start + size);
      i = end;
      while (i < keyed.length && compareValues(keyed[i].key, keyed[i - 1].key) === 0) i++;
      const members = keyed.slice(start, i).map((k) => k.doc);
      const max = i < keyed.length ? keyed[i].key : keyed[i - 1].key;
      const computed = evalExpr(members as never, output as never, options) as Doc;
      buckets.push({ _id: { min: keyed[start].key, max }, ...computed });
    }
    return Lazy(buckets);
  });
};

/**
 * The key a join value is hashed under: equal values (in MongoDB's comparison, numbers equal
 * across their types) always share one; values sharing one are compared exactly.
 */
function joinKey(value: unknown): string {
  if (value === null || value === undefined) return "null";
  const n = numberValue(value);
  if (n !== undefined) return `n${n}`;
  if (typeof value === "string") return `s${value}`;
  if (typeof value === "boolean") return `b${value}`;
  if (value instanceof Date) return `d${value.getTime()}`;
  if (bsonType(value) === "ObjectId") return objectIdHex(value as ObjectId, "o");
  return "x";
}

/** A joined collection's documents by the keys of their `foreignField` values. */
type JoinIndex = Map<string, Array<{ at: number; doc: Doc; value: unknown }>>;

/**
 * The index of `docs` by their values at `path` (a list's members); a missing value counts
 * as null, or, with `missing: "skip"`, is left out.
 */
function joinIndex(docs: Doc[], path: string[], missing: "null" | "skip" = "null"): JoinIndex {
  const index: JoinIndex = new Map();
  docs.forEach((doc, at) => {
    for (const value of pathValues(doc, path)) {
      // An empty list equals no single value.
      if (value === EMPTY || (value === undefined && missing === "skip")) continue;
      const key = joinKey(value);
      const entries = index.get(key);
      const entry = { at, doc, value: value ?? null };
      if (entries) entries.push(entry);
      else index.set(key, [entry]);
    }
  });
  return index;
}

/**
 * The documents of `index` whose value equals one of `values` (a missing one as null), by
 * their place in their collection, in its order.
 */
function matchesAt(index: JoinIndex, values: unknown[]): Array<[number, Doc]> {
  const found = new Map<number, Doc>();
  for (const raw of values) {
    if (raw === EMPTY) continue;
    const value = raw ?? null;
    for (const entry of index.get(joinKey(value)) ?? []) {
      if (!found.has(entry.at) && compareValues(entry.value, value) === 0) {
        found.set(entry.at, entry.doc);
      }
    }
  }
  return [...found.entries()].sort((a, b) => a[0] - b[0]);
}

/** The documents of `index` whose value equals one of `values`, in their collection's order. */
function matchesOf(index: JoinIndex, values: unknown[]): Doc[] {
  return matchesAt(index, values).map(([, doc]) => doc);
}

/**
 * A copy of `doc` with `value` at the dotted `path`, as MongoDB sets a stage's output field:
 * a new field goes last, an existing one keeps its place, and a step of the path that holds
 * anything but a document (a list included) becomes a new document.
 */
export function withField(doc: Doc, path: string[], value: unknown, at = 0): Doc {
  const name = path[at];
  if (at === path.length - 1) return { ...doc, [name]: value };
  const inner = doc[name];
  return { ...doc, [name]: withField(isPlainObject(inner) ? inner : {}, path, value, at + 1) };
}

/**
 * `$lookup` by `localField` and `foreignField` (with a `pipeline` or without), as MongoDB
 * joins: values equal in MongoDB's comparison meet (mingo's hashing kept a `Long` 7 from a 7),
 * a list on either side joins by its members, a missing value as null; a `pipeline` runs on
 * each document's matches (mingo's ran on the whole joined collection once one document
 * matched). The other forms are mingo's.
 */
const lookupStage: AnyFn = (coll: unknown, spec: unknown, options: Options) => {
  const resolver = (options as { collectionResolver?: (name: string) => Doc[] })
    .collectionResolver;
  if (
    !isPlainObject(spec) || typeof spec.localField !== "string" ||
    typeof spec.foreignField !== "string" || typeof spec.from !== "string" || !resolver
  ) {
    return mingosLookup(coll, spec, options);
  }
  const joined = resolver(spec.from);
  if (!Array.isArray(joined)) throw new Error("$lookup could not read the collection it joins");
  const index = joinIndex(joined, spec.foreignField.split("."));
  const local = spec.localField.split(".");
  const as = String(spec.as).split(".");
  const pipeline = Array.isArray(spec.pipeline) && spec.pipeline.length > 0
    ? new Aggregator(spec.pipeline as Doc[], options)
    : null;
  const at = computation(options);
  return (coll as { map(fn: (doc: Doc) => Doc): unknown }).map((doc) => {
    const matches = matchesOf(index, pathValues(doc, local));
    if (!pipeline || matches.length === 0) return withField(doc, as, matches);
    const bound = spec.let === undefined ? {} : evalExpr(doc as never, spec.let as never, options);
    const joined = pipeline.run(matches as never, at.update({ root: null, variables: bound }));
    return withField(doc, as, joined);
  });
};

/**
 * A field name no document has: where a stage of mingo's writes a field that is then moved
 * where MongoDB writes it ({@link moveParked}).
 */
const PARKED = "\u0000parked";

/** Each document of `coll` with its {@link PARKED} field's value, as `value` makes it, at `path`. */
function moveParked(
  coll: unknown,
  path: string[],
  value: (parked: unknown) => unknown = (parked) => parked,
): unknown {
  return (coll as { map(fn: (doc: Doc) => Doc): unknown }).map(({ [PARKED]: parked, ...doc }) =>
    withField(doc, path, value(parked))
  );
}

/** mingo's `$lookup` (the forms without `localField`), with a dotted `as` as a nested field. */
function mingosLookup(coll: unknown, spec: unknown, options: Options): unknown {
  if (!isPlainObject(spec) || typeof spec.as !== "string" || !spec.as.includes(".")) {
    return MINGO.$lookup(coll, spec, options);
  }
  return moveParked(MINGO.$lookup(coll, { ...spec, as: PARKED }, options), spec.as.split("."));
}

/** The fields a `$graphLookup` takes. */
const GRAPH_FIELDS = new Set([
  "from",
  "startWith",
  "connectFromField",
  "connectToField",
  "as",
  "maxDepth",
  "depthField",
  "restrictSearchWithMatch",
]);

/** A `$graphLookup` specification, checked. */
interface GraphSpec {
  from: string;
  startWith: unknown;
  connectFrom: string[];
  connectTo: string[];
  as: string[];
  maxDepth?: number;
  depthField?: string[];
  restrict?: Doc;
}

/** Checks a `$graphLookup` specification as MongoDB does; throws naming what is wrong. */
function graphSpec(spec: unknown): GraphSpec {
  if (!isPlainObject(spec)) throw new Error("$graphLookup needs a document");
  for (const key of Object.keys(spec)) {
    if (!GRAPH_FIELDS.has(key)) throw new Error(`$graphLookup does not take '${key}'`);
  }
  const named = (key: string): string | undefined => {
    const value = spec[key];
    if (value === undefined) return undefined;
    if (typeof value !== "string") throw new Error(`$graphLookup's '${key}' must be a string`);
    return value === "" ? undefined : value;
  };
  const [from, as, connectFrom, connectTo] = ["from", "as", "connectFromField", "connectToField"]
    .map(named);
  if (!from || !as || !connectFrom || !connectTo || spec.startWith === undefined) {
    throw new Error(
      "$graphLookup needs 'from', 'as', 'startWith', 'connectFromField' and 'connectToField'",
    );
  }
  let maxDepth: number | undefined;
  if (spec.maxDepth !== undefined) {
    maxDepth = numberValue(spec.maxDepth);
    if (maxDepth === undefined || !Number.isInteger(maxDepth) || maxDepth < 0) {
      throw new Error("$graphLookup's 'maxDepth' must be a whole number, 0 or more");
    }
  }
  const depthField = named("depthField");
  const restrict = spec.restrictSearchWithMatch;
  if (restrict !== undefined && !isPlainObject(restrict)) {
    throw new Error("$graphLookup's 'restrictSearchWithMatch' must be a document");
  }
  return {
    from,
    startWith: spec.startWith,
    connectFrom: connectFrom.split("."),
    connectTo: connectTo.split("."),
    as: as.split("."),
    maxDepth,
    depthField: depthField?.split("."),
    restrict,
  };
}

/**
 * `$graphLookup` as MongoDB searches: breadth first from the values of `startWith` (a list's
 * members each), each round matching `connectToField` to the values of the round before (equal
 * in MongoDB's comparison: numbers across their types, a list by its members; null matches
 * null, never a missing field), then following the matches' `connectFromField` values (a
 * missing one leads nowhere); each document once, at the depth it was first reached, which
 * `depthField` gives as a Long; `restrictSearchWithMatch` keeps other documents out of the
 * search. mingo's hashed values (a Long 7 never met a 7), counted a missing field as null and
 * wrote the depth first.
 */
const graphLookupStage: AnyFn = (coll: unknown, raw: unknown, options: Options) => {
  const spec = graphSpec(raw);
  const resolver = (options as { collectionResolver?: (name: string) => Doc[] })
    .collectionResolver;
  const joined = resolver?.(spec.from);
  if (!Array.isArray(joined)) {
    throw new Error("$graphLookup could not read the collection it searches");
  }
  const index = joinIndex(joined, spec.connectTo, "skip");
  let restrict: Query | undefined;
  if (spec.restrict) restrict = new Query(withoutComments(spec.restrict), options);
  const { maxDepth, depthField } = spec;
  return (coll as { map(fn: (doc: Doc) => Doc): unknown }).map((doc) => {
    const start = evalExpr(doc as never, spec.startWith as never, options);
    // A missing start matches nothing; null matches null.
    let frontier: unknown[] = Array.isArray(start) ? start : start === undefined ? [] : [start];
    const reached = new Set<number>();
    const found: Doc[] = [];
    for (let depth = 0; frontier.length > 0; depth++) {
      if (maxDepth !== undefined && depth > maxDepth) break;
      const next: unknown[] = [];
      for (const [at, match] of matchesAt(index, frontier)) {
        if (reached.has(at) || (restrict && !restrict.test(match))) continue;
        reached.add(at);
        found.push(depthField ? withField(match, depthField, Long.fromNumber(depth)) : match);
        for (const value of pathValues(match, spec.connectFrom)) {
          if (value !== undefined && value !== EMPTY) next.push(value);
        }
      }
      frontier = next;
    }
    return withField(doc, spec.as, found);
  });
};

/**
 * `$sample` as MongoDB takes it: `size` (a number, 0 or more; a fraction counts as its whole
 * part) documents at random, each at most once, all of them in a random order when there are
 * fewer. mingo's drew with replacement: the same document twice, `size` documents from fewer
 * (undefined ones from none).
 */
const sampleStage: AnyFn = (
  coll: { transform(fn: (docs: Doc[]) => unknown): unknown },
  spec: unknown,
) => {
  if (!isPlainObject(spec)) throw new Error("$sample takes a document: {size: n}");
  for (const key of Object.keys(spec)) {
    if (key !== "size") throw new Error(`$sample does not take '${key}'`);
  }
  if (!Object.hasOwn(spec, "size")) throw new Error("$sample needs a size");
  const n = numberValue(spec.size);
  if (n === undefined || Number.isNaN(n)) throw new Error("$sample's size must be a number");
  if (n < 0) throw new Error("$sample's size must not be negative");
  const size = Math.floor(n);
  return coll.transform((docs) => {
    const pool = docs.slice();
    const count = Math.min(size, pool.length);
    // The first `count` places of a Fisher-Yates shuffle.
    for (let i = 0; i < count; i++) {
      const j = i + Math.floor(Math.random() * (pool.length - i));
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    return Lazy(pool.slice(0, count));
  });
};

/** The options `$unwind` takes. */
const UNWIND_OPTIONS = new Set(["path", "includeArrayIndex", "preserveNullAndEmptyArrays"]);

/**
 * `$unwind` with its options checked as MongoDB checks them (a `path` starting with `$`, an
 * `includeArrayIndex` name that does not, a boolean `preserveNullAndEmptyArrays`, nothing
 * else), and the index as MongoDB writes it: a Long (null where no list was unwound), at a
 * dotted name's nested field. mingo's took a path without `$` (and gave no document) and
 * wrote the index as a plain number, at a field named with the dots.
 */
const unwindStage: AnyFn = (coll: unknown, spec: unknown, options: Options) => {
  const form = typeof spec === "string" ? { path: spec } : spec;
  if (!isPlainObject(form)) throw new Error("$unwind takes a field path or a document");
  for (const key of Object.keys(form)) {
    if (!UNWIND_OPTIONS.has(key)) throw new Error(`$unwind does not take '${key}'`);
  }
  const { path, includeArrayIndex: index, preserveNullAndEmptyArrays: preserve } = form;
  if (typeof path !== "string" || path.length < 2 || path[0] !== "$") {
    throw new Error("$unwind's path must be a field path starting with '$'");
  }
  if (preserve !== undefined && typeof preserve !== "boolean") {
    throw new Error("$unwind's preserveNullAndEmptyArrays must be true or false");
  }
  if (index === undefined) return MINGO.$unwind(coll, form, options);
  if (typeof index !== "string" || index === "" || index[0] === "$") {
    throw new Error("$unwind's includeArrayIndex must be a field name not starting with '$'");
  }
  const unwound = MINGO.$unwind(coll, { ...form, includeArrayIndex: PARKED }, options);
  return moveParked(
    unwound,
    index.split("."),
    (n) => typeof n === "number" ? Long.fromNumber(n) : null,
  );
};

/** A window bound's place: a number of documents or a value's offset; ±Infinity unbounded. */
function boundAt(op: string, bound: unknown): number {
  if (bound === "unbounded") return NaN;
  if (bound === "current") return 0;
  const n = numberValue(bound);
  if (n === undefined || !Number.isFinite(n)) {
    throw new Error(`${op}: a window bound is a number, "current" or "unbounded"`);
  }
  return n;
}

/** Checks a window's `documents` or `range` bounds as MongoDB does: two, the lower first. */
function checkWindow(window: unknown): void {
  if (window === undefined) return;
  if (!isPlainObject(window)) throw new Error("$setWindowFields: a window is a document");
  for (const kind of ["documents", "range"] as const) {
    const bounds = window[kind];
    if (bounds === undefined) continue;
    const op = `$setWindowFields: the window's '${kind}'`;
    if (!Array.isArray(bounds) || bounds.length !== 2) {
      throw new Error(`${op} takes two bounds, [lower, upper]`);
    }
    if (kind === "documents") {
      for (const bound of bounds) {
        if (typeof bound !== "string" && !Number.isInteger(numberValue(bound))) {
          throw new Error(`${op} bounds are whole numbers, "current" or "unbounded"`);
        }
      }
    }
    const [lower, upper] = bounds.map((bound) => boundAt(op, bound));
    // "unbounded" (NaN here) fits either end.
    if (lower > upper) throw new Error(`${op}: the lower bound must not exceed the upper one`);
  }
}

/**
 * `$setWindowFields` with each window's bounds checked as MongoDB checks them (two, the lower
 * first; documents counted in whole numbers); mingo's took `[1, -1]` and summed nothing.
 */
const windowStage: AnyFn = (coll: unknown, spec: unknown, options: Options) => {
  if (isPlainObject(spec) && isPlainObject(spec.output)) {
    for (const field of Object.values(spec.output)) {
      if (isPlainObject(field)) checkWindow(field.window);
    }
  }
  return MINGO.$setWindowFields(coll, spec, options);
};

/**
 * `$geoNear` met by the engine: the store runs a leading one (it reads by distance with the
 * collection's indexes), so one the engine meets stands elsewhere, which MongoDB refuses.
 */
const geoNearStage: AnyFn = () => {
  const reason = "$geoNear is only valid as the first stage in a pipeline";
  throw new InvalidQueryError(reason, { reason });
};

/** The stages above, by name. */
export const pipelineStages: Record<string, AnyFn> = {
  $geoNear: geoNearStage,
  $count: countStage,
  $group: groupStage,
  $limit: limitStage,
  $bucket: bucketWithBoundaries,
  $bucketAuto: bucketAutoStage,
  $lookup: lookupStage,
  $graphLookup: graphLookupStage,
  $sample: sampleStage,
  $unwind: unwindStage,
  $setWindowFields: windowStage,
};
