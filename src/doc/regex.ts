/**
 * Linear-time regular expressions (RE2 semantics, via the pure-JS `re2js`): every regular
 * expression that runs on client data goes through here, so no pattern can backtrack
 * catastrophically. Patterns RE2 cannot run in linear time (back-references, look-around)
 * are refused with {@link RegexError}.
 */
import { RE2JS } from "re2js";

/** A pattern or option that the linear-time engine refuses; the message names the problem. */
export class RegexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RegexError";
  }
}

const FLAG_BITS: Record<string, number> = {
  i: RE2JS.CASE_INSENSITIVE,
  m: RE2JS.MULTILINE,
  s: RE2JS.DOTALL,
  u: 0,
};

/** Maximum pattern length accepted (characters). */
export const MAX_PATTERN_LENGTH = 1000;

/**
 * Compiles `source` with MongoDB/JS-style `options` (`i`, `m`, `s`; `u` is implied).
 * @throws RegexError for an unsupported option or a pattern RE2 refuses.
 */
export function compileLinear(source: string, options = ""): RE2JS {
  if (source.length > MAX_PATTERN_LENGTH) {
    throw new RegexError(`regular expression longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  let flags = 0;
  for (const o of options) {
    if (!Object.hasOwn(FLAG_BITS, o)) throw new RegexError(`unsupported regex option '${o}'`);
    flags |= FLAG_BITS[o];
  }
  try {
    return RE2JS.compile(source, flags);
  } catch (error) {
    const text = (error as Error).message.replace(/^error parsing regexp: /, "");
    throw new RegexError(`unsupported regular expression: ${text}`);
  }
}

/**
 * A `RegExp` whose `exec`/`test` run on the linear-time engine; hand it to code that
 * expects a `RegExp` (mingo's `$regex`). Global/sticky state (`lastIndex`) is not kept.
 */
export class LinearRegExp extends RegExp {
  readonly #re: RE2JS;
  readonly #source: string;
  readonly #flags: string;

  constructor(source: string, options = "") {
    super("(?:)");
    this.#re = compileLinear(source, options);
    this.#source = source;
    this.#flags = [...new Set(options)].sort().join("");
  }

  override get source(): string {
    return this.#source;
  }

  override get flags(): string {
    return this.#flags;
  }

  override exec(input: string): RegExpExecArray | null {
    return this.#re.exec(String(input)) as RegExpExecArray | null;
  }

  override test(input: string): boolean {
    return this.#re.test(String(input));
  }
}
