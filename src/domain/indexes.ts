/**
 * @module
 * A resource's `mongo_indexes`, read as Eve reads them and checked before the service starts:
 * each entry names an index and gives its keys, alone or with its options, which go to
 * MongoDB as given (Eve passes them to `create_index`).
 *
 * ```json
 * {
 *   "email": [["email", 1]],
 *   "session_ttl": [[["seen", 1]], { "expireAfterSeconds": 3600 }],
 *   "loc": [["loc", "2dsphere"]]
 * }
 * ```
 *
 * A problem (an unknown option, a key MongoDB cannot index by, a TTL on several fields, a
 * second text index) is listed with the resource's other problems.
 */
import { isPlainObject } from "../util/plain.ts";
import { closest } from "../settings/check.ts";

/** How an index orders or reads one key. */
export type IndexKind = 1 | -1 | "2d" | "2dsphere" | "text" | "hashed";

/** One declared index. */
export interface IndexDeclaration {
  name: string;
  keys: Record<string, IndexKind>;
  /** The options as given (see {@link INDEX_OPTIONS}). */
  options: Record<string, unknown>;
}

/** The index options MongoDB's `createIndexes` takes, with the type each must have. */
const INDEX_OPTIONS: Readonly<Record<string, "boolean" | "number" | "string" | "object">> = {
  unique: "boolean",
  sparse: "boolean",
  expireAfterSeconds: "number",
  partialFilterExpression: "object",
  collation: "object",
  hidden: "boolean",
  background: "boolean",
  weights: "object",
  default_language: "string",
  language_override: "string",
  textIndexVersion: "number",
  "2dsphereIndexVersion": "number",
  bits: "number",
  min: "number",
  max: "number",
  wildcardProjection: "object",
  storageEngine: "object",
};

/** Whether a value has each type of {@link INDEX_OPTIONS}. */
const OF_TYPE: Readonly<Record<string, (value: unknown) => boolean>> = {
  boolean: (value) => typeof value === "boolean",
  number: (value) => typeof value === "number",
  string: (value) => typeof value === "string",
  object: isPlainObject,
};

const KINDS: ReadonlySet<unknown> = new Set([1, -1, "2d", "2dsphere", "text", "hashed"]);

/**
 * The indexes `raw` (a resource's `mongo_indexes`) declares; each problem is pushed onto
 * `problems`, prefixed with `path` (`DOMAIN.people.mongo_indexes`).
 */
export function readIndexes(raw: unknown, path: string, problems: string[]): IndexDeclaration[] {
  if (raw === undefined || raw === null) return [];
  if (!isPlainObject(raw)) {
    problems.push(`${path}: must be an object of index names`);
    return [];
  }
  const out: IndexDeclaration[] = [];
  for (const [name, spec] of Object.entries(raw)) {
    const at = `${path}.${name}`;
    // `[[field, kind], ...]`, or `[[[field, kind], ...], {options}]`.
    const withOptions = Array.isArray(spec) && spec.length === 2 && Array.isArray(spec[0]) &&
      Array.isArray(spec[0][0]) && isPlainObject(spec[1]);
    const pairs: unknown = withOptions ? (spec as unknown[])[0] : spec;
    const options = withOptions ? (spec as [unknown, Record<string, unknown>])[1] : {};
    if (!Array.isArray(pairs) || pairs.length === 0) {
      problems.push(
        `${at}: must be a list of [field, kind] pairs, or that list and an object of options`,
      );
      continue;
    }
    const keys: Record<string, IndexKind> = {};
    let valid = true;
    for (const pair of pairs) {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string") {
        problems.push(`${at}: ${JSON.stringify(pair)} is not a [field, kind] pair`);
        valid = false;
      } else if (pair[0] === "" || (pair[0].startsWith("$") && pair[0] !== "$**")) {
        problems.push(`${at}: "${pair[0]}" is not a field name`);
        valid = false;
      } else if (!KINDS.has(pair[1])) {
        problems.push(
          `${at}: the key "${pair[0]}" has the kind ${JSON.stringify(pair[1])} ` +
            `(1, -1, "2d", "2dsphere", "text" or "hashed")`,
        );
        valid = false;
      } else if (Object.hasOwn(keys, pair[0])) {
        problems.push(`${at}: the key "${pair[0]}" is given twice`);
        valid = false;
      } else keys[pair[0]] = pair[1] as IndexKind;
    }
    for (const [option, value] of Object.entries(options)) {
      const type = Object.hasOwn(INDEX_OPTIONS, option) ? INDEX_OPTIONS[option] : undefined;
      if (!type) {
        problems.push(
          `${at}: unknown index option "${option}" (did you mean ${
            closest(option, Object.keys(INDEX_OPTIONS))
          }?)`,
        );
        valid = false;
      } else if (!OF_TYPE[type](value)) {
        problems.push(`${at}: the option "${option}" must be a ${type}`);
        valid = false;
      }
    }
    const ttl = options.expireAfterSeconds;
    if (typeof ttl === "number") {
      if (!Number.isInteger(ttl) || ttl < 0) {
        problems.push(`${at}: expireAfterSeconds must be a whole number of 0 or more`);
        valid = false;
      } else if (Object.keys(keys).length !== 1 || typeof Object.values(keys)[0] !== "number") {
        problems.push(
          `${at}: a TTL index (expireAfterSeconds) has one ascending or descending key`,
        );
        valid = false;
      }
    }
    if (valid) out.push({ name, keys, options });
  }
  const text = out.filter((index) => Object.values(index.keys).includes("text"));
  if (text.length > 1) {
    problems.push(
      `${path}: a collection has at most one text index (${text.map((i) => i.name).join(", ")})`,
    );
  }
  return out;
}
