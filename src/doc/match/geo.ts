/**
 * Geo query operators, which mingo lacks, for GeoJSON Point fields (and legacy
 * `[x, y]` pairs): `$geoWithin` ($box, $polygon, $center, $centerSphere, $geometry
 * Polygon/MultiPolygon), `$geoIntersects` with a polygon, and `$near`/`$nearSphere`
 * with `$maxDistance`/`$minDistance` in meters. Distances are great-circle (haversine);
 * polygon containment is planar on longitude/latitude.
 */
import type { Doc, Filter } from "../types.ts";

/** Earth radius MongoDB uses for spherical distances, in meters. */
const EARTH_RADIUS_M = 6378100;

type Point = [number, number];
type Ring = Point[];

function isPoint(v: unknown): v is Point {
  return Array.isArray(v) && v.length >= 2 && typeof v[0] === "number" &&
    typeof v[1] === "number";
}

/** The [lng, lat] of a GeoJSON Point or legacy pair, or null. */
export function toPoint(v: unknown): Point | null {
  if (isPoint(v)) return [v[0], v[1]];
  if (v && typeof v === "object" && (v as Doc).type === "Point") {
    const c = (v as Doc).coordinates;
    if (isPoint(c)) return [c[0], c[1]];
  }
  return null;
}

function getPath(doc: unknown, path: string): unknown {
  let cur = doc;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Doc)[part];
  }
  return cur;
}

const rad = (deg: number) => deg * Math.PI / 180;

/** Great-circle distance between two [lng, lat] points, in radians. */
export function angularDistance(a: Point, b: Point): number {
  const dLat = rad(b[1] - a[1]);
  const dLng = rad(b[0] - a[0]);
  const h = Math.sin(dLat / 2) ** 2 +
    Math.cos(rad(a[1])) * Math.cos(rad(b[1])) * Math.sin(dLng / 2) ** 2;
  return 2 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Great-circle distance in meters. */
export function distanceMeters(a: Point, b: Point): number {
  return angularDistance(a, b) * EARTH_RADIUS_M;
}

function inRing(p: Point, ring: Ring): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i];
    const [xj, yj] = ring[j];
    if ((yi > p[1]) !== (yj > p[1]) && p[0] < (xj - xi) * (p[1] - yi) / (yj - yi) + xi) {
      inside = !inside;
    }
  }
  return inside;
}

function inPolygon(p: Point, rings: Ring[]): boolean {
  if (rings.length === 0 || !inRing(p, rings[0])) return false;
  for (let i = 1; i < rings.length; i++) if (inRing(p, rings[i])) return false;
  return true;
}

/** Compiles a `$geoWithin`/`$geoIntersects` shape into a point test. */
function shapeTest(shape: Doc): (p: Point) => boolean {
  if (Array.isArray(shape.$box)) {
    const [[x1, y1], [x2, y2]] = shape.$box as Point[];
    const [lx, hx, ly, hy] = [
      Math.min(x1, x2),
      Math.max(x1, x2),
      Math.min(y1, y2),
      Math.max(y1, y2),
    ];
    return (p) => p[0] >= lx && p[0] <= hx && p[1] >= ly && p[1] <= hy;
  }
  if (Array.isArray(shape.$polygon)) {
    const ring = shape.$polygon as Ring;
    return (p) => inRing(p, ring);
  }
  if (Array.isArray(shape.$center)) {
    const [c, r] = shape.$center as [Point, number];
    return (p) => Math.hypot(p[0] - c[0], p[1] - c[1]) <= r;
  }
  if (Array.isArray(shape.$centerSphere)) {
    const [c, r] = shape.$centerSphere as [Point, number];
    return (p) => angularDistance(p, c) <= r;
  }
  const geometry = shape.$geometry as Doc | undefined;
  if (geometry?.type === "Polygon") {
    const rings = geometry.coordinates as Ring[];
    return (p) => inPolygon(p, rings);
  }
  if (geometry?.type === "MultiPolygon") {
    const polygons = geometry.coordinates as Ring[][];
    return (p) => polygons.some((rings) => inPolygon(p, rings));
  }
  throw new Error("unsupported geo shape (embedded store): " + Object.keys(shape).join(","));
}

/** A parsed `$near`/`$nearSphere` condition. */
export interface NearSpec {
  point: Point;
  min: number;
  max: number;
}

/** Reads `$near`/`$nearSphere` (GeoJSON form, or legacy pair with sibling `$maxDistance`). */
function parseNear(value: unknown, siblings: Doc = {}): NearSpec {
  const v = value as Doc;
  const geometry = v && typeof v === "object" && !Array.isArray(v) ? v.$geometry : value;
  const point = toPoint(geometry);
  if (!point) throw new Error("$near requires a GeoJSON Point");
  const max = Number((v as Doc)?.$maxDistance ?? siblings.$maxDistance ?? Infinity);
  const min = Number((v as Doc)?.$minDistance ?? siblings.$minDistance ?? 0);
  return { point, min, max };
}

// deno-lint-ignore no-explicit-any
type QueryOp = (selector: string, value: any, options: any) => (doc: Doc) => boolean;

const geoWithin: QueryOp = (selector, value) => {
  const test = shapeTest(value as Doc);
  return (doc) => {
    const p = toPoint(getPath(doc, selector));
    return p !== null && test(p);
  };
};

const near: QueryOp = (selector, value, options) => {
  const condition = options?.local?.condition as Filter | undefined;
  const siblings = (condition?.[selector] ?? {}) as Doc;
  const spec = parseNear(value, siblings);
  return (doc) => {
    const p = toPoint(getPath(doc, selector));
    if (!p) return false;
    const d = distanceMeters(p, spec.point);
    return d >= spec.min && d <= spec.max;
  };
};

const always: QueryOp = () => () => true;

/** Query operators to register in mingo's context. */
export const geoQueryOperators: Record<string, QueryOp> = {
  $geoWithin: geoWithin,
  $geoIntersects: geoWithin,
  $near: near,
  $nearSphere: near,
  // Read by $near from its sibling; on their own they do not filter.
  $maxDistance: always,
  $minDistance: always,
};

/** The field and centre of a top-level `$near`/`$nearSphere` in `filter`, for ordering. */
export function nearOrder(filter: Filter): { field: string; point: Point } | null {
  for (const [field, cond] of Object.entries(filter)) {
    if (field[0] === "$" || !cond || typeof cond !== "object") continue;
    const c = cond as Doc;
    const value = c.$near ?? c.$nearSphere;
    if (value !== undefined) return { field, point: parseNear(value, c).point };
  }
  return null;
}

/** Orders documents by distance from `point` on `field`, nearest first. */
export function sortByDistance(docs: Doc[], field: string, point: Point): Doc[] {
  return docs
    .map((doc) => {
      const p = toPoint(getPath(doc, field));
      return { doc, d: p ? distanceMeters(p, point) : Infinity };
    })
    .sort((a, b) => a.d - b.d)
    .map((x) => x.doc);
}
