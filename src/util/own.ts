/**
 * @module
 * Own data properties set whatever their key: `__proto__` too, which on a plain object would
 * replace its prototype instead.
 *
 * ```ts
 * const doc: Record<string, unknown> = {};
 * setOwn(doc, "__proto__", 1); // Object.keys(doc): ["__proto__"]; its prototype unchanged
 * ```
 */

/** Sets `obj[key]` as an own data property, even for `__proto__` (never a prototype change). */
export function setOwn(obj: object, key: string, value: unknown): void {
  // On a plain object, assignment makes an own data property for every key but
  // `__proto__` (Object.prototype's one accessor) and is several times faster.
  const proto = Object.getPrototypeOf(obj);
  if (key !== "__proto__" && (proto === Object.prototype || proto === null)) {
    (obj as Record<string, unknown>)[key] = value;
  } else {
    Object.defineProperty(obj, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
}
