/**
 * Aggregation on the embedded store: mingo's Aggregator over the collection snapshot,
 * `$lookup`/`$unionWith`/`$graphLookup` reading sibling collections, and a final `$out`
 * or `$merge` stage written durably through the target collection.
 */
import { Aggregator } from "mingo/aggregator";
import type { Options } from "mingo/types";
import type { Doc } from "../store.ts";
import { ObjectId } from "../../doc/bson.ts";
import { cloneValue } from "../../doc/clone.ts";
import { isPlainObject } from "../../util/plain.ts";
import { valueKey } from "./codec.ts";
import { arrayMembersAsEqualities, compileFilter } from "../../doc/match/engine.ts";
import { simpleConditions, type Test } from "../../doc/match/fastmatch.ts";
import { isBsonNumber } from "../../doc/match/numbers.ts";
import { isColumnField, MAX_COLUMNS, type Timeout } from "./columns.ts";
import type { Change } from "./indexes.ts";
import {
  type AggregateOptions,
  DuplicateKeyError,
  InvalidQueryError,
  QueryTimeoutError,
} from "../store.ts";
import { evalExpr } from "mingo/core";
import { computation } from "../../doc/match/computation.ts";
import { TEXT_SCORE } from "../../doc/match/text.ts";
import { setOwn } from "../../util/own.ts";

/** The collection operations aggregation needs. */
export interface AggregateSource {
  readonly name: string;
  snapshot(): Doc[];
  /**
   * Columns of top-level fields over the snapshot (see columns.ts), when the source keeps
   * them; null when it has none for them yet.
   */
  columns?(fields: readonly string[], timeout: Timeout | null): unknown[][] | null;
  sibling(name: string): AggregateTarget;
  /**
   * What a leading `$geoNear` stage of specification `spec` passes on: the matching documents
   * nearest first, each with the fields the stage writes (not deep copies).
   */
  geoNear?(spec: unknown): Doc[];
  readonly options: Partial<Options>;
  /** Time bound of one aggregation in ms (QUERY_TIMEOUT_MS); 0 or absent: none. */
  readonly timeoutMs?: number;
}

/** A collection that `$out`/`$merge` can write to. */
export interface AggregateTarget {
  readonly name: string;
  replaceAll(docs: Doc[]): void;
  mergeChanges(changes: Change[]): void;
  byId(id: string): Doc | undefined;
}

interface MergeSpec {
  into: string | { db?: string; coll: string };
  on?: string | string[];
  whenMatched?: string;
  whenNotMatched?: string;
}

/**
 * Runs `pipeline` on copies of the stored documents, with the `let` variables and the
 * `maxTimeMS` of `given` (MongoDB's other options have no use here).
 */
export function runAggregate(
  source: AggregateSource,
  pipeline: Doc[],
  given: AggregateOptions = {},
  textScore?: (stored: Doc) => number,
): Doc[] {
  const options = given.let === undefined ? source.options : withVariables(source, given.let);
  // A leading `$geoNear` is the store's: it reads by distance, with the collection's indexes.
  const near = pipeline.length > 0 && Object.hasOwn(pipeline[0], "$geoNear") && source.geoNear
    ? source.geoNear(pipeline[0].$geoNear)
    : null;
  if (near) pipeline = pipeline.slice(1);
  const last = pipeline[pipeline.length - 1];
  const writes = last && ("$out" in last || "$merge" in last);
  const stages = writes ? pipeline.slice(0, -1) : pipeline;
  // mingo stages may modify nested values of their input in place: feed copies, and
  // copy only what a leading $match lets through.
  let start = 0;
  const matches: Doc[] = [];
  while (start < stages.length && isMatchOnly(stages[start])) {
    matches.push(stages[start++].$match as Doc);
  }
  // Later $match stages get the store's reading of array members too (see engine.ts).
  const rest = stages.slice(start).map((stage) =>
    isMatchOnly(stage) ? { $match: arrayMembersAsEqualities(stage.$match as Doc) } : stage
  );
  const filter = matches.length === 0
    ? null
    : matches.length === 1
    ? matches[0]
    : { $and: matches };
  let compiled: ((doc: Doc) => boolean) | null | undefined;
  const test = () => compiled ??= filter === null ? null : compileFilter(filter, options);
  // A final `$facet` of pages and counts only is read off the results of the stages before
  // it: they run once, not once per facet.
  const facets = !writes && rest.length > 0 ? pageFacets(rest[rest.length - 1]) : null;
  const body = facets ? rest.slice(0, -1) : rest;
  const bound = source.timeoutMs ?? 0;
  const timeoutMs = given.maxTimeMS !== undefined && given.maxTimeMS > 0 &&
      (bound === 0 || given.maxTimeMS < bound)
    ? given.maxTimeMS
    : bound;
  const grouped = !near && !textScore && body.length > 0 ? plainGroup(body[0]) : null;
  const first = grouped ? groupOf(source, grouped, { filter, test, timeoutMs }) : null;
  const results = first
    ? (body.length > 1 ? new Aggregator(body.slice(1), options).run<Doc>(first) : first)
    : new Aggregator(body, options).run<Doc>(
      inputOf(near ?? source.snapshot(), {
        test: test(),
        textScore,
        timeoutMs,
        fields: body.length > 0 ? groupInputFields(body[0]) : null,
      }),
    );
  for (const doc of results) {
    dropMissing(doc);
    // The text score is metadata: a result carries it only where a stage wrote it out.
    if (textScore) delete (doc as { [TEXT_SCORE]?: number })[TEXT_SCORE];
  }
  if (facets) return [facets(results)];
  if (!writes) return results;
  if ("$out" in last) {
    const target = last.$out as string | { coll: string };
    source.sibling(typeof target === "string" ? target : target.coll).replaceAll(results);
  } else {
    merge(source, last.$merge as string | MergeSpec, results);
  }
  return [];
}

/**
 * The engine's options with the pipeline's `let` variables bound: each an expression
 * evaluated once, without a document (as MongoDB evaluates them).
 */
function withVariables(source: AggregateSource, variables: Doc): Partial<Options> {
  if (!isPlainObject(variables)) throw new InvalidQueryError("let must be a document");
  const values: Doc = {};
  for (const [name, expr] of Object.entries(variables)) {
    if (!/^[a-z][A-Za-z0-9_]*$/.test(name)) {
      throw new InvalidQueryError(
        `'${name}' starts with an invalid character for a user variable name`,
      );
    }
    setOwn(values, name, evalExpr({}, expr as never, source.options as Options));
  }
  return computation(source.options).update({ root: null, variables: values });
}

/**
 * Leaves out, in place, the fields the engine computed as no value (`{$arrayElemAt: [[], 0]}`,
 * `$$REMOVE`): MongoDB leaves them out of its results; in a list, no value is null there.
 */
function dropMissing(value: unknown): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (value[i] === undefined) value[i] = null;
      else dropMissing(value[i]);
    }
    return;
  }
  if (!isPlainObject(value)) return;
  for (const key in value) {
    const field = value[key];
    if (field === undefined) delete value[key];
    else if (typeof field === "object" && field !== null) dropMissing(field);
  }
}

/** Fields read through columns at most by one aggregation (see columns.ts). */
const MAX_COLUMNS_READ = MAX_COLUMNS / 2;

/**
 * The output of a plain group (see {@link plainGroup}) over the collection. When the leading
 * `$match`es are conditions on top-level fields (see simpleConditions) and the collection
 * has columns of the fields involved, the pass reads them, not the documents: the same
 * values in the same order.
 */
function groupOf(
  source: AggregateSource,
  group: PlainGroup,
  options: {
    /** The leading `$match`es joined; null: none. */
    filter: Doc | null;
    /** The same compiled (on demand). */
    test: () => ((doc: Doc) => boolean) | null;
    timeoutMs: number;
  },
): Doc[] | null {
  const { filter, timeoutMs } = options;
  const conditions = filter === null ? [] : simpleConditions(filter);
  const fields = conditions === null ? [] : [...group.fields, ...conditions.map(([f]) => f)];
  if (
    conditions === null || !source.columns || new Set(fields).size > MAX_COLUMNS_READ ||
    !fields.every(isColumnField)
  ) {
    return group.run(source.snapshot(), { test: options.test(), timeoutMs });
  }
  const timeout = timeoutMs > 0 ? { deadline: performance.now() + timeoutMs, ms: timeoutMs } : null;
  const columns = source.columns(fields, timeout);
  if (columns === null) return group.run(source.snapshot(), { test: options.test(), timeoutMs });
  const width = group.fields.length;
  return group.runColumns(
    source.snapshot().length,
    columns.slice(0, width),
    conditions.map(([, test], i) => [columns[width + i], test] as const),
    timeout,
  );
}

/**
 * Copies of the documents a leading `$match` lets through, pulled by the pipeline one at a
 * time. The clock is read every 64 documents: the stages consume their input as they go, so
 * the deadline bounds the whole pass over the collection (a stage that works on its whole
 * output afterwards, such as a `$sort` after a `$group`, is not bounded by it).
 */
function* inputOf(
  docs: Doc[],
  options: {
    test: ((doc: Doc) => boolean) | null;
    timeoutMs: number;
    /** The only top-level fields the pipeline reads (see groupInputFields); null: all. */
    fields: string[] | null;
    /** The text score of each document a `$text` search let through, kept on its copy. */
    textScore?: (stored: Doc) => number;
  },
): Generator<Doc> {
  const { test, timeoutMs, fields, textScore } = options;
  const deadline = timeoutMs > 0 ? performance.now() + timeoutMs : Infinity;
  let seen = 0;
  for (const doc of docs) {
    if ((++seen & 63) === 0 && performance.now() > deadline) {
      throw new QueryTimeoutError(`aggregation exceeded ${timeoutMs} ms`);
    }
    if (test && !test(doc)) continue;
    let copy: Doc;
    if (fields === null) copy = cloneValue(doc) as Doc;
    else {
      copy = {};
      for (const f of fields) if (Object.hasOwn(doc, f)) copy[f] = cloneValue(doc[f]);
    }
    if (textScore) (copy as { [TEXT_SCORE]?: number })[TEXT_SCORE] = textScore(doc);
    yield copy;
  }
}

/**
 * A `$facet` stage whose every facet is made of `$skip`, `$limit` and `$count` stages only
 * (a page of the results and their number, as an endpoint's pagination asks): a function
 * making its one output document from the results of the stages before it, as the engine
 * would. Null for any other stage.
 */
export function pageFacets(stage: Doc): ((results: Doc[]) => Doc) | null {
  const keys = Object.keys(stage);
  if (keys.length !== 1 || keys[0] !== "$facet") return null;
  const spec = stage.$facet;
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) return null;
  const facets: Array<[string, Array<(docs: Doc[]) => Doc[]>]> = [];
  for (const [name, pipeline] of Object.entries(spec as Doc)) {
    if (!Array.isArray(pipeline)) return null;
    const steps: Array<(docs: Doc[]) => Doc[]> = [];
    for (const step of pipeline as unknown[]) {
      if (step === null || typeof step !== "object" || Array.isArray(step)) return null;
      const names = Object.keys(step);
      if (names.length !== 1) return null;
      const value = (step as Doc)[names[0]];
      if (names[0] === "$skip" && isCount(value)) {
        steps.push((docs) => docs.slice(value as number));
      } else if (names[0] === "$limit" && isCount(value) && (value as number) > 0) {
        steps.push((docs) => docs.slice(0, value as number));
      } else if (
        names[0] === "$count" && typeof value === "string" && value.trim().length > 0 &&
        !value.includes(".") && !value.startsWith("$")
      ) {
        steps.push((docs) => docs.length === 0 ? [] : [{ [value]: docs.length }]);
      } else return null;
    }
    facets.push([name, steps]);
  }
  return (results) => {
    const out: Doc = {};
    // The results go to one facet as they are; any other facet holding some gets copies.
    let handed = false;
    for (const [name, steps] of facets) {
      let docs = results;
      for (const step of steps) docs = step(docs);
      const counted = docs.length === 1 && !results.includes(docs[0]);
      if (!counted && handed) docs = docs.map(cloneValue);
      if (!counted) handed = true;
      out[name] = docs;
    }
    return out;
  };
}

function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** The options of a compiled plain group's pass over documents (see {@link plainGroup}). */
interface GroupInput {
  /** The leading `$match`es, compiled; null: every document. */
  test: ((doc: Doc) => boolean) | null;
  /** Time bound of the pass in ms; 0: none. */
  timeoutMs: number;
}

/** A compiled plain group (see {@link plainGroup}). */
export interface PlainGroup {
  /** The top-level fields the group reads: its key's (if any), then its accumulators'. */
  readonly fields: readonly string[];
  /** The group's output from the stored documents; null: the engine must run the stage. */
  run(docs: readonly Doc[], input: GroupInput): Doc[] | null;
  /**
   * The same from columns of `rows` values (see columns.ts): `values` holds the column of
   * each of {@link fields}, `conditions` the leading `$match`es as conditions on columns (a
   * row passes when each of its values there passes the test). Rows are read in order, as
   * `run` reads documents, so the output is the same.
   */
  runColumns(
    rows: number,
    values: readonly unknown[][],
    conditions: ReadonlyArray<readonly [unknown[], Test]>,
    timeout: Timeout | null,
  ): Doc[] | null;
}

/** One accumulator of a plain group: its running state per group. */
type Accumulator =
  | { kind: "count"; times: number }
  | { kind: "sum" | "avg"; field: string };

/**
 * Names Object.prototype gives every object: the engine reads such a field of a document
 * only when the document has it as its own, and the fast path leaves them to it.
 */
const PROTO_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));

/** The top-level field a `"$name"` path names, or null for anything else. */
function topLevelPath(value: unknown): string | null {
  if (typeof value !== "string" || value.length < 2 || value[0] !== "$") return null;
  const name = value.slice(1);
  if (name.includes(".") || name.includes("$") || PROTO_NAMES.has(name)) return null;
  return name;
}

/** A plain number, as the engine's accumulators count it (NaN is one: a sum with it is NaN). */
function isNumber(v: unknown): v is number {
  return typeof v === "number";
}

/** The running state of one group: its number of documents, per accumulator a sum and a count. */
interface Group {
  size: number;
  sums: number[];
  counts: number[];
}

/** The groups of a pass, by key, in the order their key first appears. */
class Groups {
  readonly byKey = new Map<unknown, Group>();

  constructor(readonly width: number) {}

  /** The group of `key` (a primitive value or null), made when it is new. */
  of(key: unknown): Group {
    let group = this.byKey.get(key);
    if (!group) {
      group = {
        size: 0,
        sums: new Array(this.width).fill(0),
        counts: new Array(this.width).fill(0),
      };
      this.byKey.set(key, group);
    }
    return group;
  }
}

/** A group key the fast path cannot take: one the engine compares by content. */
function isContentKey(key: unknown): boolean {
  return key !== null && typeof key === "object" || typeof key === "function";
}

/**
 * A `$group` stage grouping by one top-level field (or by nothing: `_id: null`) with `$sum`
 * (of a number or a top-level field), `$avg` (of a top-level field) and `$count`
 * accumulators, compiled to one pass over the stored documents (or over columns of their
 * fields) that reads only those fields and copies nothing (the engine copies every document
 * it is fed, then evaluates each accumulator expression per document). Its output is the
 * engine's exactly: groups in the order their key first appears, `_id` first, accumulators
 * in the stage's order, sums added in document order. Null for any other stage; the
 * compiled pass returns null (the engine then runs the stage) when a key is not a primitive
 * value, which the engine compares by content.
 */
export function plainGroup(stage: Doc): PlainGroup | null {
  const keys = Object.keys(stage);
  if (keys.length !== 1 || keys[0] !== "$group") return null;
  const spec = stage.$group as Doc;
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) return null;
  if (!Object.hasOwn(spec, "_id")) return null;
  const idSpec = spec._id;
  const idField = idSpec === null ? null : topLevelPath(idSpec);
  if (idSpec !== null && idField === null) return null;
  const names: string[] = [];
  const accumulators: Accumulator[] = [];
  for (const [name, expr] of Object.entries(spec)) {
    if (name === "_id") continue;
    if (name.includes(".") || name.startsWith("$")) return null;
    if (expr === null || typeof expr !== "object" || Array.isArray(expr)) return null;
    const ops = Object.keys(expr);
    if (ops.length !== 1) return null;
    const arg = (expr as Doc)[ops[0]];
    if (ops[0] === "$sum" && isNumber(arg)) accumulators.push({ kind: "count", times: arg });
    else if (ops[0] === "$count" && isEmptyObject(arg)) {
      accumulators.push({ kind: "count", times: 1 });
    } else if ((ops[0] === "$sum" || ops[0] === "$avg") && topLevelPath(arg) !== null) {
      accumulators.push({ kind: ops[0] === "$sum" ? "sum" : "avg", field: topLevelPath(arg)! });
    } else return null;
    names.push(name);
  }
  const n = accumulators.length;
  const fields = [
    ...(idField === null ? [] : [idField]),
    ...accumulators.flatMap((acc) => acc.kind === "count" ? [] : [acc.field]),
  ];
  /** The output documents of the groups. */
  const output = (groups: Groups): Doc[] => {
    const out: Doc[] = [];
    // The map's own keys, as the engine's: a key of -0 reads as 0 there.
    for (const [key, group] of groups.byKey) {
      const doc: Doc = { _id: key };
      for (let i = 0; i < n; i++) {
        const acc = accumulators[i];
        doc[names[i]] = acc.kind === "count"
          ? group.size * acc.times
          : acc.kind === "sum"
          ? group.sums[i]
          : group.counts[i] === 0
          ? null
          : group.sums[i] / group.counts[i];
      }
      out.push(doc);
    }
    return out;
  };
  return {
    fields,
    run(docs, { test, timeoutMs }) {
      const deadline = timeoutMs > 0 ? performance.now() + timeoutMs : Infinity;
      const groups = new Groups(n);
      let seen = 0;
      for (const doc of docs) {
        if ((++seen & 63) === 0 && performance.now() > deadline) {
          throw new QueryTimeoutError(`aggregation exceeded ${timeoutMs} ms`);
        }
        if (test && !test(doc)) continue;
        const key = idField === null
          ? null
          : (Object.hasOwn(doc, idField) ? doc[idField] : undefined) ?? null;
        if (isContentKey(key)) return null;
        const group = groups.of(key);
        group.size++;
        for (let i = 0; i < n; i++) {
          const acc = accumulators[i];
          if (acc.kind === "count") continue;
          const value = Object.hasOwn(doc, acc.field) ? doc[acc.field] : undefined;
          if (isNumber(value)) {
            group.sums[i] += value;
            group.counts[i]++;
          } else if (isBsonNumber(value)) return null; // the engine's sums read those
        }
      }
      return output(groups);
    },
    runColumns(rows, values, conditions, timeout) {
      // Per accumulator, the column of its field (null for a count).
      const columns: Array<unknown[] | null> = [];
      let next = idField === null ? 0 : 1;
      for (const acc of accumulators) columns.push(acc.kind === "count" ? null : values[next++]);
      const groups = new Groups(n);
      const grouped = groupRows(groups, {
        rows,
        keys: idField === null ? null : values[0],
        columns,
        tests: conditions.map(([, test]) => test),
        tested: conditions.map(([column]) => column),
        timeout,
      });
      return grouped ? output(groups) : null;
    },
  };
}

/**
 * Adds the rows of columns that pass every test to their groups (see PlainGroup.runColumns);
 * false when a key is one the engine compares by content. One function of plain arguments,
 * compiled once for every plain group.
 */
function groupRows(groups: Groups, input: {
  rows: number;
  /** The key of each row; null: one group (`_id: null`). */
  keys: unknown[] | null;
  /** Per accumulator, the values it adds up; null for a count. */
  columns: Array<unknown[] | null>;
  tests: Test[];
  /** The column each test reads. */
  tested: unknown[][];
  timeout: Timeout | null;
}): boolean {
  const { rows, keys, columns, tests, tested, timeout } = input;
  const deadline = timeout?.deadline ?? Infinity;
  const width = columns.length;
  let lastKey: unknown = undefined;
  let group: Group | undefined = undefined;
  rows: for (let row = 0; row < rows; row++) {
    if ((row & 1023) === 1023 && performance.now() > deadline) {
      throw new QueryTimeoutError(`aggregation exceeded ${timeout!.ms} ms`);
    }
    for (let c = 0; c < tests.length; c++) if (!tests[c](tested[c][row])) continue rows;
    const key = keys === null ? null : keys[row] ?? null;
    // `===` holds only for keys the map takes as one (NaN never is; -0 and 0 are one).
    if (group === undefined || key !== lastKey) {
      if (key !== null && (typeof key === "object" || typeof key === "function")) return false;
      group = groups.of(key);
      lastKey = key;
    }
    group.size++;
    for (let i = 0; i < width; i++) {
      const column = columns[i];
      if (column === null) continue;
      const value = column[row];
      if (typeof value === "number") {
        group.sums[i] += value;
        group.counts[i]++;
      } else if (isBsonNumber(value)) return false;
    }
  }
  return true;
}

function isEmptyObject(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    Object.keys(value).length === 0;
}

/** Operators that read fields not named by a `"$path"` string (or run code). */
const OPAQUE = new Set(["$getField", "$setField", "$unsetField", "$function", "$accumulator"]);

/**
 * The top-level fields a `$group` stage (coming first after the leading `$match`) reads:
 * every `"$field.path"` string in it. Its input documents then need to carry those fields
 * only, so only they are copied. Null (copy whole documents) when the stage is anything
 * else or refers to documents otherwise: a `$$` variable (`$$ROOT`, `$$CURRENT`, `$let`'s)
 * or an operator naming fields by plain strings.
 */
export function groupInputFields(stage: Doc): string[] | null {
  const keys = Object.keys(stage);
  if (keys.length !== 1 || keys[0] !== "$group") return null;
  const fields = new Set<string>();
  let opaque = false;
  const visit = (value: unknown, depth: number): void => {
    if (opaque) return;
    if (depth > 32) {
      opaque = true;
      return;
    }
    if (typeof value === "string") {
      if (value.startsWith("$$")) opaque = true;
      else if (value.startsWith("$") && value.length > 1) fields.add(value.slice(1).split(".")[0]);
      return;
    }
    if (Array.isArray(value)) {
      for (const v of value) visit(v, depth + 1);
      return;
    }
    if (value !== null && typeof value === "object") {
      if (Object.getPrototypeOf(value) !== Object.prototype) return;
      for (const [k, v] of Object.entries(value)) {
        if (OPAQUE.has(k)) opaque = true;
        visit(v, depth + 1);
      }
    }
  };
  visit(stage.$group, 0);
  return opaque ? null : [...fields];
}

function isMatchOnly(stage: Doc): boolean {
  const keys = Object.keys(stage);
  return keys.length === 1 && keys[0] === "$match" && stage.$match !== null &&
    typeof stage.$match === "object";
}

function merge(source: AggregateSource, spec: string | MergeSpec, results: Doc[]): void {
  const s: MergeSpec = typeof spec === "string" ? { into: spec } : spec;
  const on = s.on ?? "_id";
  if (on !== "_id" && !(Array.isArray(on) && on.length === 1 && on[0] === "_id")) {
    throw new Error('$merge: only `on: "_id"` is supported by the embedded store');
  }
  const whenMatched = s.whenMatched ?? "merge";
  const whenNotMatched = s.whenNotMatched ?? "insert";
  if (typeof whenMatched !== "string") {
    throw new Error("$merge: pipeline `whenMatched` is not supported by the embedded store");
  }
  const target = source.sibling(typeof s.into === "string" ? s.into : s.into.coll);
  const changes = new Map<string, Change>();
  for (const result of results) {
    const doc = result._id === undefined
      ? { _id: new ObjectId(), ...cloneValue(result) }
      : cloneValue(result);
    const id = valueKey(doc._id);
    const before = changes.get(id)?.after ?? target.byId(id);
    const original = changes.get(id)?.before ?? target.byId(id);
    if (!before) {
      if (whenNotMatched === "discard") continue;
      if (whenNotMatched === "fail") throw new Error("$merge: no matching document");
      changes.set(id, { id, after: doc });
      continue;
    }
    switch (whenMatched) {
      case "replace":
        changes.set(id, { id, before: original, after: doc });
        break;
      case "merge":
        changes.set(id, { id, before: original, after: { ...before, ...doc } });
        break;
      case "keepExisting":
        break;
      case "fail":
        throw new DuplicateKeyError(["_id"], `$merge: document ${id} already exists`);
      default:
        throw new Error(`$merge: unknown whenMatched '${whenMatched}'`);
    }
  }
  target.mergeChanges([...changes.values()]);
}
