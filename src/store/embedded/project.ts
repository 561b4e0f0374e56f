/**
 * Projections of top-level fields without the query engine. Most projections the service
 * runs are a resource's default one (its schema fields plus the meta fields) or a client's
 * list of fields: plain top-level names, all included or all excluded. Those are applied
 * here field by field, with the engine's result exactly (its field order included); any
 * other projection (dotted paths, positional or operator ones, mixed modes) returns null
 * and is left to the engine.
 */
import type { Doc, Projection } from "../store.ts";
import { cloneValue } from "../../doc/clone.ts";

/** A compiled top-level projection: makes the projected copy of one stored document. */
export type TopLevelProjection = (doc: Doc, options: { shared: boolean }) => Doc;

/**
 * Compiles `projection` when every field is a top-level name and it is one inclusion (`_id`
 * may be excluded from it) or one exclusion; else null.
 */
export function compileTopLevel(projection: Projection): TopLevelProjection | null {
  let known = COMPILED.get(projection);
  if (known === undefined) {
    known = compile(projection);
    COMPILED.set(projection, known);
  }
  return known;
}

/** Compiled projections by projection object: a resource's default one is compiled once. */
const COMPILED = new WeakMap<Projection, TopLevelProjection | null>();

function compile(projection: Projection): TopLevelProjection | null {
  const names = Object.keys(projection);
  let included = 0;
  let excluded = 0;
  for (const name of names) {
    if (name === "" || name.includes(".") || name.includes("$")) return null;
    const flag = projection[name] as unknown;
    if (flag === 1 || flag === true) included++;
    else if (flag === 0 || flag === false) {
      if (name !== "_id") excluded++;
    } else return null;
  }
  if (included > 0 && excluded > 0) return null;
  if (included > 0) return inclusion(projection);
  return exclusion(new Set(names));
}

/**
 * The included fields, skipping missing and undefined ones, in the engine's order: the named
 * fields sorted by name, then `_id` (unless excluded) when the projection does not name it.
 */
function inclusion(projection: Projection): TopLevelProjection {
  const keep: string[] = [];
  for (const [name, flag] of Object.entries(projection)) {
    if ((flag as unknown) === 1 || (flag as unknown) === true) keep.push(name);
  }
  keep.sort();
  const idLast = (projection._id as unknown) === undefined;
  return (doc, { shared }) => {
    const out: Doc = {};
    for (const key of keep) {
      if (!Object.hasOwn(doc, key)) continue;
      const value = doc[key];
      if (value !== undefined) out[key] = shared ? value : cloneValue(value);
    }
    if (idLast && doc._id !== undefined) out._id = shared ? doc._id : cloneValue(doc._id);
    return out;
  };
}

/** Every field but the excluded ones, in the document's order. */
function exclusion(drop: Set<string>): TopLevelProjection {
  return (doc, { shared }) => {
    const out: Doc = {};
    for (const key in doc) {
      if (drop.has(key) || !Object.hasOwn(doc, key)) continue;
      const value = doc[key];
      out[key] = shared ? value : cloneValue(value);
    }
    return out;
  };
}
