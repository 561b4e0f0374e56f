/**
 * The operator names of a pipeline that the query engine does not run, found before the
 * pipeline ever runs: the engine meets an operator only when it evaluates it, so a typo in a
 * `$project` of an empty collection went unnoticed until documents arrived.
 *
 * Every `$` key is an operator name (a stage, an expression, accumulator, query, projection
 * or window operator), but for the keys of data: `$options` beside `$regex`, the `$ref`, `$id`
 * and `$db` of a DBRef, a filter's `$comment`, and whatever `$literal` (or `$const`) holds.
 *
 * @example
 * ```ts
 * unknownOperators([{ $project: { x: { $sortArry: { input: "$a", sortBy: 1 } } } }]);
 * // [{ name: "$sortArry", at: "[0].$project.x", javascript: false }]
 * ```
 * @module
 */
import { isPlainObject } from "../../util/plain.ts";
import { ENGINE_OPERATORS } from "./engine.ts";

/**
 * `$` keys that hold data rather than name an operator, and `$comment`, a filter's note that
 * `$match` drops.
 */
const DATA_KEYS: ReadonlySet<string> = new Set(["$options", "$ref", "$id", "$db", "$comment"]);

/** Operators the engine knows that run server-side JavaScript, which it never runs. */
const JAVASCRIPT: ReadonlySet<string> = new Set(["$function", "$accumulator", "$where"]);

/**
 * Operators MongoDB runs that the engine does not: a pipeline naming one is valid, and runs
 * once the service runs on MongoDB.
 */
const MONGODB_ONLY: ReadonlySet<string> = new Set([
  // stages
  "$search",
  "$searchMeta",
  "$vectorSearch",
  "$rankFusion",
  "$scoreFusion",
  "$score",
  "$changeStream",
  "$changeStreamSplitLargeEvent",
  "$collStats",
  "$indexStats",
  "$currentOp",
  "$listSessions",
  "$listLocalSessions",
  "$listSearchIndexes",
  "$listSampledQueries",
  "$planCacheStats",
  "$queryStats",
  "$querySettings",
  "$shardedDataDistribution",
  "$listClusterCatalog",
  // expressions and query operators
  "$text",
  "$toUUID",
  "$hash",
  "$createObjectId",
  "$toArray",
  "$toObject",
  "$sigmoid",
  "$similarityCosine",
  "$similarityDotProduct",
  "$similarityEuclidean",
  "$toHashedIndexKey",
  "$serializeEJSON",
  "$deserializeEJSON",
  "$subtype",
]);

/** Whether `name` is an operator MongoDB runs that the engine does not. */
export function mongoOnly(name: string): boolean {
  return MONGODB_ONLY.has(name);
}

/** Operators whose argument is a value as it stands, never evaluated. */
const LITERALS: ReadonlySet<string> = new Set(["$literal", "$const"]);

/**
 * An operator name the engine does not run, where it stands (`[0].$project.x`), and whether
 * it is one that runs server-side JavaScript.
 */
export interface UnknownOperator {
  name: string;
  at: string;
  javascript: boolean;
}

/**
 * The deepest a pipeline is read: past MongoDB's own nesting limit for a document (100), a
 * pipeline is no use anyway, and the walk stays bounded whatever the settings hold.
 */
const MAX_DEPTH = 200;

/** The operator names under `node` (a pipeline, a stage, an expression) the engine lacks. */
export function unknownOperators(node: unknown): UnknownOperator[] {
  const found: UnknownOperator[] = [];
  const visit = (value: unknown, at: string, depth = 0) => {
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(value)) {
      value.forEach((member, i) => visit(member, `${at}[${i}]`, depth + 1));
      return;
    }
    if (!isPlainObject(value)) return;
    for (const [key, inner] of Object.entries(value)) {
      const here = `${at}.${key}`;
      if (key.startsWith("$")) {
        if (JAVASCRIPT.has(key)) found.push({ name: key, at, javascript: true });
        else if (!ENGINE_OPERATORS.has(key) && !DATA_KEYS.has(key)) {
          found.push({ name: key, at, javascript: false });
        }
        if (LITERALS.has(key)) continue;
      }
      visit(inner, here, depth + 1);
    }
  };
  visit(node, "");
  return found;
}
