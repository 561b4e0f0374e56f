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
import { coerced } from "./coercers.ts";
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
  /** Where a `coerce` function's failure is reported; absent: not reported. */
  issues?: Issues;
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

/**
 * One walk of a document: its environment and the path of the value being visited. The
 * path is a stack: each step pushes a key before it descends and pops it on its way back.
 */
export interface NormalizeWalk {
  env: NormalizeEnv;
  path: string[];
}

/**
 * Coerces the value of `node`'s field and its sub-fields, applying defaults inside dicts.
 * `walk.path` is the value's path.
 */
export function normField(v: unknown, node: FieldNode, walk: NormalizeWalk): unknown {
  const env = walk.env;
  if (node.coerce) v = namedCoerce(v, node, walk);
  v = coerceTo(v, node.coerceTypes, env.coerce);
  if (v === null || v === undefined) return v;
  v = normChildren(v, node, walk);
  // Checked with its sub-fields coerced (a versioned reference's `_id` is an ObjectId).
  if (node.unique || node.uniqueToUser || node.relation || node.custom.length) {
    env.checks.push({ path: [...walk.path], node, value: v });
  }
  return v;
}

/** The value through the field's `coerce` functions (see coercers.ts). */
function namedCoerce(v: unknown, node: FieldNode, walk: NormalizeWalk): unknown {
  let { value, problem } = coerced(v, node.coerce!);
  // A coercer may build objects from what the client sent (a JSON text parsed, say): their
  // names get the checks the document's own got, or the value stays as sent.
  if (value !== v && problem === undefined && !namesAllowed(value, walk.path)) {
    problem = NAMES_REFUSED;
    value = v;
  }
  const issues = walk.env.issues;
  if (problem !== undefined && issues && !(v === null && node.nullable)) {
    const field = walk.path[walk.path.length - 1] ?? "";
    addIssue(issues, walk.path, `field '${field}' cannot be coerced: ${problem}`);
  }
  return value;
}

const NAMES_REFUSED = "the value holds a field name a document may not have";

/** Whether a value made by a coercer or default setter holds only names a client may send. */
function namesAllowed(value: unknown, path: string[]): boolean {
  if (typeof value !== "object" || value === null) return true;
  const issues: Issues = {};
  keyIssues(value, [...path], { allowDots: false, issues });
  return Object.keys(issues).length === 0;
}

function normChildren(v: unknown, node: FieldNode, walk: NormalizeWalk): unknown {
  const path = walk.path;
  if (isPlainObject(v)) {
    if (node.dict) return normDict(v, node.dict, walk);
    if (node.values) {
      const out: Doc = {};
      for (const [k, x] of Object.entries(v)) {
        path.push(k);
        out[k] = normField(x, node.values, walk);
        path.pop();
      }
      return out;
    }
  } else if (Array.isArray(v)) {
    const member = node.member;
    if (member) {
      return v.map((x, i) => {
        path.push(String(i));
        const r = normField(x, member, walk);
        path.pop();
        return r;
      });
    }
    const items = node.items;
    if (items) {
      return v.map((x, i) => {
        if (!items[i]) return x;
        path.push(String(i));
        const r = normField(x, items[i], walk);
        path.pop();
        return r;
      });
    }
  }
  return v;
}

const fieldLists = new WeakMap<DictNode, Array<[string, FieldNode]>>();

/**
 * The fields of `dict` as a list, made on first use (a compiled dict never changes): walking
 * the Map itself makes an iterator and an entry array per field at every visit.
 */
function fieldList(dict: DictNode): Array<[string, FieldNode]> {
  let list = fieldLists.get(dict);
  if (list === undefined) fieldLists.set(dict, list = [...dict.fields]);
  return list;
}

/**
 * Normalizes one dict level: coerces known fields and fills in defaults (per env).
 * `walk.path` is the dict's path (empty for the document).
 */
export function normDict(obj: Doc, dict: DictNode, walk: NormalizeWalk): Doc {
  const { env, path } = walk;
  const out: Doc = {};
  const unknown = typeof dict.unknown === "object" ? dict.unknown : null;
  // Keys and a lookup, not `Object.entries`: no [key, value] array per member.
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    const node = dict.fields.get(k) ?? unknown;
    if (!node) {
      out[k] = v;
      continue;
    }
    path.push(k);
    out[k] = normField(v, node, walk);
    path.pop();
  }
  const fields = fieldList(dict);
  let setters: Array<[string, FieldNode]> | undefined;
  for (let i = 0; i < fields.length; i++) {
    const [name, node] = fields[i];
    const cur = out[name];
    if (cur !== undefined && !(cur === null && !node.nullable)) continue;
    if (env.original && node.readonly && path.length === 0 && name in env.original) {
      if (cur === undefined) out[name] = env.original[name];
    } else if (env.applyDefaults && node.default) {
      path.push(name);
      // Each document gets its own copy of an object default; a scalar is copied by value.
      const value = node.default.value;
      const fresh = typeof value === "object" && value !== null ? structuredClone(value) : value;
      out[name] = normField(fresh, node, walk);
      path.pop();
    } else if (env.applyDefaults && node.defaultSetter) (setters ??= []).push([name, node]);
  }
  // As in Cerberus: the setters after the plain defaults, each seeing the level so far.
  if (setters) { for (const [name, node] of setters) setDefault(out, name, { node, walk }); }
  return out;
}

/** A missing field's value from its `default_setter` (see DefaultSetter). */
function setDefault(
  level: Doc,
  name: string,
  { node, walk }: { node: FieldNode; walk: NormalizeWalk },
): void {
  const { fn } = node.defaultSetter!;
  walk.path.push(name);
  try {
    const value = fn(level);
    if (value instanceof Promise) throw new Error("the setter returned a promise");
    if (!namesAllowed(value, walk.path)) throw new Error(NAMES_REFUSED);
    if (value !== undefined) level[name] = normField(value, node, walk);
  } catch (error) {
    const issues = walk.env.issues;
    const message = error instanceof Error ? error.message : String(error);
    if (issues) {
      addIssue(issues, walk.path, `default value for '${name}' cannot be set: ${message}`);
    }
  } finally {
    walk.path.pop();
  }
}

/**
 * Defaults for fields missing from `obj`, nested ones keyed by dotted path (`prefix` goes
 * before the keys). Read-only fields are left out: only the service writes them.
 */
export function missingDefaults(
  obj: Doc,
  dict: DictNode,
  { env, prefix = "" }: { env: NormalizeEnv; prefix?: string },
): Doc {
  const walk: DefaultsWalk = { env, path: [], prefix, out: {} };
  addDefaults(obj, dict, walk);
  return walk.out;
}

/**
 * One {@link missingDefaults} walk. `prefix` goes before the keys of the dict level being
 * walked (its dotted path and a dot below the top); like `path`, it moves down while the walk
 * descends and back on its way up. `path` stays empty between defaults: a default is checked
 * at its field name alone.
 */
interface DefaultsWalk extends NormalizeWalk {
  prefix: string;
  /** The defaults found so far, by dotted path. */
  out: Doc;
}

function addDefaults(obj: Doc, dict: DictNode, walk: DefaultsWalk): void {
  const { prefix, path, out } = walk;
  const fields = fieldList(dict);
  for (let i = 0; i < fields.length; i++) {
    const [name, node] = fields[i];
    const v = obj[name];
    if (node.readonly) continue;
    if (v === undefined) {
      if (node.default) {
        path.push(name);
        // Each document gets its own copy of an object default; a scalar is copied by value.
        const value = node.default.value;
        const fresh = typeof value === "object" && value !== null ? structuredClone(value) : value;
        out[prefix + name] = normField(fresh, node, walk);
        path.pop();
      } else if (node.defaultSetter) {
        // The setter sees the level as the PATCH sent it; one that throws sets nothing here
        // (the PATCH was validated already).
        const level: Doc = { ...obj };
        setDefault(level, name, { node, walk });
        if (level[name] !== undefined) out[prefix + name] = level[name];
      }
    } else if (isPlainObject(v) && node.dict) {
      walk.prefix = `${prefix}${name}.`;
      addDefaults(v, node.dict, walk);
      walk.prefix = prefix;
    }
  }
}

/** One {@link readonlyIssues} walk: a {@link NormalizeWalk} that also collects issues. */
export interface ReadonlyWalk extends NormalizeWalk {
  issues: Issues;
  /**
   * The stored counterpart of the dict level being walked (the stored document at the top);
   * like `path`, it moves down while the walk descends and back on its way up.
   */
  original: unknown;
}

/**
 * Issues for read-only fields the client sent. A value equal to the stored one is accepted,
 * so that a client may PUT back what it read. `walk.path` is the path of `input`.
 */
export function readonlyIssues(input: Doc, dict: DictNode, walk: ReadonlyWalk): void {
  // No read-only field at this level or below it: nothing to report (most schemas).
  if (!holdsReadonly(dict)) return;
  const { original, path } = walk;
  for (const k of Object.keys(input)) {
    const v = input[k];
    const node = dict.fields.get(k);
    if (!node) continue;
    const stored = isPlainObject(original) ? original[k] : undefined;
    if (node.readonly) {
      const same = stored !== undefined &&
        canon(coerceTo(v, node.coerceTypes, walk.env.coerce)) === canon(stored);
      if (!same) addIssue(walk.issues, [...path, k], "field is read-only");
    } else if (node.dict && isPlainObject(v)) {
      path.push(k);
      walk.original = stored;
      readonlyIssues(v, node.dict, walk);
      walk.original = original;
      path.pop();
    }
  }
}

const readonlyWithin = new WeakMap<DictNode, boolean>();

/**
 * Whether `dict` has a read-only field, at its level or in a dict below (the levels
 * {@link readonlyIssues} walks); worked out once per dict (a compiled dict never changes).
 */
function holdsReadonly(dict: DictNode): boolean {
  let held = readonlyWithin.get(dict);
  if (held === undefined) {
    held = false;
    for (const node of dict.fields.values()) {
      if (node.readonly || (node.dict !== undefined && holdsReadonly(node.dict))) held = true;
    }
    readonlyWithin.set(dict, held);
  }
  return held;
}

/** How {@link keyIssues} checks names, and where it reports. */
export interface KeyCheck {
  /** Dotted keys (a PATCH's) are accepted at the top level. */
  allowDots: boolean;
  issues: Issues;
}

/**
 * Issues for field names that could act as MongoDB operators or paths, at any depth.
 * Returns true when a name is hostile (`__proto__`, `constructor`, `prototype` as a path
 * segment, the BSON type tag `_bsontype`, or a dotted key deeper than MAX_DEPTH): the caller
 * then stops before any other step walks the document.
 */
export function keyIssues(v: unknown, path: string[], check: KeyCheck): boolean {
  const { allowDots, issues } = check;
  if (path.length > MAX_DEPTH) {
    addIssue(issues, path, "document nested too deeply");
    return false;
  }
  // Dotted keys are refused below the top level: one settings object serves all of them.
  const below: KeyCheck = allowDots ? { allowDots: false, issues } : check;
  let hostile = false;
  // A scalar has no names: it is only visited where it would be nested too deeply.
  const deeper = path.length + 1 > MAX_DEPTH;
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      if (deeper || (typeof x === "object" && x !== null)) {
        hostile = keyIssues(x, [...path, String(i)], below) || hostile;
      }
    });
  } else if (isPlainObject(v)) {
    // A DBRef's `$ref`/`$id`/`$db` are the one place `$` names are data (type `dbref`).
    if (isDbRefShape(v)) return false;
    for (const k of Object.keys(v)) {
      // A name without a dot is one segment: the dotted-key checks below cannot apply to it.
      const dotted = k.includes(".");
      if (forbiddenSegment(k) !== undefined) {
        addIssue(issues, [...path, k], "field name not allowed");
        hostile = true;
      } else if (k === "" || k.startsWith("$") || (!allowDots && dotted)) {
        addIssue(issues, [...path, k], "invalid field name");
      } else if (
        allowDots && dotted && k.split(".").some((seg) => seg === "" || seg.startsWith("$"))
      ) {
        // A PATCH dotted key: the issue sits at its path, as the fields it touches.
        addIssue(issues, [...path, ...k.split(".")], "invalid field name");
      } else if (allowDots && dotted && path.length + k.split(".").length > MAX_DEPTH) {
        addIssue(issues, [...path, k], "document nested too deeply");
        hostile = true;
      } else {
        const x = (v as Doc)[k];
        if (deeper || (typeof x === "object" && x !== null)) {
          hostile = keyIssues(x, [...path, k], below) || hostile;
        }
      }
    }
  }
  return hostile;
}

/**
 * Turns `{"a.b": 1, c: {d: 2}}` into nested form; conflicting keys become issues. A document
 * without a dotted key is returned as it is.
 */
export function expandDotted(updates: Doc, issues: Issues): Doc {
  // No dotted key (most bodies): the nested form is the document itself.
  const keys = Object.keys(updates);
  if (!keys.some((key) => key.includes("."))) return updates;
  const out: Doc = {};
  for (const key of keys) {
    const value = updates[key];
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
