/**
 * The document matcher, shared by the embedded store and in-memory filtering (the change
 * feed): mingo configured with scripts off, MongoDB sort order in `$sort`, extra query
 * operators (geo), and a resolver for `$lookup`.
 */
import { Context } from "mingo";
import { Query } from "mingo/query";
import { Lazy } from "mingo/lazy";
import * as accumulatorOperators from "mingo/operators/accumulator";
import * as expressionOperators from "mingo/operators/expression";
import * as pipelineOperators from "mingo/operators/pipeline";
import * as projectionOperators from "mingo/operators/projection";
import * as queryOperators from "mingo/operators/query";
import * as windowOperators from "mingo/operators/window";
import type { Options } from "mingo/types";
import { type Doc, type Filter, InvalidQueryError, type Projection, type Sort } from "../types.ts";
import { sortDocs } from "./compare.ts";
import { geoQueryOperators } from "./geo.ts";
import { metaExpressionOperators, TEXT_SCORE, textExpressionOperators } from "./text.ts";
import { compileSimple } from "./fastmatch.ts";
import { linearExpressionOperators, linearQueryOperators } from "./linear-regex.ts";
import { comparisonOperators } from "./comparisons.ts";
import { $type } from "./type-operator.ts";
import { $elemMatch } from "./elem-match.ts";
import { logicalOperators, withoutComments } from "./logical.ts";
import { $size } from "./size-operator.ts";
import { $mod } from "./mod-operator.ts";
import { arithmeticExpressions, numericAccumulators, numericExpressions } from "./accumulators.ts";
import { groupKeyExpression, pipelineStages } from "./stages.ts";
import { addFieldsStages } from "./add-fields.ts";
import { projectStages } from "./project.ts";
import {
  caseExpressions,
  checkedConditionals,
  conversionExpressions,
  listAndTextExpressions,
  roundingExpressions,
  typeExpression,
} from "./expressions.ts";
import { $dateToString, datePartExpressions } from "./dates.ts";
import { dateArithmetic } from "./date-arithmetic.ts";
import { $dateFromString } from "./date-from-string.ts";
import { mathExpressions, percentileExpressions } from "./math.ts";
import { stringExpressions } from "./strings.ts";
import { arrayExpressions, setExpressions, sliceExpressions } from "./arrays.ts";
import { orderedListAccumulators, orderedListExpressions } from "./ordered-lists.ts";
import { collectingAccumulators } from "./collecting.ts";
import { sizeExpressions } from "./sizes.ts";
import { functionExpressions } from "./functions.ts";
import { variableExpressions } from "./variables.ts";
import { comparisonExpressions } from "./order.ts";
import { cloneValue } from "../clone.ts";
import { computation } from "./computation.ts";
import { numberValue } from "./numbers.ts";
import { isPlainObject } from "../../util/plain.ts";

/**
 * Builds mingo options; `resolve` returns the documents of another collection. They are
 * mingo's own prepared options: mingo copies every operator table of plain options each time
 * a query or an aggregation is made of them (some 300 operators, a few microseconds and
 * kilobytes a request), and takes its prepared ones as they are.
 */
export function engineOptions(resolve?: (name: string) => Doc[]): Partial<Options> {
  return computation({ scriptEnabled: false, collectionResolver: resolve, context: CONTEXT });
}

/**
 * The plain options behind prepared ones ({@link engineOptions}), for mingo's updater, which
 * spreads the options it is given (a prepared object spread loses its operators).
 */
export function plainOptions(options: Partial<Options>): Partial<Options> {
  return (options as { options?: Partial<Options> }).options ?? options;
}

// deno-lint-ignore no-explicit-any
type AnyFn = (...args: any[]) => any;

/**
 * A `$sort` stage's specification as MongoDB takes it: one field or more, each sorted by 1 or
 * -1 of any numeric type (read here as the numbers 1 and -1).
 */
function sortSpec(spec: unknown): Sort {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) {
    throw new InvalidQueryError("$sort takes a document of one field or more");
  }
  const sort: Sort = {};
  for (const [path, value] of Object.entries(spec)) {
    const direction = numberValue(value);
    if (direction !== 1 && direction !== -1) {
      throw new InvalidQueryError(`$sort: '${path}' must be sorted by 1 or -1`);
    }
    sort[path] = direction;
  }
  return sort;
}

const MINGO_PIPELINE = pipelineOperators as unknown as Record<string, AnyFn>;

/** `$match`, without the `$comment`s of its filter (see `withoutComments`). */
const matchStage: AnyFn = (collection: unknown, filter: unknown, options: Options) =>
  MINGO_PIPELINE.$match(
    collection,
    isPlainObject(filter) ? withoutComments(filter) : filter,
    options,
  );

const sortStage: AnyFn = (
  coll: { transform(fn: (docs: Doc[]) => unknown): unknown },
  spec: unknown,
) => {
  if (isPlainObject(spec) && Object.values(spec).some(isTextScoreKey)) {
    return coll.transform((docs) => Lazy(sortByTextScore(docs, spec)));
  }
  const sort = sortSpec(spec);
  return coll.transform((docs) => Lazy(sortDocs(docs, sort)));
};

/** Whether a `$sort` key is `{"$meta": "textScore"}`. */
function isTextScoreKey(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).length === 1 && value.$meta === "textScore";
}

/**
 * `docs` sorted by `spec` where some keys are `{"$meta": "textScore"}`: by the text score,
 * highest first, as MongoDB sorts by it; the other keys as `$sort` takes them.
 */
function sortByTextScore(docs: Doc[], spec: Record<string, unknown>): Doc[] {
  // Sorted as wrappers: `d` the document, `s` its score.
  const sort: Sort = {};
  for (const [path, value] of Object.entries(spec)) {
    if (isTextScoreKey(value)) sort.s = -1;
    else sort[`d.${path}`] = sortSpec({ [path]: value })[path];
  }
  const wrapped = docs.map((d) => {
    const s = (d as { [TEXT_SCORE]?: number })[TEXT_SCORE];
    if (s === undefined) {
      const reason = "query requires text score metadata, but it is not available";
      throw new InvalidQueryError(reason, { reason });
    }
    return { d, s };
  });
  return sortDocs(wrapped as unknown as Doc[], sort).map((w) => (w as unknown as { d: Doc }).d);
}

type Ops = Record<`$${string}`, AnyFn>;

/**
 * All of mingo's operators with ours on top. Use it with the base classes of
 * "mingo/query", "mingo/aggregator" and "mingo/updater": the wrappers of "mingo" merge
 * their default context first, and in a merge the first definition of a name wins.
 */
const TABLES = {
  accumulator: {
    ...accumulatorOperators,
    ...numericAccumulators,
    ...collectingAccumulators,
    ...orderedListAccumulators,
  } as unknown as Ops,
  expression: {
    ...expressionOperators,
    ...linearExpressionOperators,
    ...numericExpressions,
    ...arithmeticExpressions,
    ...roundingExpressions,
    ...conversionExpressions,
    $dateToString,
    ...datePartExpressions,
    ...dateArithmetic,
    $dateFromString,
    ...mathExpressions,
    ...percentileExpressions,
    ...stringExpressions,
    ...arrayExpressions,
    ...setExpressions,
    ...sliceExpressions,
    ...orderedListExpressions,
    ...sizeExpressions,
    ...functionExpressions,
    ...variableExpressions,
    ...comparisonExpressions,
    ...caseExpressions,
    ...groupKeyExpression,
    ...typeExpression,
    ...checkedConditionals,
    ...listAndTextExpressions,
    ...textExpressionOperators,
    ...metaExpressionOperators,
  } as unknown as Ops,
  pipeline: {
    ...pipelineOperators,
    $match: matchStage,
    $sort: sortStage,
    ...pipelineStages,
    ...projectStages,
    ...addFieldsStages,
  } as unknown as Ops,
  projection: projectionOperators as unknown as Ops,
  query: {
    ...queryOperators,
    ...geoQueryOperators,
    ...linearQueryOperators,
    ...comparisonOperators,
    $type,
    $elemMatch,
    ...logicalOperators,
    $size,
    $mod,
  } as unknown as Ops,
  window: windowOperators as unknown as Ops,
};

const CONTEXT = Context.init(TABLES);

/**
 * Every operator name the engine runs, of every kind: stages, expression, accumulator, query,
 * projection and window operators.
 */
export const ENGINE_OPERATORS: ReadonlySet<string> = new Set(
  Object.values(TABLES).flatMap((table) => Object.keys(table)),
);

/** A compiled document predicate. */
export type Matcher = (doc: Doc) => boolean;

/** The matcher of an empty filter (callers may compare with it to skip the calls). */
export const MATCH_ALL: Matcher = () => true;

/** Whether `v` is a value that equality on it needs no query engine (no null, no arrays). */
export function isSimpleValue(v: unknown): boolean {
  const t = typeof v;
  if (t === "string" || t === "boolean") return true;
  if (t === "number") return !Number.isNaN(v);
  return v !== null && t === "object" &&
    (v as { _bsontype?: string })._bsontype === "ObjectId";
}

/**
 * The `_id` value when `filter` selects by `_id` equality (`{_id: x}` or
 * `{_id: {$eq: x}}`), otherwise undefined.
 */
export function idEquality(filter: Filter): unknown {
  if (!Object.hasOwn(filter, "_id")) return undefined;
  let v = filter._id;
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    if (keys.length !== 1 || keys[0] !== "$eq") return undefined;
    v = v.$eq;
  }
  return isSimpleValue(v) || v instanceof Date ? v : undefined;
}

/**
 * The `_id` value every document `filter` matches must have: {@link idEquality} of the
 * filter or of one member of its top-level `$and` (as a read of a soft-deletable or
 * filtered resource asks: `{$and: [{_id: x}, {_deleted: {$ne: true}}]}`), otherwise
 * undefined. Unlike a bare equality, the filter may say more: the caller tests the
 * document it finds against the whole filter unless {@link onlyIdEquality} holds.
 */
export function idEqualityWithin(filter: Filter): unknown {
  const id = idEquality(filter);
  if (id !== undefined || !Object.hasOwn(filter, "$and")) return id;
  const parts = filter.$and;
  if (!Array.isArray(parts)) return undefined;
  for (const part of parts) {
    if (!isPlainObject(part)) continue;
    const found = idEquality(part as Filter);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether `filter` is `{_id: x}` or `{_id: {$eq: x}}` and nothing else. */
export function onlyIdEquality(filter: Filter): boolean {
  let n = 0;
  for (const key in filter) if (Object.hasOwn(filter, key) && ++n > 1) return false;
  return n === 1 && idEquality(filter) !== undefined;
}

/**
 * Compiles `filter` once: the common simple shape gets a direct predicate
 * ({@link compileSimple}); anything else goes to mingo.
 */
export function compileFilter(filter: Filter, options: Partial<Options>): Matcher {
  if (Object.keys(filter).length === 0) return MATCH_ALL;
  const simple = compileSimple(filter);
  if (simple) return simple;
  return engineMatcher(filter, options);
}

/**
 * The reason fit to show a client for an engine refusal with `message`, when MongoDB gives
 * one for the same query: a `$text` the store did not take (it takes one at the top of a
 * filter, or in a pipeline's first `$match`). Other engine texts may quote internals: none.
 */
export function engineReason(message: string): string | undefined {
  return message.includes("unknown top level operator: $text")
    ? "$match with $text is only allowed as the first pipeline stage"
    : undefined;
}

/**
 * `filter` compiled by the query engine alone, without the direct matcher of the common
 * shape (which must answer the same: tests compare the two).
 */
export function engineMatcher(filter: Filter, options: Partial<Options>): Matcher {
  let query: Query;
  try {
    query = new Query(arrayMembersAsEqualities(withoutComments(filter), 0), options);
  } catch (err) {
    // The engine refuses the filter itself: a client's query, whoever compiles it.
    if (!(err instanceof Error)) throw err;
    throw new InvalidQueryError(err.message, { cause: err, reason: engineReason(err.message) });
  }
  return (doc) => query.test(doc);
}

/**
 * MongoDB's `$in` with an array member also matches a field holding that very array (as
 * `{field: [...]}` does), and `$nin` refuses it; the query engine compares array members
 * with the field's elements only. Such conditions (at the top level and in `$and`, `$or`,
 * `$nor`) get equalities beside them, which the engine matches as MongoDB does; under `$not`,
 * the condition becomes a `$nor` of its rewritten form.
 */
export function arrayMembersAsEqualities(filter: Filter, depth = 0): Filter {
  if (depth > 32) return filter;
  let out: Filter | undefined;
  const extra: Filter[] = [];
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    let next: unknown = value;
    if (key === "$and" || key === "$or" || key === "$nor") {
      if (Array.isArray(value)) {
        const subs = value.map((sub) =>
          isPlainObject(sub) ? arrayMembersAsEqualities(sub as Filter, depth + 1) : sub
        );
        if (subs.some((sub, i) => sub !== value[i])) next = subs;
      }
    } else if (!key.startsWith("$") && isPlainObject(value)) {
      let cond = value as Doc;
      // `$not` of such a condition: none of the documents the rewritten condition finds.
      const negated = cond.$not;
      if (isPlainObject(negated) && holdsArrayMembers(negated)) {
        extra.push({ $nor: [arrayMembersAsEqualities({ [key]: negated }, depth + 1)] });
        cond = Object.fromEntries(Object.entries(cond).filter(([name]) => name !== "$not"));
      }
      for (const op of ["$in", "$nin"]) {
        const members = cond[op];
        if (!Array.isArray(members) || !members.some(Array.isArray)) continue;
        const either: Filter[] = [{ [key]: { $in: members } }];
        for (const member of members) {
          if (Array.isArray(member)) either.push({ [key]: { $eq: member } });
        }
        extra.push(op === "$in" ? { $or: either } : { $nor: either });
        cond = Object.fromEntries(Object.entries(cond).filter(([name]) => name !== op));
      }
      next = cond;
    }
    if (next === value) continue;
    out ??= { ...filter };
    if (isPlainObject(next) && Object.keys(next as Doc).length === 0) delete out[key];
    else out[key] = next;
  }
  if (extra.length === 0) return out ?? filter;
  return { $and: [out ?? filter, ...extra] };
}

/** Whether a field's condition has an `$in` or `$nin` with an array among its members. */
function holdsArrayMembers(cond: Doc): boolean {
  return ["$in", "$nin"].some((op) => Array.isArray(cond[op]) && cond[op].some(Array.isArray));
}

/** A deep copy of `doc` with `projection` applied (none: the whole copy). */
export function projectDocument(
  doc: Doc,
  projection: Projection | undefined,
  options: Partial<Options>,
): Doc {
  // Copy first: mingo's projection may edit nested values in place.
  const copy = cloneValue(doc);
  if (!projection || Object.keys(projection).length === 0) return copy;
  return new Query({}, options).find<Doc>([copy], projection).all()[0] ?? {};
}

/**
 * The fields an upsert copies from its filter: top-level (and `$and`) equality
 * conditions, with dotted names expanded into nested documents.
 */
export function equalityFields(filter: Filter): Doc {
  const out: Doc = {};
  const visit = (f: Filter) => {
    for (const [k, v] of Object.entries(f)) {
      if (k === "$and" && Array.isArray(v)) {
        for (const sub of v) if (isPlainObject(sub)) visit(sub);
        continue;
      }
      if (k[0] === "$") continue;
      let value = v;
      if (isPlainObject(v)) {
        const ks = Object.keys(v);
        if (ks.length === 1 && ks[0] === "$eq") value = v.$eq;
        else if (ks.some((x) => x[0] === "$")) continue;
      }
      if (value instanceof RegExp) continue;
      setPath(out, k, value);
    }
  };
  visit(filter);
  return out;
}

function setPath(target: Doc, path: string, value: unknown): void {
  const parts = path.split(".");
  let cur = target;
  for (let i = 0; i < parts.length - 1; i++) {
    const next = cur[parts[i]];
    if (!isPlainObject(next)) cur[parts[i]] = {};
    cur = cur[parts[i]] as Doc;
  }
  cur[parts[parts.length - 1]] = value;
}
