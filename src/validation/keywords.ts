/**
 * The ajv instance and the custom keywords the compiled JSON Schemas use for Eve/Cerberus
 * rules JSON Schema has no exact equivalent for. Each keyword is compiled once per schema
 * position and reports a Cerberus-style message.
 */
import { Ajv } from "ajv";
import type { TypeChecker } from "./typecheck.ts";
import { compileLinear } from "../doc/regex.ts";

/** The data context ajv passes to keyword functions. */
interface DataValidationCxt {
  instancePath: string;
  parentData: unknown;
  parentDataProperty: string | number;
  rootData: unknown;
}

/** Validate function returned by a compiled keyword, carrying its errors. */
type KwFn = ((data: unknown, cxt?: DataValidationCxt) => boolean) & {
  errors?: Array<Record<string, unknown>>;
};

/**
 * A check returning a message (or [message, instancePath], or a list of those) when the
 * value fails.
 */
type Check = (
  data: unknown,
  cxt?: DataValidationCxt,
) => string | [string, string] | Array<[string, string]> | null;

function keyword<Arg>(ajv: Ajv, name: string, make: (arg: Arg) => Check) {
  ajv.addKeyword({
    keyword: name,
    errors: true,
    compile(arg: unknown) {
      const check = make(arg as Arg); // the compiler writes each keyword's argument
      const fn: KwFn = (data, cxt) => {
        const r = check(data, cxt);
        if (r === null || (Array.isArray(r) && r.length === 0)) return true;
        const list = typeof r === "string"
          ? [[r, undefined]]
          : Array.isArray(r[0])
          ? r as Array<[string, string]>
          : [r as [string, string]];
        fn.errors = list.map(([message, instancePath]) => ({
          keyword: name,
          message,
          params: {},
          instancePath,
        }));
        return false;
      };
      return fn;
    },
  });
}

const escapePointer = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/** Whether `v` is "empty" for the `empty` rule. */
function isEmpty(v: unknown): boolean {
  if (typeof v === "string" || Array.isArray(v)) return v.length === 0;
  if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.keys(v).length === 0;
  }
  return false;
}

function lookup(obj: unknown, path: string[]): { found: boolean; value?: unknown } {
  let cur = obj;
  for (const seg of path) {
    if (typeof cur !== "object" || cur === null || !Object.hasOwn(cur, seg)) {
      return { found: false };
    }
    cur = (cur as Record<string, unknown>)[seg];
  }
  return { found: true, value: cur };
}

/**
 * Creates the ajv instance for one resource schema. `show` renders a value inside messages.
 */
export function createAjv(tc: TypeChecker, show: (v: unknown) => string): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    verbose: true,
    allowMatchingProperties: true,
  });
  const equals = (a: unknown, b: unknown) =>
    a === b || (typeof a === "object" && a !== null && JSON.stringify(a) === JSON.stringify(b));
  const inList = (list: unknown[], v: unknown) => list.some((x) => equals(x, v));

  keyword(ajv, "eveType", (types: string[]) => (v) => {
    if (tc.isAny(v, types)) return null;
    const detail = types.length === 1 ? tc.geoProblem(v, types[0]) : null;
    return `must be of ${types.join(" or ")} type${detail ? ` (${detail})` : ""}`;
  });
  keyword(ajv, "eveNull", () => () => "null value not allowed");
  keyword(ajv, "eveNotEmpty", () => (v) => isEmpty(v) ? "empty values not allowed" : null);
  keyword(ajv, "eveRegex", (a: { source: string; flags: string; shown: string }) => {
    const re = compileLinear(`(?:${a.source})`, a.flags);
    return (v) =>
      typeof v === "string" && !re.testExact(v) ? `value does not match regex '${a.shown}'` : null;
  });
  keyword(ajv, "eveAllowedMembers", (allowed: unknown[]) => (v) => {
    if (!Array.isArray(v)) return null;
    const bad = v.filter((x) => !inList(allowed, x));
    return bad.length ? `unallowed values ${bad.map(show).join(", ")}` : null;
  });
  keyword(ajv, "eveForbidden", (forbidden: unknown[]) => (v) => {
    const bad = (Array.isArray(v) ? v : [v]).filter((x) => inList(forbidden, x));
    if (!bad.length) return null;
    return `unallowed value${bad.length > 1 ? "s" : ""} ${bad.map(show).join(", ")}`;
  });
  keyword(ajv, "eveContains", (wanted: unknown[]) => (v) => {
    if (!Array.isArray(v)) return null;
    const missing = wanted.filter((w) => !inList(v, w));
    return missing.length ? `missing members ${missing.map(show).join(", ")}` : null;
  });
  keyword(
    ajv,
    "eveItemsLength",
    (n: number) => (v) =>
      Array.isArray(v) && v.length !== n
        ? `length of list should be ${n}, it is ${v.length}`
        : null,
  );
  keyword(ajv, "eveExcludes", (names: string[]) => (_v, cxt) => {
    const parent = cxt?.parentData as Record<string, unknown> | undefined;
    const hit = names.find((n) => parent && Object.hasOwn(parent, n));
    return hit ? `'${hit}' must not be present with '${cxt!.parentDataProperty}'` : null;
  });
  keyword(
    ajv,
    "eveDependencies",
    (deps: Array<{ path: string[]; root: boolean; name: string; values?: unknown[] }>) =>
    (_v, cxt) => {
      for (const d of deps) {
        const r = lookup(d.root ? cxt?.rootData : cxt?.parentData, d.path);
        if (!r.found) return `field '${d.name}' is required`;
        if (d.values && !inList(d.values, r.value)) {
          return `depends on these values: ${d.name} in ${d.values.map(show).join(", ")}`;
        }
      }
      return null;
    },
  );
  keyword(
    ajv,
    "eveRequiredUnless",
    (list: Array<{ field: string; unless: string[] }>) => (v, cxt) => {
      if (typeof v !== "object" || v === null) return null;
      const missing: Array<[string, string]> = [];
      for (const { field, unless } of list) {
        if (Object.hasOwn(v, field) || unless.some((u) => Object.hasOwn(v, u))) continue;
        missing.push(["required field", `${cxt?.instancePath ?? ""}/${escapePointer(field)}`]);
      }
      return missing;
    },
  );
  return ajv;
}
