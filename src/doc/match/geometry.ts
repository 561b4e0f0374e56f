/**
 * @module
 * Stored geometries for `$geoWithin` and `$geoIntersects` on the embedded store: a field
 * holding any GeoJSON geometry (Point, MultiPoint, LineString, MultiLineString, Polygon,
 * MultiPolygon, GeometryCollection) or a legacy pair is read into points, lines and polygons,
 * and tested against the query's geometry on the plane of longitudes and latitudes (MongoDB
 * draws edges on the sphere; the two differ near the edges of large shapes).
 *
 * @example
 * ```ts
 * const region = shapeOf({ type: "Polygon", coordinates: [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]] });
 * intersects(region!, shapeOf({ type: "Point", coordinates: [1, 1] })!); // true
 * ```
 */
import { isPlainObject } from "../../util/plain.ts";

export type Point = [number, number];
type Ring = Point[];

/** A geometry as its parts: points, lines (lists of points), polygons (lists of rings). */
export interface Shape {
  points: Point[];
  lines: Point[][];
  polygons: Ring[][];
}

/** How deep a GeometryCollection may nest (MongoDB refuses nesting them at all). */
const MAX_COLLECTION_DEPTH = 1;

function isPosition(v: unknown): v is Point {
  return Array.isArray(v) && v.length >= 2 && typeof v[0] === "number" &&
    typeof v[1] === "number";
}

function positions(v: unknown): Point[] | null {
  if (!Array.isArray(v) || !v.every(isPosition)) return null;
  return v.map((p) => [p[0], p[1]]);
}

function polygonOf(v: unknown): Ring[] | null {
  if (!Array.isArray(v) || v.length === 0) return null;
  const rings: Ring[] = [];
  for (const ring of v) {
    const points = positions(ring);
    if (!points || points.length < 4) return null;
    rings.push(points);
  }
  return rings;
}

/**
 * The parts of a GeoJSON geometry, or of a legacy pair (`[x, y]`, or a document whose first
 * two values are numbers); null for anything else.
 */
export function shapeOf(value: unknown, depth = 0): Shape | null {
  if (isPosition(value)) return { points: [[value[0], value[1]]], lines: [], polygons: [] };
  if (!isPlainObject(value)) return null;
  const shape: Shape = { points: [], lines: [], polygons: [] };
  const c = value.coordinates;
  switch (value.type) {
    case "Point":
      if (!isPosition(c)) return null;
      shape.points.push([c[0], c[1]]);
      return shape;
    case "MultiPoint": {
      const points = positions(c);
      if (!points) return null;
      shape.points.push(...points);
      return shape;
    }
    case "LineString": {
      const line = positions(c);
      if (!line || line.length < 2) return null;
      shape.lines.push(line);
      return shape;
    }
    case "MultiLineString": {
      if (!Array.isArray(c)) return null;
      for (const member of c) {
        const line = positions(member);
        if (!line || line.length < 2) return null;
        shape.lines.push(line);
      }
      return shape;
    }
    case "Polygon": {
      const polygon = polygonOf(c);
      if (!polygon) return null;
      shape.polygons.push(polygon);
      return shape;
    }
    case "MultiPolygon": {
      if (!Array.isArray(c)) return null;
      for (const member of c) {
        const polygon = polygonOf(member);
        if (!polygon) return null;
        shape.polygons.push(polygon);
      }
      return shape;
    }
    case "GeometryCollection": {
      const geometries = value.geometries;
      if (!Array.isArray(geometries) || depth >= MAX_COLLECTION_DEPTH) return null;
      for (const member of geometries) {
        const part = shapeOf(member, depth + 1);
        if (!part) return null;
        shape.points.push(...part.points);
        shape.lines.push(...part.lines);
        shape.polygons.push(...part.polygons);
      }
      return shape;
    }
  }
  if (value.type !== undefined) return null;
  const [x, y] = Object.values(value);
  return typeof x === "number" && typeof y === "number"
    ? { points: [[x, y]], lines: [], polygons: [] }
    : null;
}

/** The one point `value` holds (a GeoJSON Point or a legacy pair), or null. */
export function pointOf(value: unknown): Point | null {
  const shape = shapeOf(value);
  return shape && shape.points.length === 1 && shape.lines.length === 0 &&
      shape.polygons.length === 0
    ? shape.points[0]
    : null;
}

/** Every vertex of `shape`: its points, its lines' points and its rings' points. */
function vertices(shape: Shape): Point[] {
  const out = [...shape.points];
  for (const line of shape.lines) out.push(...line);
  for (const polygon of shape.polygons) for (const ring of polygon) out.push(...ring);
  return out;
}

/** Every segment of `shape`: its lines' and its rings' consecutive points. */
function segments(shape: Shape): Array<[Point, Point]> {
  const out: Array<[Point, Point]> = [];
  const add = (line: Point[]) => {
    for (let i = 1; i < line.length; i++) out.push([line[i - 1], line[i]]);
  };
  for (const line of shape.lines) add(line);
  for (const polygon of shape.polygons) for (const ring of polygon) add(ring);
  return out;
}

/** The sign of the turn from `a` to `b` to `c`: 1 left, -1 right, 0 straight. */
function turn(a: Point, b: Point, c: Point): number {
  const cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
  return cross > 0 ? 1 : cross < 0 ? -1 : 0;
}

/** Whether `p`, straight in line with the segment `a`-`b`, lies within its bounds. */
function withinBounds(p: Point, a: Point, b: Point): boolean {
  return Math.min(a[0], b[0]) <= p[0] && p[0] <= Math.max(a[0], b[0]) &&
    Math.min(a[1], b[1]) <= p[1] && p[1] <= Math.max(a[1], b[1]);
}

function onSegment(p: Point, a: Point, b: Point): boolean {
  return turn(a, b, p) === 0 && withinBounds(p, a, b);
}

/** Whether the segments `a`-`b` and `c`-`d` share a point (touching counts). */
function segmentsMeet(a: Point, b: Point, c: Point, d: Point): boolean {
  const t1 = turn(a, b, c), t2 = turn(a, b, d), t3 = turn(c, d, a), t4 = turn(c, d, b);
  if (t1 !== t2 && t3 !== t4) return true;
  return (t1 === 0 && withinBounds(c, a, b)) || (t2 === 0 && withinBounds(d, a, b)) ||
    (t3 === 0 && withinBounds(a, c, d)) || (t4 === 0 && withinBounds(b, c, d));
}

/** Whether the segments cross at a point inside both (not at an end of either). */
function segmentsCross(a: Point, b: Point, c: Point, d: Point): boolean {
  const t1 = turn(a, b, c), t2 = turn(a, b, d), t3 = turn(c, d, a), t4 = turn(c, d, b);
  return t1 * t2 < 0 && t3 * t4 < 0;
}

/** Even-odd test: whether `p` lies inside `ring` (its boundary not included). */
function insideRing(p: Point, ring: Ring): boolean {
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

function onRing(p: Point, ring: Ring): boolean {
  for (let i = 1; i < ring.length; i++) if (onSegment(p, ring[i - 1], ring[i])) return true;
  return false;
}

/** Whether `p` lies in the polygon (its first ring less its holes), its boundary included. */
export function inPolygon(p: Point, rings: Ring[]): boolean {
  if (rings.length === 0) return false;
  if (onRing(p, rings[0])) return true;
  if (!insideRing(p, rings[0])) return false;
  for (let i = 1; i < rings.length; i++) {
    if (onRing(p, rings[i])) return true;
    if (insideRing(p, rings[i])) return false;
  }
  return true;
}

/** Whether the point `p` lies on some part of `shape`. */
function touches(p: Point, shape: Shape): boolean {
  for (const q of shape.points) if (q[0] === p[0] && q[1] === p[1]) return true;
  for (const line of shape.lines) {
    for (let i = 1; i < line.length; i++) if (onSegment(p, line[i - 1], line[i])) return true;
  }
  return shape.polygons.some((polygon) => inPolygon(p, polygon));
}

/** The bounding box of points: `[minX, minY, maxX, maxY]`. */
function box(points: Point[]): [number, number, number, number] {
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [x, y] of points) {
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  return [x0, y0, x1, y1];
}

/** Whether the two shapes share a point (`$geoIntersects`). */
export function intersects(a: Shape, b: Shape): boolean {
  // Shapes whose boxes are apart share nothing: most stored shapes go without the
  // vertex-by-edge tests below (a query's polygon may have thousands of vertices).
  const [ax0, ay0, ax1, ay1] = box(vertices(a));
  const [bx0, by0, bx1, by1] = box(vertices(b));
  if (ax1 < bx0 || bx1 < ax0 || ay1 < by0 || by1 < ay0) return false;
  if (vertices(a).some((p) => touches(p, b)) || vertices(b).some((p) => touches(p, a))) {
    return true;
  }
  const bs = segments(b);
  for (const [p, q] of segments(a)) {
    for (const [r, s] of bs) if (segmentsMeet(p, q, r, s)) return true;
  }
  return false;
}

/**
 * Whether `shape` lies wholly in the (multi)polygon `polygons` (`$geoWithin` a `$geometry`):
 * each vertex in one of them, no edge crossing one's boundary, and no hole of it inside a
 * polygon of `shape`.
 */
export function within(shape: Shape, polygons: Ring[][]): boolean {
  const vs = vertices(shape);
  if (vs.length === 0) return false;
  // Outside the polygons' box, a shape is not within them.
  const [x0, y0, x1, y1] = box(polygons.flatMap((polygon) => polygon[0] ?? []));
  const [sx0, sy0, sx1, sy1] = box(vs);
  if (sx0 < x0 || sy0 < y0 || sx1 > x1 || sy1 > y1) return false;
  if (!vs.every((p) => polygons.some((polygon) => inPolygon(p, polygon)))) return false;
  const boundary = segments({ points: [], lines: [], polygons });
  for (const [p, q] of segments(shape)) {
    for (const [r, s] of boundary) if (segmentsCross(p, q, r, s)) return false;
  }
  for (const polygon of polygons) {
    for (let h = 1; h < polygon.length; h++) {
      for (const p of polygon[h]) {
        if (shape.polygons.some((own) => inPolygon(p, own) && !onRing(p, own[0]))) return false;
      }
    }
  }
  return true;
}

/** Whether every vertex of `shape` passes `test` (a convex legacy shape holds it then). */
export function everyVertex(shape: Shape, test: (p: Point) => boolean): boolean {
  const vs = vertices(shape);
  return vs.length > 0 && vs.every(test);
}

const RADIANS = Math.PI / 180;

/** A [longitude, latitude] as a unit vector. */
function unit([lng, lat]: Point): [number, number, number] {
  const [x, y] = [lng * RADIANS, lat * RADIANS];
  return [Math.cos(y) * Math.cos(x), Math.cos(y) * Math.sin(x), Math.sin(y)];
}

type Vector = [number, number, number];
const dot = (a: Vector, b: Vector) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: Vector, b: Vector): Vector => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const angle = (a: Vector, b: Vector) => Math.atan2(Math.hypot(...cross(a, b)), dot(a, b));

/** The great-circle distance between two [longitude, latitude] points, in radians. */
export function angularDistance(a: Point, b: Point): number {
  return angle(unit(a), unit(b));
}

/** The angle from `p` to the great-circle arc from `a` to `b`, in radians. */
function arcDistance(p: Vector, a: Vector, b: Vector): number {
  const normal = cross(a, b);
  const length = Math.hypot(...normal);
  if (length < 1e-15) return Math.min(angle(p, a), angle(p, b));
  const n: Vector = [normal[0] / length, normal[1] / length, normal[2] / length];
  const off = dot(p, n);
  // The foot of `p` on the arc's great circle lies on the arc when it is between `a` and `b`.
  const foot: Vector = [p[0] - off * n[0], p[1] - off * n[1], p[2] - off * n[2]];
  if (dot(cross(a, foot), n) >= 0 && dot(cross(foot, b), n) >= 0) return Math.asin(Math.abs(off));
  return Math.min(angle(p, a), angle(p, b));
}

/**
 * The angle, in radians, from `center` to the nearest point of `shape` on the sphere (edges
 * drawn as great-circle arcs, as MongoDB's 2dsphere index measures a `$near`): 0 inside one
 * of its polygons (tested on the plane), else to the nearest point, line or polygon edge.
 */
export function sphericalDistance(center: Point, shape: Shape): number {
  if (shape.polygons.some((polygon) => inPolygon(center, polygon))) return 0;
  const p = unit(center);
  let best = Infinity;
  for (const q of shape.points) best = Math.min(best, angle(p, unit(q)));
  for (const [a, b] of segments(shape)) best = Math.min(best, arcDistance(p, unit(a), unit(b)));
  return best;
}
