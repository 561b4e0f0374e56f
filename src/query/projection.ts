/**
 * The `projection` query parameter and Eve's rule combining it with the resource's
 * default projection.
 */
import type { Projection } from "../store/store.ts";
import { QueryError } from "./errors.ts";
import { parseJsonParam } from "./json.ts";
import { isPlainObject } from "../util/plain.ts";

/** Maximum number of fields in a projection. */
const MAX_PROJECTION_FIELDS = 200;

/**
 * Parses a JSON projection `{"field": 0|1}`. Inclusive and exclusive fields cannot be
 * mixed, except for the resource's `keyFields` (its ID_FIELD and the meta fields it
 * keeps), which are always returned anyway.
 * @throws QueryError (400) on bad JSON, values other than 0/1, `$` names, or mixing.
 */
export function parseProjection(
  raw: string,
  opts: { keyFields: readonly string[]; maxLength?: number },
): Projection {
  const value = parseJsonParam("projection", raw, { maxLength: opts.maxLength, maxDepth: 1 });
  const projection = toFlagObject("projection", value, MAX_PROJECTION_FIELDS);
  const keyFields = opts.keyFields;
  const modes = new Set(
    Object.entries(projection).filter(([k]) => !keyFields.includes(k)).map(([, v]) => v),
  );
  if (modes.size > 1) {
    throw new QueryError("projection cannot mix inclusion and exclusion", "projection");
  }
  return projection;
}

/**
 * Checks a parsed JSON value is an object of field -> 0/1 (booleans accepted) and
 * returns it normalized.
 * @throws QueryError (400) naming `param`.
 */
export function toFlagObject(
  param: string,
  value: unknown,
  maxFields: number,
): Record<string, 0 | 1> {
  if (!isPlainObject(value)) throw new QueryError(`${param} must be a JSON object`, param);
  const entries = Object.entries(value);
  if (entries.length > maxFields) {
    throw new QueryError(`${param} has more than ${maxFields} fields`, param);
  }
  const out: Record<string, 0 | 1> = {};
  for (const [field, flag] of entries) {
    if (field.split(".").some((p) => p === "" || p.startsWith("$"))) {
      throw new QueryError(`${param}: invalid field name ${JSON.stringify(field)}`, param);
    }
    if (flag === 1 || flag === true) out[field] = 1;
    else if (flag === 0 || flag === false) out[field] = 0;
    else throw new QueryError(`${param}: value of '${field}' must be 0 or 1`, param);
  }
  return out;
}

/**
 * The projection to run, by Eve's rule:
 * - no client projection: the default one (or none);
 * - a client inclusion within an inclusive default: only fields the default includes
 *   (no sniffing of fields the default leaves out);
 * - a client inclusion otherwise: exactly what it asks, so `{f: 1}` reveals a field the
 *   default hides with `{f: 0}`;
 * - a client exclusion: removed from the inclusive default, or added to the exclusive one;
 * - key fields are always returned: added to inclusions, never excluded.
 * Returns undefined when every field is to be returned.
 */
export function effectiveProjection(
  client: Projection | undefined,
  defaults: Projection | undefined,
  keyFields: string[],
): Projection | undefined {
  const c = withoutKeys(client, keyFields);
  const d = withoutKeys(defaults, keyFields);
  const dMode = mode(d);
  const cMode = mode(c);
  if (cMode === null) return finish(d, dMode, keyFields);
  if (cMode === 1) {
    if (dMode !== 1) return finish(c, 1, keyFields);
    const out: Projection = {};
    for (const f of Object.keys(c)) {
      if (Object.keys(d).some((g) => g === f || f.startsWith(g + "."))) out[f] = 1;
      else for (const g of Object.keys(d)) if (g.startsWith(f + ".")) out[g] = 1;
    }
    return finish(out, 1, keyFields);
  }
  // Client exclusion.
  if (dMode === 1) {
    const out: Projection = {};
    for (const g of Object.keys(d)) {
      if (d[g] === 1 && !Object.keys(c).some((f) => f === g || g.startsWith(f + "."))) out[g] = 1;
    }
    return finish(out, 1, keyFields);
  }
  return finish({ ...d, ...c }, 0, keyFields);
}

function withoutKeys(p: Projection | undefined, keyFields: string[]): Projection {
  const out: Projection = {};
  if (p) { for (const [k, v] of Object.entries(p)) if (!keyFields.includes(k)) out[k] = v; }
  return out;
}

/** 1 for an inclusion, 0 for an exclusion, null for an empty projection. */
function mode(p: Projection): 0 | 1 | null {
  const values = Object.values(p);
  if (values.length === 0) return null;
  return values.includes(1) ? 1 : 0;
}

function finish(p: Projection, m: 0 | 1 | null, keyFields: string[]): Projection | undefined {
  if (m === null || Object.keys(p).length === 0) {
    // An inclusion left with nothing still returns the key fields only.
    return m === 1 ? Object.fromEntries(keyFields.map((k) => [k, 1 as const])) : undefined;
  }
  if (m === 0) return p;
  const out: Projection = {};
  for (const [k, v] of Object.entries(p)) if (v === 1) out[k] = 1;
  for (const k of keyFields) out[k] = 1;
  return out;
}
