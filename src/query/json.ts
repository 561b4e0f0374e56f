/**
 * A strict JSON reader for query parameters: unlike `JSON.parse` it reports the character
 * position of every error, names single quotes explicitly, bounds the nesting depth and
 * refuses keys whose path segments reach prototypes (`__proto__`, `constructor`,
 * `prototype`) and the BSON type tag `_bsontype`.
 */
import { parseError, QueryError } from "./errors.ts";
import { forbiddenSegment } from "../domain/keys.ts";

/** Limits applied while reading a JSON query parameter. */
export interface JsonLimits {
  /** Maximum input length in characters (default 10 000). */
  maxLength?: number;
  /** Maximum nesting depth of arrays and objects (default 32). */
  maxDepth?: number;
}

/** Default bound on a query parameter's length. */
export const DEFAULT_MAX_LENGTH = 10_000;
/** Default bound on a query's nesting depth. */
export const DEFAULT_MAX_DEPTH = 32;

/** Throws when `raw` is longer than the limit. */
export function checkLength(param: string, raw: string, maxLength = DEFAULT_MAX_LENGTH): void {
  if (raw.length > maxLength) {
    throw new QueryError(`${param} is too long (more than ${maxLength} characters)`, param);
  }
}

/**
 * Parses strict JSON (RFC 8259) from a query parameter.
 * @throws QueryError naming `param` and the position of the first error.
 */
export function parseJsonParam(param: string, raw: string, limits: JsonLimits = {}): unknown {
  checkLength(param, raw, limits.maxLength);
  const reader = new JsonReader(param, raw, limits.maxDepth ?? DEFAULT_MAX_DEPTH);
  reader.skipSpace();
  const value = reader.value(0);
  reader.skipSpace();
  if (reader.pos < raw.length) throw reader.fail("unexpected trailing characters");
  return value;
}

/** Reads one JSON-style double-quoted string starting at `pos`; shared with other lexers. */
export function readQuotedString(
  param: string,
  src: string,
  pos: number,
): { value: string; end: number } {
  let out = "";
  let i = pos + 1;
  let chunkStart = i;
  while (i < src.length) {
    const ch = src.charCodeAt(i);
    if (ch === 0x22) {
      out += src.slice(chunkStart, i);
      return { value: out, end: i + 1 };
    }
    if (ch < 0x20) throw parseError(param, i, "control character in string");
    if (ch === 0x5c) {
      out += src.slice(chunkStart, i);
      const esc = src[i + 1];
      const simple = ESCAPES[esc];
      if (simple !== undefined) {
        out += simple;
        i += 2;
      } else if (esc === "u" && /^[0-9a-fA-F]{4}$/.test(src.slice(i + 2, i + 6))) {
        out += String.fromCharCode(parseInt(src.slice(i + 2, i + 6), 16));
        i += 6;
      } else {
        throw parseError(param, i, "invalid escape sequence");
      }
      chunkStart = i;
      continue;
    }
    i++;
  }
  throw parseError(param, pos, "unterminated string");
}

const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class JsonReader {
  pos = 0;
  constructor(readonly param: string, readonly src: string, readonly maxDepth: number) {}

  fail(what: string, at = this.pos): QueryError {
    return parseError(this.param, at, what);
  }

  skipSpace(): void {
    const s = this.src;
    while (this.pos < s.length) {
      const c = s[this.pos];
      if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") break;
      this.pos++;
    }
  }

  value(depth: number): unknown {
    const c = this.src[this.pos];
    switch (c) {
      case "{":
        return this.object(depth + 1);
      case "[":
        return this.array(depth + 1);
      case '"':
        return this.string();
      case "'":
        throw this.fail("single quotes are not allowed");
      case undefined:
        throw this.fail("unexpected end of input");
    }
    for (const [word, val] of LITERALS) {
      if (this.src.startsWith(word, this.pos)) {
        this.pos += word.length;
        return val;
      }
    }
    NUMBER_RE.lastIndex = this.pos;
    const m = NUMBER_RE.exec(this.src);
    if (m) {
      this.pos += m[0].length;
      return Number(m[0]);
    }
    throw this.fail(`unexpected character ${JSON.stringify(c)}`);
  }

  string(): string {
    const { value, end } = readQuotedString(this.param, this.src, this.pos);
    this.pos = end;
    return value;
  }

  enter(depth: number): void {
    if (depth > this.maxDepth) throw this.fail(`nesting deeper than ${this.maxDepth} levels`);
    this.pos++;
    this.skipSpace();
  }

  object(depth: number): Record<string, unknown> {
    this.enter(depth);
    const out: Record<string, unknown> = {};
    if (this.src[this.pos] === "}") {
      this.pos++;
      return out;
    }
    for (;;) {
      const c = this.src[this.pos];
      if (c === "'") throw this.fail("single quotes are not allowed");
      if (c !== '"') throw this.fail("expected a double-quoted property name");
      const keyAt = this.pos;
      const key = this.string();
      const bad = forbiddenSegment(key);
      if (bad !== undefined) {
        throw this.fail(`property name ${JSON.stringify(bad)} is not allowed`, keyAt);
      }
      this.skipSpace();
      if (this.src[this.pos] !== ":") throw this.fail("expected ':'");
      this.pos++;
      this.skipSpace();
      out[key] = this.value(depth);
      this.skipSpace();
      const sep = this.src[this.pos];
      this.pos++;
      if (sep === "}") return out;
      if (sep !== ",") throw this.fail("expected ',' or '}'", this.pos - 1);
      this.skipSpace();
    }
  }

  array(depth: number): unknown[] {
    this.enter(depth);
    const out: unknown[] = [];
    if (this.src[this.pos] === "]") {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.skipSpace();
      const sep = this.src[this.pos];
      this.pos++;
      if (sep === "]") return out;
      if (sep !== ",") throw this.fail("expected ',' or ']'", this.pos - 1);
      this.skipSpace();
    }
  }
}

const LITERALS: Array<[string, unknown]> = [["true", true], ["false", false], ["null", null]];
