/**
 * `$project` as MongoDB computes it.
 *
 * - Field order: `_id` first, then the fields kept from the document in the document's order,
 *   then the computed ones in the stage's order, at every level of a nested projection (mingo
 *   put kept and computed fields in the order of their names and `_id` last).
 * - A field computed under a path (`{"a.c": ...}`, `{a: {b: 1, c: ...}}`) is computed in the
 *   document `a` holds, in each member of a list `a` holds (lists in lists too), and in place
 *   of anything else (a number, a missing field), as MongoDB's projection tree applies it. mingo
 *   wrote `a: {c: ...}` in place of a list.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $project: { "a.c": { $literal: 2 } } }], engineOptions())
 *   .run([{ _id: 1, a: [{ b: 1 }, 7] }]); // [{ _id: 1, a: [{ c: 2 }, { c: 2 }] }]
 * ```
 * @module
 */
import { Lazy } from "mingo/lazy";
import { TEXT_SCORE } from "./text.ts";
import { evalExpr } from "mingo/core";
import * as pipelineOperators from "mingo/operators/pipeline";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { isPlainObject } from "../../util/plain.ts";
import { setOwn } from "../../util/own.ts";
import { computation } from "./computation.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

const MINGO = pipelineOperators as unknown as Record<string, AnyFn>;

/** Whether a `$project` value is a projection of a document's fields (not an expression). */
const isNestedSpec = (value: unknown): value is Doc =>
  isPlainObject(value) && !Object.keys(value).some((key) => key.startsWith("$"));

/** Whether a `$project` value keeps or drops a field (rather than computing it). */
const isFlag = (value: unknown): boolean => typeof value === "boolean" || typeof value === "number";

/**
 * A `$project` specification with its dotted paths as nested documents (`a.b` as `a: {b}`),
 * made of prototype-less objects (a field named `__proto__` is a field like any other).
 */
function specTree(spec: Doc): Doc {
  const tree: Doc = Object.create(null);
  for (const [path, value] of Object.entries(spec)) {
    const parts = path.split(".");
    let node = tree;
    for (const part of parts.slice(0, -1)) {
      if (!isNestedSpec(node[part])) node[part] = Object.create(null);
      node = node[part] as Doc;
    }
    const last = parts[parts.length - 1];
    node[last] = isNestedSpec(value) ? specTree(value) : value;
  }
  return tree;
}

const computedAt = new WeakMap<Doc, string[]>();

/**
 * The fields a level of a `$project` computes (rather than keeps), in the stage's order;
 * remembered per level, as every document asks for them.
 */
function computedFields(tree: Doc): string[] {
  let fields = computedAt.get(tree);
  if (fields === undefined) {
    fields = Object.entries(tree).filter(([, value]) => !isFlag(value) && !isNestedSpec(value))
      .map(([name]) => name);
    computedAt.set(tree, fields);
  }
  return fields;
}

/** Whether a level below the top of `tree` computes a field. */
function computesBelow(tree: Doc): boolean {
  return Object.values(tree).some((value) => isNestedSpec(value) && computes(value));
}

const computing = new WeakMap<Doc, boolean>();

/** Whether `tree` computes a field, at its level or below (remembered per level). */
function computes(tree: Doc): boolean {
  let known = computing.get(tree);
  if (known === undefined) {
    known = computedFields(tree).length > 0 || computesBelow(tree);
    computing.set(tree, known);
  }
  return known;
}

/**
 * `out`'s fields reordered (see the module doc), at every level of the projection; `input`
 * is the document it came from, `tree` the stage's level ({@link specTree}).
 */
function inFieldOrder(out: Doc, input: unknown, tree: Doc, top: boolean): Doc {
  const computed = computedFields(tree);
  const source = isPlainObject(input) ? input : {};
  const result: Doc = {};
  if (top && Object.hasOwn(out, "_id")) result._id = out._id;
  const keep = (key: string) => {
    result[key] = nestedInOrder(out[key], source[key], tree[key]);
  };
  for (const key of Object.keys(source)) {
    if (Object.hasOwn(out, key) && !Object.hasOwn(result, key) && !computed.includes(key)) {
      keep(key);
    }
  }
  for (const key of computed) if (Object.hasOwn(out, key)) result[key] = out[key];
  for (const key of Object.keys(out)) if (!Object.hasOwn(result, key)) keep(key);
  return result;
}

/**
 * A field's value reordered by its nested projection: a document, or a list's documents (the
 * projection drops a list's other members, so the documents pair up in order).
 */
function nestedInOrder(out: unknown, input: unknown, tree: unknown): unknown {
  if (!isNestedSpec(tree)) return out;
  if (isPlainObject(out)) return inFieldOrder(out, input, tree, false);
  if (Array.isArray(out) && Array.isArray(input)) {
    const docs = input.filter(isPlainObject);
    if (docs.length !== out.length) return out;
    return out.map((member, i) =>
      isPlainObject(member) ? inFieldOrder(member, docs[i], tree, false) : member
    );
  }
  return out;
}

/** What a kept path leaves of a value that is not a document (dropped, even from a list). */
const DROPPED: unique symbol = Symbol("dropped");

/**
 * An inclusion projection with fields computed below its top, applied as MongoDB's
 * projection tree applies one: the kept fields first (in the document's order), then the
 * computed ones (in the stage's order), level by level, every expression reading the whole
 * document.
 */
class NestedProjection {
  constructor(readonly tree: Doc, readonly options: Options) {}

  apply(doc: Doc): Doc {
    const at = computation(this.options).update({ root: doc });
    const out = withoutDropped(this.#compute(this.#keep(doc, this.tree, true), this.tree, doc, at));
    if (!Object.hasOwn(out, "_id") || Object.keys(out)[0] === "_id") return out;
    const { _id, ...rest } = out;
    return { _id, ...rest };
  }

  /** The fields of `doc` the level keeps (not computing anything yet). */
  #keep(doc: Doc, tree: Doc, top: boolean): Doc {
    const out: Doc = {};
    if (top && !Object.hasOwn(tree, "_id") && Object.hasOwn(doc, "_id")) out._id = doc._id;
    for (const key of Object.keys(doc)) {
      const spec = tree[key];
      if (spec === undefined) continue;
      if (isFlag(spec)) {
        if (spec) out[key] = doc[key];
      } else if (isNestedSpec(spec)) {
        const value = this.#keepValue(doc[key], spec);
        if (value !== DROPPED) out[key] = value;
      }
    }
    return out;
  }

  #keepValue(value: unknown, tree: Doc): unknown {
    if (isPlainObject(value)) return this.#keep(value, tree, false);
    if (Array.isArray(value)) return value.map((member) => this.#keepValue(member, tree));
    return DROPPED;
  }

  /** `kept` with the level's computed fields, as MongoDB's `applyExpressions` sets them. */
  #compute(kept: unknown, tree: Doc, root: Doc, at: Options): Doc {
    if (Array.isArray(kept)) {
      return kept.map((member) => this.#compute(member, tree, root, at)) as unknown as Doc;
    }
    // A value that is not a document (a kept path dropped it) becomes a document of what the
    // level computes.
    const out: Doc = isPlainObject(kept) ? { ...kept } : {};
    for (const [key, spec] of Object.entries(tree)) {
      if (isFlag(spec)) continue;
      if (isNestedSpec(spec)) {
        if (!computes(spec)) continue;
        setOwn(
          out,
          key,
          this.#compute(Object.hasOwn(out, key) ? out[key] : DROPPED, spec, root, at),
        );
      } else {
        const value = evalExpr(root as never, spec as never, at);
        if (value === undefined) delete out[key];
        else setOwn(out, key, value);
      }
    }
    return out;
  }
}

/** `value` with what a kept path dropped taken out of its lists, at every level. */
function withoutDropped(value: Doc): Doc {
  for (const key of Object.keys(value)) {
    const member = value[key];
    if (member === DROPPED) delete value[key];
    else if (Array.isArray(member)) value[key] = droppedOut(member);
    else if (isPlainObject(member)) withoutDropped(member);
  }
  return value;
}

/** A list without what a kept path dropped, at every level of it. */
function droppedOut(list: unknown[]): unknown[] {
  return list.filter((member) => member !== DROPPED).map((member) =>
    Array.isArray(member)
      ? droppedOut(member)
      : isPlainObject(member)
      ? withoutDropped(member)
      : member
  );
}

/** `$project` (see the module doc). */
const projectStage: AnyFn = (
  coll: { transform(fn: (docs: Doc[]) => unknown): unknown },
  spec: Doc,
  options: Options,
) =>
  coll.transform((docs) => {
    if (isPlainObject(spec) && Object.keys(spec).length === 0) {
      throw new Error("$project needs at least one field");
    }
    const tree = isPlainObject(spec) ? specTree(spec) : Object.create(null);
    if (computesBelow(tree)) {
      // mingo's checks of the specification (kept and dropped fields mixed, names), on one
      // document: they do not depend on it.
      MINGO.$project(Lazy(docs.slice(0, 1)), spec, options).collect();
      const nested = new NestedProjection(tree, options);
      return Lazy(docs.map((doc) => keepScore(nested.apply(doc), doc)));
    }
    const projected = MINGO.$project(Lazy(docs), spec, options).collect();
    return Lazy(
      projected.map((out: Doc, i: number) =>
        keepScore(inFieldOrder(out, docs[i], tree, true), docs[i])
      ),
    );
  });

/** `out` with the text score of `doc`, if it has one: metadata outlives a `$project`. */
function keepScore(out: Doc, doc: Doc): Doc {
  const score = (doc as { [TEXT_SCORE]?: number })[TEXT_SCORE];
  if (score !== undefined) (out as { [TEXT_SCORE]?: number })[TEXT_SCORE] = score;
  return out;
}

/** `$project`, by name. */
export const projectStages: Record<string, AnyFn> = { $project: projectStage };
