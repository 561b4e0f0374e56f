/**
 * Client keys and object prototypes: the names no field path may use, and own-property
 * reads and writes that never reach `Object.prototype`, whatever key a client sends.
 */

/** Field-path segments refused everywhere: they reach or replace object prototypes. */
export const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set([
  "__proto__",
  "constructor",
  "prototype",
]);

/** The BSON driver's type tag: a client object carrying it must never be taken for BSON. */
export const BSON_TAG = "_bsontype";

/**
 * The first refused segment of a dotted field path (or key), if any: `_bsontype` included,
 * and any segment holding a NUL character (a BSON name cannot: MongoDB's driver refuses to
 * encode it, so the embedded store must not accept what the other store cannot keep).
 */
export function forbiddenSegment(path: string): string | undefined {
  // A plain name (the common case) is its one segment: no split.
  if (!path.includes(".")) {
    const refused = FORBIDDEN_SEGMENTS.has(path) || path === BSON_TAG || path.includes("\0");
    return refused ? path : undefined;
  }
  for (const segment of path.split(".")) {
    if (FORBIDDEN_SEGMENTS.has(segment) || segment === BSON_TAG || segment.includes("\0")) {
      return segment;
    }
  }
  return undefined;
}

/** `obj[key]` when `key` is an own property of `obj`, else undefined. */
export function getOwn(obj: object, key: string): unknown {
  return Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

/** Sets `obj[key]` as an own data property (see util/own.ts). */
export { setOwn } from "../util/own.ts";
