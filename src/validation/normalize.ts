/**
 * Schema-guided document walks: coercion + defaults, read-only checks, dotted-key
 * expansion and merging for PATCH, and collection of the values needing async checks.
 */
import type { Doc } from "../store/store.ts";
import type { DictNode, FieldNode } from "./compiler.ts";
import { addIssue } from "./issues.ts";
import { forbiddenSegment, getOwn, setOwn } from "../domain/keys.ts";
import { type CoerceContext, coerceTo } from "../domain/field-types.ts";
import { isDbRefShape } from "./typecheck.ts";
import { isPlainObject } from "../util/plain.ts";
import type { Issues } from "./types.ts";

/** Deepest nesting accepted in a submitted document. */
export const MAX_DEPTH = 64;

/** A value whose field has unique / data_relation / custom rules. */
export interface PendingCheck {
  path: string[];
  node: FieldNode;
  value: unknown;
}

export interface NormalizeEnv {
  /** How values are read for their types (DATE_FORMAT). */
  coerce: CoerceContext;
  applyDefaults: boolean;
  /** replace: stored document, whose read-only values survive a PUT that omits them. */
  original?: Doc;
  checks: PendingCheck[];
}

/** A stable identity string for equality of values (ObjectId, Date, Decimal128 aware). */
export function canon(v: unknown): string {
  return JSON.stringify(v, function (k, x) {
    const raw = k === "" ? v : (this as Record<string, unknown>)[k];
    if (raw instanceof Date) return `$date:${raw.getTime()}`;
    if (raw instanceof Uint8Array) return `$bytes:${raw.length}`;
    return x;
  }) ?? "undefined";
}

/** Coerces the value of `node`'s field and its sub-fields, applying defaults inside dicts. */
export function normField(v: unknown, node: FieldNode, path: string[], env: NormalizeEnv): unknown {
  v = coerceTo(v, node.coerceTypes, env.coerce);
  if (v === null || v === undefined) return v;
  v = normChildren(v, node, path, env);
  // Checked with its sub-fields coerced (a versioned reference's `_id` is an ObjectId).
  if (node.unique || node.relation || node.custom.length) env.checks.push({ path, node, value: v });
  return v;
}

function normChildren(v: unknown, node: FieldNode, path: string[], env: NormalizeEnv): unknown {
  if (isPlainObject(v)) {
    if (node.dict) return normDict(v, node.dict, path, env);
    if (node.values) {
      const out: Doc = {};
      for (const [k, x] of Object.entries(v)) out[k] = normField(x, node.values, [...path, k], env);
      return out;
    }
  } else if (Array.isArray(v)) {
    if (node.member) return v.map((x, i) => normField(x, node.member!, [...path, String(i)], env));
    if (node.items) {
      return v.map((x, i) =>
        node.items![i] ? normField(x, node.items![i], [...path, String(i)], env) : x
      );
    }
  }
  return v;
}

/** Normalizes one dict level: coerces known fields and fills in defaults (per env). */
export function normDict(obj: Doc, dict: DictNode, path: string[], env: NormalizeEnv): Doc {
  const out: Doc = {};
  for (const [k, v] of Object.entries(obj)) {
    const node = dict.fields.get(k) ?? (typeof dict.unknown === "object" ? dict.unknown : null);
    out[k] = node ? normField(v, node, [...path, k], env) : v;
  }
  for (const [name, node] of dict.fields) {
    const cur = out[name];
    if (cur !== undefined && !(cur === null && !node.nullable)) continue;
    if (env.original && node.readonly && path.length === 0 && name in env.original) {
      if (cur === undefined) out[name] = env.original[name];
    } else if (env.applyDefaults && node.default) {
      out[name] = normField(structuredClone(node.default.value), node, [...path, name], env);
    }
  }
  return out;
}

/**
 * Defaults for fields missing from `obj`, nested ones keyed by dotted path. Read-only fields
 * are left out: only the service writes them.
 */
export function missingDefaults(obj: Doc, dict: DictNode, prefix: string, env: NormalizeEnv): Doc {
  const out: Doc = {};
  for (const [name, node] of dict.fields) {
    const key = prefix + name;
    const v = obj[name];
    if (node.readonly) continue;
    if (v === undefined) {
      if (node.default) {
        out[key] = normField(structuredClone(node.default.value), node, [name], env);
      }
    } else if (isPlainObject(v) && node.dict) {
      Object.assign(out, missingDefaults(v, node.dict, `${key}.`, env));
    }
  }
  return out;
}

/**
 * Issues for read-only fields the client sent. A value equal to the stored one is accepted,
 * so that a client may PUT back what it read.
 */
export function readonlyIssues(
  input: Doc,
  dict: DictNode,
  original: unknown,
  path: string[],
  env: NormalizeEnv,
  issues: Issues,
): void {
  for (const [k, v] of Object.entries(input)) {
    const node = dict.fields.get(k);
    if (!node) continue;
    const stored = isPlainObject(original) ? original[k] : undefined;
    if (node.readonly) {
      const same = stored !== undefined &&
        canon(coerceTo(v, node.coerceTypes, env.coerce)) === canon(stored);
      if (!same) addIssue(issues, [...path, k], "field is read-only");
    } else if (node.dict && isPlainObject(v)) {
      readonlyIssues(v, node.dict, stored, [...path, k], env, issues);
    }
  }
}

/**
 * Issues for field names that could act as MongoDB operators or paths, at any depth.
 * Returns true when a name is hostile (`__proto__`, `constructor`, `prototype` as a path
 * segment, the BSON type tag `_bsontype`, or a dotted key deeper than MAX_DEPTH): the caller
 * then stops before any other step walks the document.
 */
export function keyIssues(v: unknown, path: string[], allowDots: boolean, issues: Issues): boolean {
  if (path.length > MAX_DEPTH) {
    addIssue(issues, path, "document nested too deeply");
    return false;
  }
  let hostile = false;
  if (Array.isArray(v)) {
    v.forEach((x, i) => hostile = keyIssues(x, [...path, String(i)], false, issues) || hostile);
  } else if (isPlainObject(v)) {
    // A DBRef's `$ref`/`$id`/`$db` are the one place `$` names are data (type `dbref`).
    if (isDbRefShape(v)) return false;
    for (const [k, x] of Object.entries(v)) {
      if (forbiddenSegment(k) !== undefined) {
        addIssue(issues, [...path, k], "field name not allowed");
        hostile = true;
      } else if (k === "" || k.startsWith("$") || (!allowDots && k.includes("."))) {
        addIssue(issues, [...path, k], "invalid field name");
      } else if (allowDots && k.split(".").some((seg) => seg === "" || seg.startsWith("$"))) {
        // A PATCH dotted key: the issue sits at its path, as the fields it touches.
        addIssue(issues, [...path, ...k.split(".")], "invalid field name");
      } else if (allowDots && path.length + k.split(".").length > MAX_DEPTH) {
        addIssue(issues, [...path, k], "document nested too deeply");
        hostile = true;
      } else hostile = keyIssues(x, [...path, k], false, issues) || hostile;
    }
  }
  return hostile;
}

/** Turns `{"a.b": 1, c: {d: 2}}` into nested form; conflicting keys become issues. */
export function expandDotted(updates: Doc, issues: Issues): Doc {
  const out: Doc = {};
  for (const [key, value] of Object.entries(updates)) {
    const segs = key.split(".");
    let cur = out;
    let ok = true;
    for (const seg of segs.slice(0, -1)) {
      if (!Object.hasOwn(cur, seg)) setOwn(cur, seg, {});
      const next = cur[seg];
      if (!isPlainObject(next)) {
        ok = false;
        break;
      }
      cur = next;
    }
    const last = segs[segs.length - 1];
    const prev = getOwn(cur, last);
    if (!ok || (prev !== undefined && !(isPlainObject(prev) && isPlainObject(value)))) {
      addIssue(issues, segs, "conflicting updates");
      continue;
    }
    setOwn(cur, last, isPlainObject(prev) ? deepMerge(prev, value as Doc) : value);
  }
  return out;
}

/** `base` with `patch` merged in: plain objects recursively, everything else replaced. */
export function deepMerge(base: Doc, patch: Doc): Doc {
  const out: Doc = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    const prev = getOwn(out, k);
    setOwn(out, k, isPlainObject(v) && isPlainObject(prev) ? deepMerge(prev, v) : v);
  }
  return out;
}

/** Sets `value` at `path` in a copy of `doc`, copying the plain objects along the way. */
export function setPath(doc: Doc, path: string[], value: unknown): Doc {
  const out: Doc = { ...doc };
  const [head, ...rest] = path;
  const prev = getOwn(out, head);
  setOwn(
    out,
    head,
    rest.length === 0 ? value : setPath(isPlainObject(prev) ? prev : {}, rest, value),
  );
  return out;
}

/** The value at `path`, or undefined. */
export function getPath(doc: unknown, path: string[]): unknown {
  let cur = doc;
  for (const seg of path) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = getOwn(cur, seg);
  }
  return cur;
}

/**
 * The document paths a PATCH writes: leaves of nested dicts when they merge, otherwise the
 * keys as given.
 */
export function touchedPaths(updates: Doc, mergeNested: boolean): string[][] {
  const out: string[][] = [];
  const walk = (v: unknown, path: string[]) => {
    if (mergeNested && isPlainObject(v) && Object.keys(v).length > 0) {
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    } else out.push(path);
  };
  for (const [k, v] of Object.entries(updates)) walk(v, k.split("."));
  return out;
}
