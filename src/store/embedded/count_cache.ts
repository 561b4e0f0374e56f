/**
 * Counts of the documents a filter matches, and results of aggregations, remembered per image
 * of a collection: a page's total (`_meta.total`, `X-Total-Count`) that no index can give
 * tests every document of the collection, an aggregation endpoint's pipeline reads them all,
 * and the next request of the same query, while nothing was written, would find the same. A
 * collection forgets them whenever its documents change (see `CollectionState.apply` and
 * `remove`), so what is remembered is never older than the documents read.
 *
 * Only filters and pipelines of plain data are remembered: one running code (`$where`,
 * `$function`, `$accumulator`), a random sample, a text or geographic search, a filter's
 * `$expr` (which can read the clock), a pipeline reading another collection or the clock
 * (`$lookup`, `$unionWith`, `$$NOW`...) or writing (`$out`, `$merge`) is run every time.
 * Bounded: {@link MAX_COUNTS} counts and {@link MAX_RESULTS} results per collection, keys of
 * at most {@link MAX_KEY} characters, results of at most {@link MAX_RESULT_VALUES} values.
 *
 * A count that tested every document in natural order also remembers the documents it found
 * (references to the store's own, at most {@link MAX_MATCH_LIST} a filter and
 * {@link MAX_MATCHED} a collection): a page of the same filter in natural order is then a
 * slice of that list, however deep, where it would test documents from the first one on.
 */
import { canonicalEjson, ObjectId } from "../../doc/bson.ts";
import type { Doc, Filter } from "../store.ts";

/** Most counts a collection remembers (then it starts over). */
export const MAX_COUNTS = 256;
/** The longest filter text remembered. */
export const MAX_KEY = 4096;
/** How deep a remembered filter may be. */
const MAX_DEPTH = 32;

/** Operators whose result does not follow from the documents alone, or is costly to key. */
const COUNTED_EVERY_TIME = new Set([
  "$where",
  "$function",
  "$accumulator",
  "$expr",
  "$rand",
  "$sampleRate",
  "$text",
  "$near",
  "$nearSphere",
  "$geoNear",
]);

/**
 * The key of `filter`'s count (its canonical Extended JSON: equal for filters matching the
 * same documents by the same values, types included); undefined when it is not remembered.
 */
export function countKey(filter: Filter): string | undefined {
  return keyOf(filter, FILTER_RULES);
}

/**
 * Stages and operators whose result does not follow from the collection's documents alone:
 * other collections read ($lookup, $graphLookup, $unionWith), writes ($out, $merge), samples,
 * code, and the server's own state. (`$expr` is an expression like any other in a pipeline.)
 */
const RUN_EVERY_TIME = new Set([
  ...[...COUNTED_EVERY_TIME].filter((name) => name !== "$expr"),
  "$lookup",
  "$graphLookup",
  "$unionWith",
  "$out",
  "$merge",
  "$sample",
  "$currentOp",
  "$collStats",
  "$indexStats",
  "$listSessions",
  "$listLocalSessions",
  "$planCacheStats",
  "$documents",
]);

/**
 * The key of `pipeline`'s result on one image of a collection (its canonical Extended JSON),
 * or undefined when the result is not remembered: a stage or operator of
 * {@link RUN_EVERY_TIME}, a clock variable (`$$NOW`...), code, or a text over
 * {@link MAX_KEY} characters.
 */
export function pipelineKey(pipeline: unknown[]): string | undefined {
  return keyOf(pipeline, PIPELINE_RULES);
}

/** What a remembered filter or pipeline may not hold. */
interface Rules {
  /** Operators and stages (keys). */
  refused: ReadonlySet<string>;
  /** String values (variables), when some are refused. */
  strings?: RegExp;
}

const FILTER_RULES: Rules = { refused: COUNTED_EVERY_TIME };
/** A pipeline may also not name a variable holding the time or the server's state. */
const PIPELINE_RULES: Rules = {
  refused: RUN_EVERY_TIME,
  strings: /^\$\$(NOW|CLUSTER_TIME|USER_ROLES|SEARCH_META)\b/,
};

function keyOf(value: unknown, rules: Rules): string | undefined {
  if (!plainData(value, 0, rules)) return undefined;
  const key = canonicalEjson(value);
  return key.length > MAX_KEY ? undefined : key;
}

function plainData(value: unknown, depth: number, rules: Rules): boolean {
  switch (typeof value) {
    case "string":
      return rules.strings === undefined || !rules.strings.test(value);
    case "function":
    case "symbol":
    case "bigint":
      return false;
    case "object":
      if (value === null) return true;
      break;
    default:
      return true;
  }
  if (depth > MAX_DEPTH) return false;
  if (value instanceof Date || value instanceof ObjectId || value instanceof RegExp) return true;
  const bsonType = (value as { _bsontype?: unknown })._bsontype;
  if (bsonType !== undefined) return bsonType !== "Code";
  if (Array.isArray(value)) {
    for (const member of value) if (!plainData(member, depth + 1, rules)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(value)) {
    if (rules.refused.has(key)) return false;
    if (!plainData((value as Record<string, unknown>)[key], depth + 1, rules)) return false;
  }
  return true;
}

/** Most values (leaves) of an aggregation's result that is remembered. */
export const MAX_RESULT_VALUES = 20_000;

/** Whether `docs` hold at most {@link MAX_RESULT_VALUES} values, nested ones included. */
export function smallResult(docs: unknown[]): boolean {
  let left = MAX_RESULT_VALUES;
  const visit = (value: unknown, depth: number): boolean => {
    if (--left < 0 || depth > MAX_DEPTH) return false;
    if (value === null || typeof value !== "object") return true;
    if (value instanceof Date || (value as { _bsontype?: unknown })._bsontype !== undefined) {
      return true;
    }
    if (Array.isArray(value)) return value.every((v) => visit(v, depth + 1));
    for (const key of Object.keys(value)) {
      if (!visit((value as Record<string, unknown>)[key], depth + 1)) return false;
    }
    return true;
  };
  return docs.every((doc) => visit(doc, 0));
}

/** Most documents in one remembered list of a filter's matches. */
export const MAX_MATCH_LIST = 100_000;
/** Most documents a collection's remembered lists hold together (then it starts over). */
export const MAX_MATCHED = 1_000_000;

/** The counts (and aggregation results, and lists of matches) of one image of a collection. */
export class CountCache {
  readonly #counts = new Map<string, number>();
  readonly #results = new Map<string, Doc[]>();
  readonly #matches = new Map<string, Doc[]>();
  #matched = 0;

  get(key: string): number | undefined {
    return this.#counts.get(key);
  }

  set(key: string, count: number): void {
    if (this.#counts.size >= MAX_COUNTS) this.#counts.clear();
    this.#counts.set(key, count);
  }

  /** A remembered aggregation's result (shared: hand out copies). */
  result(key: string): Doc[] | undefined {
    return this.#results.get(key);
  }

  /** Remembers an aggregation's result (a copy no one else holds). */
  setResult(key: string, docs: Doc[]): void {
    if (this.#results.size >= MAX_RESULTS) this.#results.clear();
    this.#results.set(key, docs);
  }

  /** Whether any list of matches is remembered (before working out a filter's key). */
  get listsMatches(): boolean {
    return this.#matches.size > 0;
  }

  /**
   * The stored documents the filter of `key` matches, in natural order (the store's own
   * objects, which it never changes: copy before handing out); undefined when not remembered.
   */
  matches(key: string): Doc[] | undefined {
    return this.#matches.get(key);
  }

  /**
   * Remembers the documents a filter matches, in natural order (a list no one else holds);
   * not when longer than {@link MAX_MATCH_LIST}. All lists are forgotten when they would hold
   * more than {@link MAX_MATCHED} together, or number more than {@link MAX_COUNTS}.
   */
  setMatches(key: string, docs: Doc[]): void {
    if (docs.length > MAX_MATCH_LIST) return;
    if (this.#matched + docs.length > MAX_MATCHED || this.#matches.size >= MAX_COUNTS) {
      this.#matches.clear();
      this.#matched = 0;
    }
    this.#matches.set(key, docs);
    this.#matched += docs.length;
  }
}

/** Most aggregation results a collection remembers (then it starts over). */
export const MAX_RESULTS = 32;
