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
import { valueKey } from "./codec.ts";
import { arrayMembersAsEqualities, compileFilter } from "../../doc/match/engine.ts";
import type { Change } from "./indexes.ts";
import { DuplicateKeyError, QueryTimeoutError } from "../store.ts";

/** The collection operations aggregation needs. */
export interface AggregateSource {
  readonly name: string;
  snapshot(): Doc[];
  sibling(name: string): AggregateTarget;
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

/** Runs `pipeline` on copies of the stored documents. */
export function runAggregate(source: AggregateSource, pipeline: Doc[]): Doc[] {
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
  const test = matches.length === 0 ? null : compileFilter(
    matches.length === 1 ? matches[0] : { $and: matches },
    source.options,
  );
  const results = new Aggregator(rest, source.options).run<Doc>(
    inputOf(source.snapshot(), {
      test,
      timeoutMs: source.timeoutMs ?? 0,
      fields: rest.length > 0 ? groupInputFields(rest[0]) : null,
    }),
  );
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
  },
): Generator<Doc> {
  const { test, timeoutMs, fields } = options;
  const deadline = timeoutMs > 0 ? performance.now() + timeoutMs : Infinity;
  let seen = 0;
  for (const doc of docs) {
    if ((++seen & 63) === 0 && performance.now() > deadline) {
      throw new QueryTimeoutError(`aggregation exceeded ${timeoutMs} ms`);
    }
    if (test && !test(doc)) continue;
    if (fields === null) {
      yield cloneValue(doc);
      continue;
    }
    const copy: Doc = {};
    for (const f of fields) if (Object.hasOwn(doc, f)) copy[f] = cloneValue(doc[f]);
    yield copy;
  }
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
