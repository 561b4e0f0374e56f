/**
 * Building Issues trees, and turning ajv errors into Cerberus-style issues.
 */
import type { ErrorObject } from "ajv";
import type { Issues } from "./types.ts";
import { getOwn, setOwn } from "../domain/keys.ts";

/**
 * Records `message` at `path` (field names / list indexes). Several messages for one field
 * are joined with "; ". A message on a field wins over issues of its sub-fields (a dict that
 * is not a dict has no meaningful sub-field issues).
 */
export function addIssue(issues: Issues, path: string[], message: string): void {
  if (path.length === 0) path = ["_document"];
  // Own properties only: a client's field name ("constructor", "__proto__") is just a key.
  let cur = issues;
  for (let i = 0; i < path.length - 1; i++) {
    let next = getOwn(cur, path[i]);
    if (typeof next === "string") return;
    if (next === undefined) setOwn(cur, path[i], next = {});
    cur = next as Issues;
  }
  const last = path[path.length - 1];
  const prev = getOwn(cur, last);
  if (typeof prev === "string") {
    if (!prev.split("; ").includes(message)) setOwn(cur, last, `${prev}; ${message}`);
  } else {
    setOwn(cur, last, message);
  }
}

/** Adds every issue of `from` into `into`. */
export function mergeIssues(into: Issues, from: Issues, prefix: string[] = []): void {
  for (const [k, v] of Object.entries(from)) {
    if (typeof v === "string") addIssue(into, [...prefix, k], v);
    else mergeIssues(into, v, [...prefix, k]);
  }
}

/** Whether there is an issue at `path` or below it. */
export function hasIssue(issues: Issues, path: string[]): boolean {
  let cur: string | Issues | undefined = issues;
  for (const seg of path) {
    if (typeof cur === "string") return true;
    cur = cur === undefined ? undefined : getOwn(cur, seg) as string | Issues | undefined;
  }
  return cur !== undefined;
}

/** Keeps only the issues for which `keep(path)` is true; returns null when none remain. */
export function filterIssues(issues: Issues, keep: (path: string[]) => boolean): Issues | null {
  const out: Issues = {};
  const walk = (node: Issues, prefix: string[]) => {
    for (const [k, v] of Object.entries(node)) {
      const p = [...prefix, k];
      if (typeof v === "string") {
        if (keep(p)) addIssue(out, p, v);
      } else walk(v, p);
    }
  };
  walk(issues, []);
  return Object.keys(out).length ? out : null;
}

const unescape = (s: string) => s.replace(/~1/g, "/").replace(/~0/g, "~");

function pointer(p: string): string[] {
  return p === "" ? [] : p.slice(1).split("/").map(unescape);
}

/** Whether a schema path goes through one of `keywords` (below its last segment). */
function through(schemaPath: string, keywords: string[]): boolean {
  const segs = schemaPath.split("/");
  for (let i = 1; i < segs.length - 1; i++) {
    const s = segs[i];
    if (s === "properties" || s === "patternProperties") i++;
    else if (keywords.includes(s)) return true;
  }
  return false;
}

/** Cerberus-style message and document path for one ajv error, or null to skip it. */
function describe(e: ErrorObject, show: (v: unknown) => string): [string[], string] | null {
  const at = pointer(e.instancePath);
  if (e.keyword !== "propertyNames" && through(e.schemaPath, ["propertyNames"])) {
    // keysrules: ajv reports the key as the data (custom keywords get no propertyName). The
    // message is Cerberus's, under the key's name, as Eve answers it.
    const inner = describe({ ...e, schemaPath: "", propertyName: undefined }, show);
    return inner && [[...at, e.propertyName ?? String(e.data)], inner[1]];
  }
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return [[...at, String(p.missingProperty)], "required field"];
    case "additionalProperties":
      return [[...at, String(p.additionalProperty)], "unknown field"];
    case "minLength":
    case "minItems":
    case "minProperties":
      return [at, `min length is ${p.limit}`];
    case "maxLength":
    case "maxItems":
    case "maxProperties":
      return [at, `max length is ${p.limit}`];
    case "minimum":
      return [at, `min value is ${p.limit}`];
    case "maximum":
      return [at, `max value is ${p.limit}`];
    case "enum":
      return [at, `unallowed value ${show(e.data)}`];
    case "anyOf":
      return [at, "no definitions validate"];
    case "oneOf":
      return [at, "none or more than one rule validate"];
    case "not":
      return [at, "one or more definitions validate"];
    case "if":
    case "propertyNames":
    case "false schema":
      return null;
  }
  return [at, e.message ?? `failed rule '${e.keyword}'`];
}

/** Converts ajv errors into Issues (null when there are none). */
export function ajvIssues(
  errors: ErrorObject[] | null | undefined,
  show: (v: unknown) => string,
): Issues | null {
  if (!errors?.length) return null;
  const issues: Issues = {};
  for (const e of errors) {
    if (through(e.schemaPath, ["anyOf", "oneOf"])) continue;
    const d = describe(e, show);
    if (d) addIssue(issues, d[0], d[1]);
  }
  return Object.keys(issues).length ? issues : null;
}
