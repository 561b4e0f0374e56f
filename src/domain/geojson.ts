/**
 * GeoJSON (RFC 7946) structure checks for the geo field types.
 */

/** Schema type name -> GeoJSON `type` member. */
export const GEO_TYPES: Record<string, string> = {
  point: "Point",
  multipoint: "MultiPoint",
  linestring: "LineString",
  multilinestring: "MultiLineString",
  polygon: "Polygon",
  multipolygon: "MultiPolygon",
  geometrycollection: "GeometryCollection",
  feature: "Feature",
  featurecollection: "FeatureCollection",
};

const MAX_NESTING = 16;

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function position(v: unknown): string | null {
  if (!Array.isArray(v) || v.length < 2 || v.length > 3) {
    return "a position must be an array of 2 or 3 numbers";
  }
  for (const n of v) {
    if (typeof n !== "number" || !Number.isFinite(n)) return "coordinates must be numbers";
  }
  if (v[0] < -180 || v[0] > 180) return "longitude must be between -180 and 180";
  if (v[1] < -90 || v[1] > 90) return "latitude must be between -90 and 90";
  return null;
}

function positions(v: unknown, min: number): string | null {
  if (!Array.isArray(v)) return "coordinates must be an array of positions";
  if (v.length < min) return `at least ${min} positions are needed`;
  for (const p of v) {
    const e = position(p);
    if (e) return e;
  }
  return null;
}

function ring(v: unknown): string | null {
  const e = positions(v, 4);
  if (e) return `a linear ring needs ${e.startsWith("at least") ? "4 positions" : e}`;
  const r = v as number[][];
  const [a, b] = [r[0], r[r.length - 1]];
  if (a.length !== b.length || a.some((n, i) => n !== b[i])) return "a linear ring must be closed";
  return null;
}

function polygon(v: unknown): string | null {
  if (!Array.isArray(v) || v.length === 0) return "polygon coordinates must be a list of rings";
  for (const r of v) {
    const e = ring(r);
    if (e) return e;
  }
  return null;
}

function each(v: unknown, what: string, check: (x: unknown) => string | null): string | null {
  if (!Array.isArray(v)) return `coordinates must be a list of ${what}`;
  for (const x of v) {
    const e = check(x);
    if (e) return e;
  }
  return null;
}

const COORDS: Record<string, (c: unknown) => string | null> = {
  Point: position,
  MultiPoint: (c) => positions(c, 0),
  LineString: (c) => positions(c, 2),
  MultiLineString: (c) => each(c, "line strings", (l) => positions(l, 2)),
  Polygon: polygon,
  MultiPolygon: (c) => each(c, "polygons", polygon),
};

function members(v: Record<string, unknown>, allowed: string[], custom: boolean): string | null {
  if (custom) return null;
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) return `unexpected member '${k}'`;
  }
  return null;
}

/** How a GeoJSON object is checked: custom members allowed, and its nesting depth. */
interface GeoLevel {
  custom: boolean;
  depth: number;
}

/** Checks a GeoJSON object whose `type` must be `geoType` (or any geometry when undefined). */
function geo(v: unknown, geoType: string | undefined, { custom, depth }: GeoLevel): string | null {
  if (depth > MAX_NESTING) return "GeoJSON nested too deeply";
  if (!isObj(v)) return "must be a GeoJSON object";
  const t = v.type;
  if (typeof t !== "string") return "missing GeoJSON 'type'";
  if (geoType !== undefined && t !== geoType) return `GeoJSON type must be '${geoType}'`;
  if (t in COORDS) {
    if (!("coordinates" in v)) return "missing 'coordinates'";
    return members(v, ["type", "coordinates"], custom) ?? COORDS[t](v.coordinates);
  }
  if (t === "GeometryCollection") {
    if (!Array.isArray(v.geometries)) return "'geometries' must be a list";
    const inner: GeoLevel = { custom, depth: depth + 1 };
    for (const g of v.geometries) {
      const e = geo(g, undefined, inner);
      if (e) return e;
    }
    return members(v, ["type", "geometries"], custom);
  }
  if (geoType === undefined) return `'${t}' is not a GeoJSON geometry`;
  if (t === "Feature") {
    if (!("geometry" in v) || !("properties" in v)) {
      return "a Feature needs 'geometry' and 'properties'";
    }
    if (v.geometry !== null) {
      const e = geo(v.geometry, undefined, { custom, depth: depth + 1 });
      if (e) return e;
    }
    if (v.properties !== null && !isObj(v.properties)) return "'properties' must be an object";
    return members(v, ["type", "geometry", "properties"], custom);
  }
  if (t === "FeatureCollection") {
    if (!Array.isArray(v.features)) return "'features' must be a list";
    const inner: GeoLevel = { custom, depth: depth + 1 };
    for (const f of v.features) {
      const e = geo(f, "Feature", inner);
      if (e) return e;
    }
    return members(v, ["type", "features"], custom);
  }
  return `unknown GeoJSON type '${t}'`;
}

/**
 * Returns why `value` is not a valid GeoJSON object of schema type `typeName` (e.g.
 * `"polygon"`), or null when it is. Unless `allowCustomFields`, objects may carry only their
 * standard members.
 */
export function geoJsonProblem(
  value: unknown,
  typeName: string,
  allowCustomFields: boolean,
): string | null {
  return geo(value, GEO_TYPES[typeName], { custom: allowCustomFields, depth: 0 });
}
