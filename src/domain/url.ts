/**
 * Parses resource `url` values such as `people/<regex("[a-f0-9]{24}"):owner>/invoices` and
 * Eve's `regex("...")` item-url form into literal parts and typed variables.
 */
import type { UrlVariable } from "./types.ts";

const VARIABLE = /<regex\((["'])(.*?)\1\):([A-Za-z_][\w.]*)>/g;
const REGEX_CALL = /^regex\((["'])(.*)\1\)$/;

/** Splits a url into literal segments and variables; throws with a message when malformed. */
export function parseUrl(url: string): Array<string | UrlVariable> {
  const parts: Array<string | UrlVariable> = [];
  const trimmed = url.replace(/^\/+|\/+$/g, "");
  if (trimmed === "") throw new Error("must not be empty");
  let last = 0;
  for (const match of trimmed.matchAll(VARIABLE)) {
    pushLiterals(parts, trimmed.slice(last, match.index));
    const pattern = match[2];
    checkRegex(pattern);
    parts.push({ field: match[3], pattern });
    last = match.index! + match[0].length;
  }
  pushLiterals(parts, trimmed.slice(last));
  return parts;
}

function pushLiterals(parts: Array<string | UrlVariable>, text: string) {
  for (const segment of text.split("/")) {
    if (segment === "") continue;
    if (/[<>]/.test(segment)) {
      throw new Error(`malformed variable near "${segment}" (expected <regex("..."):field>)`);
    }
    if (!/^[\w.~-]+$/.test(segment)) throw new Error(`invalid path segment "${segment}"`);
    parts.push(segment);
  }
}

/** Extracts the pattern of `regex("...")`; throws when the value has another form. */
export function parseRegexCall(value: string): string {
  const match = REGEX_CALL.exec(value.trim());
  if (!match) throw new Error(`expected regex("...") but got ${JSON.stringify(value)}`);
  checkRegex(match[2]);
  return match[2];
}

/** Throws when `pattern` is not a valid regular expression. */
export function checkRegex(pattern: string): void {
  try {
    new RegExp(pattern);
  } catch (error) {
    throw new Error(`invalid regex "${pattern}": ${(error as Error).message}`);
  }
}

/** Regex source matching the parts, with a named group per variable (`v0`, `v1`, ...). */
export function partsToRegex(parts: Array<string | UrlVariable>): string {
  return parts.map((part, i) =>
    typeof part === "string" ? escapeRegex(part) : `(?<v${i}>(?:${part.pattern}))`
  ).join("/");
}

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
