/**
 * @module
 * A filter's `$near` or `$nearSphere`, read as MongoDB reads it: where it may stand, its two
 * forms, its bounds, the units they are in, and the geo index it needs.
 *
 * - Forms: a GeoJSON point, `{"$near": {"$geometry": {"type": "Point", ...}, "$maxDistance":
 *   m}}` (or the point itself as `$near`'s value), measures meters on the sphere. A legacy
 *   pair, `{"$near": [x, y], "$maxDistance": d}`, measures the plane's own units with `$near`
 *   and radians on the sphere with `$nearSphere`.
 * - Place: one at most, at the top of the filter or in a top-level `$and`.
 * - Index: a GeoJSON point needs a `2dsphere` index on the field, a legacy `$near` a `2d` one, a
 *   legacy `$nearSphere` either.
 *
 * The embedded store reads a filter with {@link readNear} to refuse, match and order as
 * MongoDB does; the MongoDB store finds the condition with {@link findNear} to count its
 * matches, which `countDocuments` cannot.
 *
 * @example
 * ```ts
 * const near = readNear({ loc: { $near: [2, 3], $maxDistance: 5 }, kind: "shop" });
 * // near.field "loc", near.metric "flat", near.max 5, near.rest { kind: "shop" }
 * ```
 */
import { holdsKey, isPlainObject } from "../util/plain.ts";
import { type Filter, InvalidQueryError } from "./types.ts";

/** How a near condition measures distances. */
export type NearMetric = "meters" | "radians" | "flat";

/** A `$near`/`$nearSphere` condition as written, found in a filter. */
export interface NearCondition {
  /** The field it is on. */
  field: string;
  /** `$near` or `$nearSphere`. */
  op: "$near" | "$nearSphere";
  /** The field's condition document (`$near` and its siblings). */
  condition: Record<string, unknown>;
  /** The filter without the condition. */
  rest: Filter;
}

/** A near condition read: its centre, bounds and units. */
export interface Near extends NearCondition {
  /** The centre, `[x, y]` (longitude and latitude for the sphere). */
  point: [number, number];
  metric: NearMetric;
  min: number;
  /** Infinity when not bounded. */
  max: number;
}

const NEAR_OPS = new Set(["$near", "$nearSphere"]);

/** The query refused with MongoDB's words, shown to the client as the database's reason. */
function refuse(reason: string): never {
  throw new InvalidQueryError(reason, { reason });
}

/**
 * The one near condition of `filter`, as written, or null; a second one, or one anywhere but
 * at the top or in a top-level `$and`, is refused as MongoDB refuses it.
 */
export function findNear(filter: Filter): NearCondition | null {
  // Most filters hold none: looked for first without allocating anything.
  if (!holdsNear(filter)) return null;
  let found: NearCondition | null = null;
  const take = (part: Filter, rebuild: (rest: Filter) => Filter) => {
    for (const key of Object.keys(part)) {
      const value = part[key];
      if (key === "$and" && Array.isArray(value)) {
        value.forEach((member, i) => {
          if (!isPlainObject(member)) return;
          take(member, (rest) => {
            const members = value.slice();
            members[i] = rest;
            return rebuild({ ...part, $and: members });
          });
        });
      } else if (key[0] !== "$" && isPlainObject(value)) {
        const op = Object.keys(value).find((k) => NEAR_OPS.has(k));
        if (op === undefined) {
          if (holdsNear(value)) refuse("geoNear must be top-level expr");
          continue;
        }
        if (found) refuse("Too many geoNear expressions");
        const rest = { ...part };
        delete rest[key];
        found = {
          field: key,
          op: op as NearCondition["op"],
          condition: value,
          rest: rebuild(rest),
        };
      } else if (holdsNear(value)) refuse("geoNear must be top-level expr");
    }
  };
  take(filter, (rest) => rest);
  return found;
}

/** Whether `value` holds a `$near` or `$nearSphere` key at any depth. */
function holdsNear(value: unknown): boolean {
  return holdsKey(value, NEAR_OPS);
}

/**
 * The near condition of `filter` read as MongoDB reads it (see the module), or null when it
 * has none; a malformed one is refused with MongoDB's reason.
 */
export function readNear(filter: Filter): Near | null {
  const found = findNear(filter);
  return found && readCondition(found);
}

/** The near condition `found` read (see {@link readNear}). */
export function readCondition(found: NearCondition): Near {
  const { op, condition } = found;
  const value = condition[op];
  const legacy = legacyPoint(value);
  const geoJson = legacy ? null : geoJsonPoint(value);
  if (legacy || geoJson) {
    // The legacy form: the point is `$near`'s value, the bounds its siblings.
    let max = legacy?.max ?? Infinity;
    let min = 0;
    for (const key of Object.keys(condition)) {
      if (key === op) continue;
      if (key === "$maxDistance") max = bound(condition[key], "$maxDistance");
      else if (key === "$minDistance") min = bound(condition[key], "$minDistance");
      else if (key !== "$uniqueDocs") refuse(`invalid argument in geo near query: ${key}`);
    }
    if (max < 0) refuse("max distance must be non-negative");
    const point = legacy ? legacy.point : geoJson!;
    const metric: NearMetric = geoJson ? "meters" : op === "$nearSphere" ? "radians" : "flat";
    if (metric === "radians" && !onSphere(point)) {
      refuse("Legacy point is out of bounds for spherical query");
    }
    return { ...found, point, metric, min, max };
  }
  // The GeoJSON form: `$near` holds the point and the bounds, and stands alone.
  const extra = Object.keys(condition).find((k) => k !== op);
  if (extra !== undefined) {
    refuse(
      "geo near accepts just one argument when querying for a GeoJSON point. " +
        `Extra field found: ${extra}`,
    );
  }
  if (!isPlainObject(value)) refuse("geo near query argument is not an object");
  let point: [number, number] | null = null;
  let max = Infinity;
  let min = 0;
  for (const key of Object.keys(value)) {
    if (key === "$geometry") {
      point = geoJsonPoint(value[key]);
      if (!point) refuse(`$near requires geojson point, given ${JSON.stringify(value[key])}`);
    } else if (key === "$maxDistance") max = bound(value[key], "$maxDistance");
    else if (key === "$minDistance") min = bound(value[key], "$minDistance");
    else refuse(`invalid argument in geo near query: ${key}`);
  }
  if (!point) refuse("$geometry is required for geo near query");
  return { ...found, point, metric: "meters", min, max };
}

/** A distance bound: a number of 0 or more. */
function bound(value: unknown, name: string): number {
  if (typeof value !== "number") refuse(`${name} must be a number`);
  if (!(value >= 0)) refuse(`${name} must be non-negative`);
  return value;
}

/**
 * A legacy point: `[x, y]`, `[x, y, maxDistance]`, or a document whose first two values are
 * numbers.
 */
function legacyPoint(value: unknown): { point: [number, number]; max?: number } | null {
  if (Array.isArray(value)) {
    if (value.length < 2 || value.length > 3 || !value.every((v) => typeof v === "number")) {
      return null;
    }
    const point: [number, number] = [value[0], value[1]];
    return value.length === 3 ? { point, max: value[2] } : { point };
  }
  if (!isPlainObject(value)) return null;
  const values = Object.values(value);
  if (values.length !== 2 || typeof values[0] !== "number" || typeof values[1] !== "number") {
    return null;
  }
  return { point: [values[0], values[1]] };
}

/** A GeoJSON Point's `[longitude, latitude]`, or null. */
function geoJsonPoint(value: unknown): [number, number] | null {
  if (!isPlainObject(value) || value.type !== "Point") return null;
  const c = value.coordinates;
  if (!Array.isArray(c) || c.length !== 2 || !c.every((v) => typeof v === "number")) return null;
  const point: [number, number] = [c[0], c[1]];
  return onSphere(point) ? point : null;
}

function onSphere([lng, lat]: [number, number]): boolean {
  return lng >= -180 && lng <= 180 && lat >= -90 && lat <= 90;
}

/**
 * The geo index MongoDB needs for `near`: "2dsphere" for a GeoJSON point, "2d" for a legacy
 * `$near`, either for a legacy `$nearSphere`.
 */
export function nearIndexes(near: Near): ReadonlyArray<"2d" | "2dsphere"> {
  return near.metric === "meters" ? ["2dsphere"] : near.metric === "flat" ? ["2d"] : [
    "2d",
    "2dsphere",
  ];
}

/**
 * Refuses `near` unless one of `indexes` (key patterns) has a geo key it can use on its
 * field, as MongoDB's planner does: "unable to find index for $geoNear query".
 */
export function requireNearIndex(near: Near, indexes: Iterable<Record<string, unknown>>): void {
  const kinds = nearIndexes(near);
  for (const keys of indexes) {
    const kind = keys[near.field];
    if (kinds.includes(kind as "2d")) return;
  }
  refuse("unable to find index for $geoNear query");
}

/** A `$geoNear` stage read: the near query it runs and the fields it writes. */
export interface GeoNearStage {
  /** The stage's `query` with the near condition on its key, as MongoDB builds it. */
  filter: Filter;
  /** The field the distance is written to (a dotted path). */
  distanceField: string;
  /** The factor distances are written with. */
  multiplier: number;
  /** The field the matched location is written to, if any. */
  includeLocs?: string;
}

const GEO_NEAR_OPTIONS = new Set([
  "near",
  "distanceField",
  "spherical",
  "maxDistance",
  "minDistance",
  "query",
  "distanceMultiplier",
  "includeLocs",
  "key",
  "uniqueDocs",
]);

/**
 * A `$geoNear` stage's specification read as MongoDB reads it, its key chosen among the
 * collection's geo `indexes` (key patterns) when it names none: the one `2d` index, or else
 * the one `2dsphere` index. Its query is a `$near` (or `$nearSphere` when `spherical`) on the
 * key, so its units and the index it needs are those of {@link readNear}.
 */
export function readGeoNear(
  spec: unknown,
  indexes: ReadonlyArray<Record<string, unknown>>,
): GeoNearStage {
  if (!isPlainObject(spec)) refuse("$geoNear argument must be an object");
  for (const name of ["limit", "num"]) {
    if (Object.hasOwn(spec, name)) {
      refuse(`$geoNear no longer supports the '${name}' parameter. Use a $limit stage instead.`);
    }
  }
  for (const key of Object.keys(spec)) {
    if (!GEO_NEAR_OPTIONS.has(key)) refuse(`unknown argument to $geoNear: ${key}`);
  }
  const { near, distanceField, includeLocs, key } = spec;
  if (near === null || typeof near !== "object") {
    refuse("$geoNear requires a 'near' option as an Array");
  }
  if (typeof distanceField !== "string") {
    refuse("$geoNear requires a 'distanceField' option as a String");
  }
  const condition: Record<string, unknown> = { [spec.spherical ? "$nearSphere" : "$near"]: near };
  for (const name of ["minDistance", "maxDistance"]) {
    const value = spec[name];
    if (value === undefined) continue;
    if (typeof value !== "number") refuse(`${name} must be a number`);
    if (!(value >= 0)) refuse(`${name} must be nonnegative`);
    condition[`$${name}`] = value;
  }
  let multiplier = 1;
  if (spec.distanceMultiplier !== undefined) {
    multiplier = spec.distanceMultiplier as number;
    if (typeof multiplier !== "number") refuse("distanceMultiplier must be a number");
    if (!(multiplier >= 0)) refuse("distanceMultiplier must be nonnegative");
  }
  const query = spec.query ?? {};
  if (!isPlainObject(query)) refuse("query must be an object");
  if (includeLocs !== undefined && typeof includeLocs !== "string") {
    refuse("$geoNear requires that 'includeLocs' option is a String");
  }
  let field: string;
  if (key !== undefined) {
    if (typeof key !== "string") {
      refuse(`$geoNear parameter 'key' must be of type string but found type: ${typeof key}`);
    }
    if (key === "") refuse("$geoNear parameter 'key' cannot be the empty string");
    field = key;
  } else field = geoKeyOf(indexes);
  const filter = Object.hasOwn(query, field)
    ? { $and: [query, { [field]: condition }] }
    : { ...query, [field]: condition };
  return { filter, distanceField, multiplier, includeLocs };
}

/** The field of the collection's one `2d` index, or else of its one `2dsphere` index. */
function geoKeyOf(indexes: ReadonlyArray<Record<string, unknown>>): string {
  for (const kind of ["2d", "2dsphere"]) {
    const fields = indexes.flatMap((keys) => Object.keys(keys).filter((f) => keys[f] === kind));
    if (fields.length > 1) {
      refuse(`There is more than one ${kind} index; unsure which to use for $geoNear`);
    }
    if (fields.length === 1) return fields[0];
  }
  refuse("$geoNear requires a 2d or 2dsphere index, but none were found");
}
