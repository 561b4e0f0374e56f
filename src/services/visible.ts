/**
 * The service's own last word on what a document of a resource may show, whatever the store
 * did with the projection it was given: `hidden` fields are removed and, under an inclusive
 * default projection, every field outside the readable ones (key and meta fields stay). Each
 * read path runs the documents it got from the store through {@link showable} once, before
 * anything is added to them (embedding, media, links), so a store that ignores projections
 * leaks nothing.
 *
 * Cheap on the hot path: what to remove is compiled once per resource; a resource with
 * nothing hidden costs one lookup, and a well-behaved store's documents, which already lack
 * those fields, are only looked at, never copied. Top-level members are removed in place
 * (every read owns its documents' top level); nested values may be shared by the store, so
 * they are copied before anything below them is removed.
 */
import type { Doc } from "../store/store.ts";
import type { Resource } from "../domain/types.ts";
import type { Runtime } from "./runtime.ts";
import { isPlainObject } from "../util/plain.ts";
import { keyFieldsOf } from "./policy.ts";

/** Paths as a tree of segments; `true` marks a whole field. */
type PathTree = Map<string, PathTree | true>;

/** What to remove from a resource's documents. */
interface Plan {
  /** Under an inclusive projection: the only fields kept (key fields included). */
  keep?: PathTree;
  /** Fields always removed. */
  drop?: PathTree;
}

const plans = new WeakMap<Resource, Plan | null>();

/**
 * Removes from `docs` (changed in place at their top level, and returned) every field a read
 * of `resource` may not show.
 */
export function showable<T extends Doc[]>(rt: Runtime, resource: Resource, docs: T): T {
  let plan = plans.get(resource);
  if (plan === undefined) {
    plan = planOf(rt, resource);
    plans.set(resource, plan);
  }
  if (plan === null) return docs;
  for (const doc of docs) {
    if (plan.keep) keepTop(doc, plan.keep);
    if (plan.drop) dropTop(doc, plan.drop);
  }
  return docs;
}

function planOf(rt: Runtime, resource: Resource): Plan | null {
  const hidden = resource.hidden ?? [];
  const readable = resource.readable;
  if (!readable && hidden.length === 0) return null;
  const plan: Plan = {};
  if (readable) plan.keep = treeOf([...readable, ...keyFieldsOf(rt, resource)]);
  if (hidden.length > 0) plan.drop = treeOf(hidden);
  return plan;
}

/** A tree of dotted `paths`; a path covers everything below it. */
function treeOf(paths: readonly string[]): PathTree {
  const root: PathTree = new Map();
  for (const path of paths) {
    const segments = path.split(".");
    let node = root;
    for (let i = 0; i < segments.length; i++) {
      const at = node.get(segments[i]);
      if (at === true) break;
      if (i === segments.length - 1) {
        node.set(segments[i], true);
        break;
      }
      const next: PathTree = at ?? new Map();
      node.set(segments[i], next);
      node = next;
    }
  }
  return root;
}

/** Removes the `drop` fields from `doc` itself. */
function dropTop(doc: Doc, drop: PathTree): void {
  for (const [key, sub] of drop) {
    if (!Object.hasOwn(doc, key)) continue;
    if (sub === true) delete doc[key];
    else doc[key] = dropBelow(doc[key], sub);
  }
}

/** `value` without the `drop` fields (through arrays); `value` itself when none is there. */
function dropBelow(value: unknown, drop: PathTree): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = dropBelow(value[i], drop);
      if (next !== value[i]) (out ??= [...value])[i] = next;
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [key, sub] of drop) {
    if (!Object.hasOwn(value, key)) continue;
    out ??= { ...value };
    if (sub === true) delete out[key];
    else out[key] = dropBelow(value[key], sub);
  }
  return out ?? value;
}

/** Keeps only the `keep` fields of `doc` itself. */
function keepTop(doc: Doc, keep: PathTree): void {
  // for-in rather than a list of the keys (made per document): a key removed here is one
  // already reached. A kept field (most of them) needs no more; others are checked to be the
  // document's own (for-in also lists inherited enumerable members).
  for (const key in doc) {
    const sub = keep.get(key);
    if (sub === true || !Object.hasOwn(doc, key)) continue;
    if (sub === undefined) {
      delete doc[key];
      continue;
    }
    const next = keepBelow(doc[key], sub);
    if (next === DROPPED) delete doc[key];
    else if (next !== doc[key]) doc[key] = next;
  }
}

const DROPPED = Symbol("dropped");

/**
 * `value` with only the `keep` fields, as MongoDB projects a nested inclusion: through
 * arrays, and a value that is not a document (nor an array) holds none of them.
 */
function keepBelow(value: unknown, keep: PathTree): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    let changed = false;
    for (const item of value) {
      const next = keepBelow(item, keep);
      if (next === DROPPED) changed = true;
      else {
        if (next !== item) changed = true;
        out.push(next);
      }
    }
    return changed ? out : value;
  }
  if (!isPlainObject(value)) return DROPPED;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const sub = keep.get(key);
    if (sub === true) continue;
    const next = sub === undefined ? DROPPED : keepBelow(value[key], sub);
    if (next === value[key]) continue;
    out ??= { ...value };
    if (next === DROPPED) delete out[key];
    else out[key] = next;
  }
  return out ?? value;
}
