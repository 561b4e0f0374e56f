/**
 * Cerberus's renaming and purging, the first step of normalization: `rename` moves a dict
 * field's value to another name, `rename_handler` moves it to the name its coercers make of
 * the name sent (a dict field's, or every unknown name's when the dict's `allow_unknown`
 * rules have one), and `purge_unknown` drops the names a dict does not declare where unknown
 * names are refused. They run on the document as sent, before every other step, so the
 * meta-field, read-only, default and coercion steps and the validation itself see the
 * renamed, purged document, as they do in Cerberus.
 *
 * ```ts
 * // schema: {"mail": {"rename": "email"}, "email": {"type": "string"},
 * //          "address": {"type": "dict", "purge_unknown": true, "schema": {"city": {...}}}}
 * renamedAndPurged({ mail: "a@x.org", address: { city: "Lyon", floor: 3 } }, root, {});
 * // -> { email: "a@x.org", address: { city: "Lyon" } }
 * ```
 *
 * They follow declared fields: nested dicts, list members (`schema`) and items. Renames win
 * over a value sent under the new name. With dotted keys (PATCH), each segment of a key is
 * renamed on the way, and a key under a purging dict that it does not declare is dropped. A
 * handler that fails, or makes a name a client could not send, keeps the name and reports
 * `field 'X' cannot be renamed: <why>` (Cerberus's words) in `options.issues`.
 */
import type { Doc } from "../store/store.ts";
import type { DictNode, FieldNode, Issues } from "./types.ts";
import { isPlainObject } from "../util/plain.ts";
import { setOwn } from "../domain/keys.ts";
import { isFieldName } from "../domain/schema.ts";
import { coerced } from "./coercers.ts";
import { addIssue } from "./issues.ts";

/** Whether renaming or purging has anything to do in the dict's tree (cached per node). */
export function namesChange(dict: DictNode): boolean {
  let known = CHANGES.get(dict);
  if (known === undefined) {
    CHANGES.set(dict, false);
    known = dict.purge || unknownHandler(dict) !== undefined;
    for (const field of dict.fields.values()) {
      if (field.rename !== undefined || field.renameHandler || fieldChanges(field)) known = true;
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

/** The `rename_handler` of a dict's `allow_unknown` rules, if any. */
function unknownHandler(dict: DictNode): FieldNode["renameHandler"] {
  return typeof dict.unknown === "object" ? dict.unknown.renameHandler : undefined;
}

/** Where a walk reports a failed `rename_handler`, and the path of the level it is at. */
interface Walk {
  issues?: Issues;
  path: string[];
}

/**
 * The document with its fields renamed and unknown names purged (see the module doc); `doc`
 * itself when the schema has none of these rules. `options.dotted`: top-level keys are dotted
 * paths (a PATCH's). `options.issues`: where a failed `rename_handler` is reported.
 */
export function renamedAndPurged(
  doc: Doc,
  dict: DictNode,
  options: { dotted?: boolean; issues?: Issues },
): Doc {
  if (!namesChange(dict)) return doc;
  return level(doc, dict, { walk: { issues: options.issues, path: [] }, dotted: options.dotted });
}

/**
 * One dict level: each key renamed or purged, renames set last (they win over a value sent
 * under the new name). `dotted`: its keys are dotted paths.
 */
function level(obj: Doc, dict: DictNode, { walk, dotted }: { walk: Walk; dotted?: boolean }): Doc {
  const out: Doc = {};
  const renamed: Array<[string, unknown]> = [];
  for (const key of Object.keys(obj)) {
    const to = dotted && key.includes(".")
      ? pathPlace(key.split("."), dict, walk)
      : place(key, dict, walk);
    if (to === null) continue;
    let value = obj[key];
    if (to.field !== undefined) {
      const depth = walk.path.length;
      walk.path.push(...(dotted ? to.name.split(".") : [to.name]));
      value = valueOf(value, to.field, walk);
      walk.path.length = depth;
    }
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
function place(key: string, dict: DictNode, walk: Walk): Place | null {
  const declared = dict.fields.get(key);
  let name = declared ? declared.rename ?? key : key;
  const handler = declared ? declared.renameHandler : unknownHandler(dict);
  if (handler) name = handled(key, handler, walk);
  const field = name === key ? declared : dict.fields.get(name);
  if (field === undefined && dict.purge) return null;
  return { name, field, renamed: name !== key };
}

/** The name a `rename_handler` makes of `key`; `key` itself when it fails (reported). */
function handled(key: string, handler: NonNullable<FieldNode["renameHandler"]>, walk: Walk) {
  const { value, problem } = coerced(key, handler);
  const why = problem ?? (isFieldName(value) ? undefined : `'${String(value)}' is no field name`);
  if (why === undefined) return value as string;
  if (walk.issues) {
    addIssue(walk.issues, [...walk.path, key], `field '${key}' cannot be renamed: ${why}`);
  }
  return key;
}

/**
 * Where a dotted key goes: its segments through the declared dicts (a list's member
 * through a numeric segment), each renamed where its field is.
 */
function pathPlace(segments: string[], root: DictNode, walk: Walk): Place | null {
  let dict: DictNode | undefined = root;
  let field: FieldNode | undefined;
  let renamed = false;
  const at: Walk = { issues: walk.issues, path: [...walk.path] };
  for (let i = 0; i < segments.length; i++) {
    if (dict === undefined) {
      // Below a list or a field without declared fields: a member position, or free.
      if (field?.member && /^\d+$/.test(segments[i])) {
        field = field.member;
        dict = field.dict;
        at.path.push(segments[i]);
        continue;
      }
      field = undefined;
      break;
    }
    const to = place(segments[i], dict, at);
    if (to === null) return null;
    segments[i] = to.name;
    at.path.push(to.name);
    renamed ||= to.renamed;
    field = to.field;
    if (field === undefined) break;
    dict = field.dict;
  }
  return { name: segments.join("."), field, renamed };
}

/** A field's value with the dicts below it renamed and purged (`walk.path` is its path). */
function valueOf(value: unknown, field: FieldNode, walk: Walk): unknown {
  if (isPlainObject(value)) {
    return field.dict && namesChange(field.dict) ? level(value, field.dict, { walk }) : value;
  }
  if (!Array.isArray(value)) return value;
  const member = field.member;
  if (member) {
    if (!fieldChanges(member)) return value;
    return value.map((v, i) => positioned(v, member, { walk, i }));
  }
  const items = field.items;
  if (items && items.some(fieldChanges)) {
    return value.map((v, i) => i < items.length ? positioned(v, items[i], { walk, i }) : v);
  }
  return value;
}

/** {@link valueOf} for a list's member at position `i`. */
function positioned(value: unknown, field: FieldNode, { walk, i }: { walk: Walk; i: number }) {
  walk.path.push(String(i));
  const out = valueOf(value, field, walk);
  walk.path.pop();
  return out;
}
