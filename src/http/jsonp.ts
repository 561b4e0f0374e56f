/**
 * JSONP, in one place: the callback a request asks for (JSONP_ARGUMENT, read once per
 * request into its target, `target.ts`), the check of its name, and the wrapping of
 * rendered JSON in it.
 */
import type { Settings } from "../settings/check.ts";
import { HttpError } from "./errors.ts";

const JSONP_RE = /^[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*$/;

/** True for a safe JSONP callback name: dotted JavaScript identifiers, at most 128 chars. */
export function isValidJsonpCallback(name: string): boolean {
  return name.length <= 128 && JSONP_RE.test(name);
}

/**
 * The JSONP callback a request asks for (`query`: its parameters, null when it has none),
 * not yet checked ({@link isValidJsonpCallback}); null when none.
 */
export function jsonpArgument(settings: Settings, query: URLSearchParams | null): string | null {
  const argument = settings.JSONP_ARGUMENT;
  if (!argument || query === null) return null;
  return query.get(argument);
}

/**
 * Wraps rendered JSON as `callback(json)`.
 * @throws HttpError (400) when the callback name is not valid.
 */
export function wrapJsonp(callback: string, json: string): string {
  if (!isValidJsonpCallback(callback)) throw new HttpError(400, "invalid JSONP callback name");
  // U+2028/2029 are legal in JSON but were line terminators in older JavaScript engines.
  // The empty comment keeps the answer from starting with client text (Rosetta Flash).
  return `/**/${callback}(${json.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")})`;
}
