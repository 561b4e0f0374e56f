/**
 * The parts joined into one flat string (`Array.prototype.join` writes a new sequential
 * string). `+` and template literals make ropes, and a rope or a slice of a longer string
 * (a regular expression's capture) anywhere in a body makes `JSON.stringify` give up its
 * fast path part way and serialize the whole body again on the slower one. For strings
 * made per request that end up in bodies (hrefs). Give it two parts or more: a one-element
 * join returns that element itself (copy a single string with {@link freshString}).
 */
export function flatConcat(parts: string[]): string {
  return parts.join("");
}

/**
 * `s` as a fresh flat string, in V8's compact one-byte form when its characters allow.
 * A string assembled piece by piece can stay a rope or in two-byte form, and one such
 * string anywhere in a body sends `JSON.stringify` of the whole body down its slower path
 * (dates formatted that way did, fresh copies of the same dates did not). For strings made
 * once and used many times.
 */
export function freshString(s: string): string {
  return JSON.parse(JSON.stringify(s));
}
