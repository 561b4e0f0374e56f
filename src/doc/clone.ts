/**
 * Deep copy of stored documents that keeps BSON values and Dates.
 *
 * `structuredClone` would turn an ObjectId into a plain object. Immutable BSON values
 * (ObjectId, Decimal128, Long, ...) are shared; mutable containers are copied.
 */
import { Binary } from "./bson.ts";

/** Returns a deep copy of `value`: plain objects, arrays, Dates, byte arrays and Binary are copied. */
export function cloneValue<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(cloneValue) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    return cloneObject(value as Record<string, unknown>) as T;
  }
  if (value instanceof Uint8Array) return value.slice() as T;
  if (value instanceof Binary) {
    return new Binary(value.buffer.slice(0, value.position), value.sub_type) as T;
  }
  if (value instanceof RegExp) return new RegExp(value.source, value.flags) as T;
  return value;
}

function cloneObject(src: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(src)) {
    if (key === "__proto__") {
      Object.defineProperty(out, key, {
        value: cloneValue(src[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[key] = cloneValue(src[key]);
    }
  }
  return out;
}

/**
 * A copy of a stored document's top level: its members are the stored values themselves
 * (spread makes an own data property of every key, `__proto__` included).
 */
export function copyTopLevel<T extends object>(doc: T): T {
  return { ...doc };
}
