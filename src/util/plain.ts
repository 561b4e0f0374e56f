/**
 * The one test for "a plain object": what JSON parsing, settings files and clients make,
 * as opposed to arrays, dates, BSON values, byte arrays or class instances.
 */

/** True for an object whose prototype is `Object.prototype` or null (never an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
