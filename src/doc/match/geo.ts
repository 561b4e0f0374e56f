/**
 * Geo query operators, which mingo lacks: `$geoWithin` ($box, $polygon, $center,
 * $centerSphere, $geometry Polygon/MultiPolygon) and `$geoIntersects` (any GeoJSON geometry)
 * on fields holding any GeoJSON geometry or a legacy pair (`[x, y]` or a document of two
 * numbers; see geometry.ts), and, on points,
 * `$near`/`$nearSphere` with `$maxDistance`/`$minDistance` in the units MongoDB uses (meters
 * from a GeoJSON point, radians from a legacy pair with `$nearSphere`, the plane's units from
 * one with `$near`; see ../near.ts). Spherical distances are great-circle; polygon
 * containment is planar on longitude/latitude.
 */
import type { Doc, Filter } from "../types.ts";
import { type Near, type NearCondition, readCondition } from "../near.ts";
import {
  angularDistance,
  everyVertex,
  inPolygon,
  intersects,
  type Point,
  pointOf,
  type Shape,
  shapeOf,
  sphericalDistance,
  within,
} from "./geometry.ts";

/** Earth radius MongoDB uses for spherical distances, in meters. */
const EARTH_RADIUS_M = 6378100;

type Ring = Point[];

/** The value at the dotted `path` of `doc` (a location field), through documents only. */
export function getPath(doc: unknown, path: string): unknown {
  let cur = doc;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Doc)[part];
  }
  return cur;
}

/** Compiles a `$geoWithin` shape into a test of a stored geometry. */
function withinTest(shape: Doc): (stored: Shape) => boolean {
  if (Array.isArray(shape.$box)) {
    const [[x1, y1], [x2, y2]] = shape.$box as Point[];
    const [lx, hx, ly, hy] = [
      Math.min(x1, x2),
      Math.max(x1, x2),
      Math.min(y1, y2),
      Math.max(y1, y2),
    ];
    return (s) => everyVertex(s, (p) => p[0] >= lx && p[0] <= hx && p[1] >= ly && p[1] <= hy);
  }
  if (Array.isArray(shape.$polygon)) {
    const ring = shape.$polygon as Ring;
    return (s) => everyVertex(s, (p) => inPolygon(p, [ring]));
  }
  if (Array.isArray(shape.$center)) {
    const [c, r] = shape.$center as [Point, number];
    return (s) => everyVertex(s, (p) => Math.hypot(p[0] - c[0], p[1] - c[1]) <= r);
  }
  if (Array.isArray(shape.$centerSphere)) {
    const [c, r] = shape.$centerSphere as [Point, number];
    return (s) => everyVertex(s, (p) => angularDistance(p, c) <= r);
  }
  const geometry = shape.$geometry as Doc | undefined;
  if (geometry?.type === "Polygon" || geometry?.type === "MultiPolygon") {
    const query = shapeOf(geometry);
    if (query) return (s) => within(s, query.polygons);
  }
  throw new Error("unsupported geo shape (embedded store): " + Object.keys(shape).join(","));
}

/** Compiles a `$geoIntersects` geometry into a test of a stored geometry. */
function intersectsTest(shape: Doc): (stored: Shape) => boolean {
  const query = shapeOf(shape.$geometry);
  if (!query || Object.keys(shape).length !== 1) {
    throw new Error("$geoIntersects takes one GeoJSON $geometry");
  }
  return (s) => intersects(s, query);
}

// deno-lint-ignore no-explicit-any
type QueryOp = (selector: string, value: any, options: any) => (doc: Doc) => boolean;

const geoShape =
  (compile: (shape: Doc) => (stored: Shape) => boolean): QueryOp => (selector, value) => {
    const test = compile(value as Doc);
    return (doc) => {
      const stored = shapeOf(getPath(doc, selector));
      return stored !== null && test(stored);
    };
  };

const near = (op: NearCondition["op"]): QueryOp => (selector, _value, options) => {
  const condition = (options?.local?.condition as Filter | undefined)?.[selector] as Doc;
  const spec = readCondition({ field: selector, op, condition, rest: {} });
  return (doc) => {
    const d = distanceOf(spec, getPath(doc, selector));
    return d !== Infinity && d >= spec.min && d <= spec.max;
  };
};

const always: QueryOp = () => () => true;

/** Query operators to register in mingo's context. */
export const geoQueryOperators: Record<string, QueryOp> = {
  $geoWithin: geoShape(withinTest),
  $geoIntersects: geoShape(intersectsTest),
  $near: near("$near"),
  $nearSphere: near("$nearSphere"),
  // Read by $near from its sibling; on their own they do not filter.
  $maxDistance: always,
  $minDistance: always,
};

/**
 * The distance from `near`'s centre to what `value` holds, in `near`'s units: on the plane to
 * a legacy point (a `2d` index holds points only); on the sphere (meters or radians) to the
 * nearest point of any geometry, 0 inside a polygon, as a `2dsphere` index measures.
 * Infinity when it holds nothing of the kind.
 */
export function distanceOf(near: Near, value: unknown): number {
  if (near.metric === "flat") {
    const p = pointOf(value);
    return p ? Math.hypot(p[0] - near.point[0], p[1] - near.point[1]) : Infinity;
  }
  const shape = shapeOf(value);
  if (!shape) return Infinity;
  const angle = sphericalDistance(near.point, shape);
  return near.metric === "radians" ? angle : angle * EARTH_RADIUS_M;
}

/** Orders documents by distance from `near`'s centre, nearest first. */
export function sortByDistance(docs: Doc[], near: Near): Doc[] {
  return docs
    .map((doc) => ({ doc, d: distanceOf(near, getPath(doc, near.field)) }))
    .sort((a, b) => a.d - b.d)
    .map((x) => x.doc);
}
