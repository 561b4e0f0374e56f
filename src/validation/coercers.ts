/**
 * Cerberus's `coerce` rule: named functions that turn a value sent into the value validated
 * and stored, run before every other rule of the field. Eve's settings name Python callables
 * (`"coerce": int`); here a name is one of the built-ins below or a function registered in
 * `extensions.coercers`:
 *
 * ```ts
 * export const extensions = {
 *   coercers: { lower: (v: unknown) => typeof v === "string" ? v.toLowerCase() : v },
 * };
 * // schema: {"email": {"type": "string", "coerce": "lower"}}, or a chain: ["int", "positive"]
 * ```
 *
 * A coercer that throws leaves the value as it was and reports, as Cerberus does,
 * `field 'age' cannot be coerced: <its message>` (not for null in a nullable field).
 */
import type { Coercer } from "./types.ts";

/** An integer's text as Python's `int()` reads it: sign, digits, `_` between digits. */
const INT_TEXT = /^[+-]?\d+(?:_\d+)*$/;
/** A finite number's text as Python's `float()` reads it (infinities and NaN left out). */
const FLOAT_TEXT =
  /^[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+)?$/;

/** A value as Python names its type in messages. */
function pythonType(value: unknown): string {
  if (value === null) return "NoneType";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object") return "dict";
  return typeof value;
}

/** The value shown in a message, as Python's repr shows a string. */
function shown(text: string): string {
  return `'${text.length > 60 ? `${text.slice(0, 60)}...` : text}'`;
}

/** Python's `int()` on a JSON value: numbers truncated, booleans 0 and 1, integer texts. */
function int(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error("cannot convert a non-finite float to integer");
    return Math.trunc(value);
  }
  if (typeof value === "string") {
    const text = value.trim();
    if (INT_TEXT.test(text)) {
      const n = Number(text.replaceAll("_", ""));
      if (Number.isSafeInteger(n)) return n;
    }
    throw new Error(`invalid literal for int() with base 10: ${shown(value)}`);
  }
  throw new Error(
    `int() argument must be a string or a real number, not '${pythonType(value)}'`,
  );
}

/** Python's `float()` on a JSON value: numbers, booleans 0 and 1, finite number texts. */
function float(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    const text = value.trim();
    if (FLOAT_TEXT.test(text)) {
      const n = Number(text.replaceAll("_", ""));
      if (Number.isFinite(n)) return n;
    }
    throw new Error(`could not convert string to float: ${shown(value)}`);
  }
  throw new Error(`float() argument must be a string or a real number, not '${pythonType(value)}'`);
}

/** The coercers every schema may name, as Eve's settings name Python's `int` and `float`. */
export const BUILTIN_COERCERS: Readonly<Record<string, Coercer>> = Object.freeze({ int, float });

/** The coercer called `name`: a registered one first, then a built-in; undefined if none. */
export function coercerNamed(
  name: string,
  registered: Record<string, Coercer> | undefined,
): Coercer | undefined {
  if (registered && Object.hasOwn(registered, name)) return registered[name];
  return Object.hasOwn(BUILTIN_COERCERS, name) ? BUILTIN_COERCERS[name] : undefined;
}

/**
 * `value` through the field's coercers in turn; a failure stops the chain, keeps the value
 * it had reached and gives the message (`problem`), as Cerberus does.
 */
export function coerced(
  value: unknown,
  coercers: ReadonlyArray<{ name: string; fn: Coercer }>,
): { value: unknown; problem?: string } {
  let out = value;
  for (const { name, fn } of coercers) {
    let next: unknown;
    try {
      next = fn(out);
    } catch (error) {
      return { value: out, problem: error instanceof Error ? error.message : String(error) };
    }
    if (next === undefined || next instanceof Promise) {
      return { value: out, problem: `coercer '${name}' returned no value` };
    }
    out = next;
  }
  return { value: out };
}
