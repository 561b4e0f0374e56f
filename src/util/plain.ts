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

/**
 * Whether `value` holds one of the keys `names` in a plain object at any depth (through
 * plain objects and arrays, at most `maxDepth` levels down), looked for without allocating:
 * a filter's operator (`$near`, `$text`) is found before any work is done for it.
 */
export function holdsKey(value: unknown, names: ReadonlySet<string>, maxDepth = 64): boolean {
  if (maxDepth < 0 || value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (holdsKey(value[i], names, maxDepth - 1)) return true;
    }
    return false;
  }
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (names.has(key) || holdsKey(value[key], names, maxDepth - 1)) return true;
  }
  return false;
}
