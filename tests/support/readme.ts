/**
 * Reads the docs' examples for `tests/readme_test.ts`: shell commands of ```sh blocks (split
 * the way a POSIX shell splits them: quotes, backslash-newlines, comments), and the fields a
 * request's query names.
 */
import type { Json } from "./client.ts";

/** One shell command: its words (quotes removed) and its source text. */
export interface ShellCommand {
  words: string[];
  source: string;
}

/** The commands of a shell snippet. Expansions (`$X`) are kept as written. */
export function shellCommands(text: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let words: string[] = [];
  let word: string | null = null;
  let start = 0;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = (at: number) => {
    endWord();
    if (words.length) commands.push({ words, source: text.slice(start, at).trim() });
    words = [];
    start = at + 1;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'") {
      const close = text.indexOf("'", i + 1);
      if (close === -1) throw new Error(`unclosed ' in: ${text.slice(start)}`);
      word = (word ?? "") + text.slice(i + 1, close);
      i = close;
    } else if (ch === '"') {
      let value = "";
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === "\\" && '"\\$`'.includes(text[i + 1])) i++;
        value += text[i];
      }
      if (i >= text.length) throw new Error(`unclosed " in: ${text.slice(start)}`);
      word = (word ?? "") + value;
    } else if (ch === "\\") {
      if (text[i + 1] !== "\n") word = (word ?? "") + text[i + 1];
      i++;
    } else if (ch === "#" && word === null) {
      const nl = text.indexOf("\n", i);
      i = (nl === -1 ? text.length : nl) - 1;
    } else if (ch === "\n" || ch === ";") endCommand(i);
    else if (ch === " " || ch === "\t") endWord();
    else word = (word ?? "") + ch;
  }
  endCommand(text.length);
  return commands;
}

/** Field paths named by a `where` value (JSON or the expression form). */
function whereFields(where: string): string[] {
  const text = where.trim();
  if (!text.startsWith("{")) {
    const names = text.replace(/"(?:[^"\\]|\\.)*"/g, '""').matchAll(
      /([A-Za-z_][\w.]*)\s*(?:==|!=|<=|>=|<|>|\bin\b|\bnot in\b)/g,
    );
    return [...names].map((m) => m[1]).filter((n) => !["and", "or", "not"].includes(n));
  }
  const fields: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== "object") return;
    for (const [key, value] of Object.entries(node)) {
      if (!key.startsWith("$")) fields.push(key);
      walk(value);
    }
  };
  try {
    walk(JSON.parse(text));
  } catch { /* not JSON: a malformed example, its expected status says so */ }
  return fields;
}

/** Field paths named by a `sort` value (`-a,b` or `[("a", -1)]` / `[["a", -1]]`). */
function sortFields(sort: string): string[] {
  const text = sort.trim();
  if (text.startsWith("[")) return [...text.matchAll(/[("[]\s*"([^"]+)"/g)].map((m) => m[1]);
  return text.split(",").map((f) => f.trim().replace(/^-/, "")).filter(Boolean);
}

/** Every field path a request names in its query (where, sort, projection, embedded). */
export function queryFields(query: URLSearchParams): { field: string; use: string }[] {
  const out: { field: string; use: string }[] = [];
  const where = query.get("where");
  if (where) { for (const field of whereFields(where)) out.push({ field, use: "where" }); }
  const sort = query.get("sort");
  if (sort) { for (const field of sortFields(sort)) out.push({ field, use: "sort" }); }
  for (const use of ["projection", "embedded"]) {
    const value = query.get(use);
    if (!value) continue;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(value);
    } catch {
      continue; // a malformed example: what it answers is checked by running it
    }
    for (const field of Object.keys(parsed)) out.push({ field, use });
  }
  return out;
}

/** Meta fields every resource has. */
const META = new Set(["_id", "_created", "_updated", "_etag"]);

/**
 * The schema rule of the dotted `path` in `schema` (a resource's Eve schema), or null when
 * the path names no field; meta fields answer `{}`.
 */
export function fieldRule(
  schema: Record<string, Json>,
  path: string,
): Record<string, Json> | null {
  const [first, ...rest] = path.split(".");
  if (META.has(first) && rest.length === 0) return {};
  let rule = Object.hasOwn(schema, first) ? schema[first] : null;
  for (const part of rest) {
    if (!rule) return null;
    const inner = rule.type === "list" ? rule.schema?.schema : rule.schema;
    rule = inner && Object.hasOwn(inner, part) ? inner[part] : null;
  }
  return rule;
}
