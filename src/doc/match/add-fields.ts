/**
 * `$addFields` and its alias `$set` as MongoDB computes them: a dotted path (`"a.c"`) or a
 * nested document of fields (`{a: {c: ...}}`) sets a field inside `a`, in each document of a
 * list `a` holds (lists in lists too), and a value of `a` that is not a document (a number,
 * null, nothing) becomes a document of the computed fields; every expression reads the whole
 * document. A field set keeps its place, a new one goes last, and an expression giving
 * nothing removes its field. mingo's set `"a.c"` as a property of a list (lost) and left a
 * scalar `a` as it was, and took a nested document for a value replacing `a`.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $set: { "a.c": 2 } }], engineOptions()).run([{ a: [{ b: 1 }, 5] }]);
 * // [{ a: [{ b: 1, c: 2 }, { c: 2 }] }]
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import type { Doc } from "../types.ts";
import { isPlainObject } from "../../util/plain.ts";
import { setOwn } from "../../util/own.ts";

/** A level of the stage's fields: an expression per field, or the next level. */
type Level = Map<string, { expr: unknown } | { level: Level }>;

/** Whether `value` is a document of fields to set (no operator among its keys), not empty. */
const isNested = (value: unknown): value is Doc =>
  isPlainObject(value) && Object.keys(value).length > 0 &&
  !Object.keys(value).some((key) => key.startsWith("$"));

/** The fields of a stage as levels; throws on a name MongoDB refuses or paths that collide. */
function levels(op: string, spec: Doc, into: Level = new Map(), at = ""): Level {
  for (const [path, value] of Object.entries(spec)) {
    if (isPlainObject(value) && Object.keys(value).length === 0) {
      throw new Error(`${op}: an empty document is not a value ('${at}${path}')`);
    }
    const parts = path.split(".");
    if (parts.some((part) => part === "" || part.startsWith("$"))) {
      throw new Error(`${op}: '${at}${path}' is not a field name (empty or starting with '$')`);
    }
    let level = into;
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i];
      const here = level.get(name);
      const last = i === parts.length - 1;
      if (last && !isNested(value)) {
        if (here) throw new Error(`${op}: two values for the path '${at}${path}'`);
        level.set(name, { expr: value });
      } else {
        if (here && !("level" in here)) {
          throw new Error(
            `${op}: two values for the path '${at}${parts.slice(0, i + 1).join(".")}'`,
          );
        }
        const next = here?.level ?? new Map();
        if (!here) level.set(name, { level: next });
        if (last) levels(op, value as Doc, next, `${at}${path}.`);
        level = next;
      }
    }
  }
  return into;
}

/** `doc` (a copy of it) with the fields of `level` computed from `root`. */
function applyLevel(doc: Doc, level: Level, root: Doc, options: Options): Doc {
  const out: Doc = { ...doc };
  for (const [name, node] of level) {
    if ("expr" in node) {
      const value = evalExpr(root as never, node.expr as never, options);
      if (value === undefined) delete out[name];
      else setOwn(out, name, value);
    } else {
      setOwn(
        out,
        name,
        applyValue(Object.hasOwn(out, name) ? out[name] : undefined, node.level, root, options),
      );
    }
  }
  return out;
}

/** A field's value with `level` applied: to a document, to each member of a list, else anew. */
function applyValue(value: unknown, level: Level, root: Doc, options: Options): unknown {
  if (isPlainObject(value)) return applyLevel(value, level, root, options);
  if (Array.isArray(value)) return value.map((member) => applyValue(member, level, root, options));
  return applyLevel({}, level, root, options);
}

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

function addFieldsStage(op: string): AnyFn {
  return (coll: { map(fn: (doc: Doc) => Doc): unknown }, spec: unknown, options: Options) => {
    if (!isPlainObject(spec)) throw new Error(`${op} takes a document of fields`);
    const level = levels(op, spec);
    if (level.size === 0) return coll;
    return coll.map((doc) => applyLevel(doc, level, doc, options));
  };
}

/** `$addFields` and `$set`, by name. */
export const addFieldsStages: Record<string, AnyFn> = {
  $addFields: addFieldsStage("$addFields"),
  $set: addFieldsStage("$set"),
};
