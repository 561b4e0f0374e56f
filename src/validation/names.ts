/**
 * Cerberus's renaming and purging, the first step of normalization: `rename` moves a dict
 * field's value to another name, and `purge_unknown` drops the names a dict does not declare
 * where unknown names are refused. Both run on the document as sent, before every other
 * step, so the meta-field, read-only, default and coercion steps and the validation itself
 * see the renamed, purged document, as they do in Cerberus.
 *
 * ```ts
 * // schema: {"mail": {"rename": "email"}, "email": {"type": "string"},
 * //          "address": {"type": "dict", "purge_unknown": true, "schema": {"city": {...}}}}
 * renamedAndPurged({ mail: "a@x.org", address: { city: "Lyon", floor: 3 } }, root, {});
 * // -> { email: "a@x.org", address: { city: "Lyon" } }
 * ```
 *
 * Both follow declared fields: nested dicts, list members (`schema`) and items. Renames win
 * over a value sent under the new name. With dotted keys (PATCH), each segment of a key is
 * renamed on the way, and a key under a purging dict that it does not declare is dropped.
 */
import type { Doc } from "../store/store.ts";
import type { DictNode, FieldNode } from "./types.ts";
import { isPlainObject } from "../util/plain.ts";
import { setOwn } from "../domain/keys.ts";

/** Whether renaming or purging has anything to do in the dict's tree (cached per node). */
export function namesChange(dict: DictNode): boolean {
  let known = CHANGES.get(dict);
  if (known === undefined) {
    CHANGES.set(dict, false);
    known = dict.purge;
    for (const field of dict.fields.values()) {
      if (field.rename !== undefined || fieldChanges(field)) known = true;
    }
    CHANGES.set(dict, known);
  }
  return known;
}

const CHANGES = new WeakMap<DictNode, boolean>();

function fieldChanges(field: FieldNode): boolean {
  if (field.dict && namesChange(field.dict)) return true;
  if (field.member && fieldChanges(field.member)) return true;
  return field.items?.some(fieldChanges) ?? false;
}

/**
 * The document with its fields renamed and unknown names purged (see the module doc); `doc`
 * itself when the schema has neither rule. `options.dotted`: top-level keys are dotted
 * paths (a PATCH's).
 */
export function renamedAndPurged(doc: Doc, dict: DictNode, options: { dotted?: boolean }): Doc {
  if (!namesChange(dict)) return doc;
  return level(doc, dict, options.dotted === true);
}

/**
 * One dict level: each key renamed or purged, renames set last (they win over a value sent
 * under the new name). `dotted`: its keys are dotted paths.
 */
function level(obj: Doc, dict: DictNode, dotted = false): Doc {
  const out: Doc = {};
  const renamed: Array<[string, unknown]> = [];
  for (const key of Object.keys(obj)) {
    const to = dotted && key.includes(".") ? pathPlace(key.split("."), dict) : place(key, dict);
    if (to === null) continue;
    const value = to.field === undefined ? obj[key] : valueOf(obj[key], to.field);
    if (to.renamed) renamed.push([to.name, value]);
    else setOwn(out, to.name, value);
  }
  for (const [name, value] of renamed) setOwn(out, name, value);
  return out;
}

/** Where a key goes: its name (renamed or not) and its field; null when it is purged. */
interface Place {
  name: string;
  field: FieldNode | undefined;
  renamed: boolean;
}

/** Where `key` of `dict` goes. */
function place(key: string, dict: DictNode): Place | null {
  const declared = dict.fields.get(key);
  const rename = declared?.rename;
  const field = rename === undefined ? declared : dict.fields.get(rename);
  if (field === undefined && dict.purge) return null;
  return { name: rename ?? key, field, renamed: rename !== undefined && rename !== key };
}

/**
 * Where a dotted key goes: its segments through the declared dicts (a list's member
 * through a numeric segment), each renamed where its field is.
 */
function pathPlace(segments: string[], root: DictNode): Place | null {
  let dict: DictNode | undefined = root;
  let field: FieldNode | undefined;
  let renamed = false;
  for (let i = 0; i < segments.length; i++) {
    if (dict === undefined) {
      // Below a list or a field without declared fields: a member position, or free.
      if (field?.member && /^\d+$/.test(segments[i])) {
        field = field.member;
        dict = field.dict;
        continue;
      }
      field = undefined;
      break;
    }
    const to = place(segments[i], dict);
    if (to === null) return null;
    segments[i] = to.name;
    renamed ||= to.renamed;
    field = to.field;
    if (field === undefined) break;
    dict = field.dict;
  }
  return { name: segments.join("."), field, renamed };
}

/** A field's value with the dicts below it renamed and purged. */
function valueOf(value: unknown, field: FieldNode): unknown {
  if (isPlainObject(value)) {
    return field.dict && namesChange(field.dict) ? level(value, field.dict) : value;
  }
  if (!Array.isArray(value)) return value;
  const member = field.member;
  if (member) return fieldChanges(member) ? value.map((v) => valueOf(v, member)) : value;
  const items = field.items;
  if (items && items.some(fieldChanges)) {
    return value.map((v, i) => i < items.length ? valueOf(v, items[i]) : v);
  }
  return value;
}
