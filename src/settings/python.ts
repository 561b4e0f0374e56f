/**
 * Reads an Eve `settings.py` as data, never running it: the literal subset of a settings
 * module. Accepted:
 *
 * - assignments `NAME = value`, chained (`A = B = value`) and unpacked (`A, B = 1, 2`);
 * - values: strings (single, double or triple quoted, `r` and `u` prefixes, adjacent strings
 *   concatenated), numbers, `True`, `False`, `None`, lists, tuples (read as lists), dicts
 *   with string or number keys, names assigned earlier in the file, Python's `int` and
 *   `float` (read as their names, the built-in coercers of a `coerce` rule), and
 *   `os.environ.get("X", default)` / `os.getenv("X", default)` (the default is `None`
 *   when left out);
 * - comments, blank lines, a docstring, `import os`.
 *
 * Anything else (calls, other imports, operators, subscripts, conditionals ...) is refused
 * with its line and column. As in Eve (Flask reads upper-case attributes only), the settings
 * are the upper-case names; lower-case ones only serve to compose them
 * (`DOMAIN = {"people": people}`).
 *
 * Bounded: at most 1 MiB of text, nesting 64 levels deep, 200 000 tokens.
 */
import { isPlainObject } from "../util/plain.ts";

/** Bounds and the environment of one read. */
export interface PythonSettingsOptions {
  /** The environment `os.environ.get` reads; absent: every variable is unset. */
  env?: { get(name: string): string | undefined };
  /** Largest text accepted, in UTF-16 code units (default 1 MiB). */
  maxLength?: number;
  /** Deepest nesting of lists and dicts (default 64). */
  maxDepth?: number;
}

/** A settings.py the reader refuses: the message names the line and column. */
export class PythonSettingsError extends Error {
  constructor(message: string, readonly line: number, readonly column: number) {
    super(`line ${line}, column ${column}: ${message}`);
    this.name = "PythonSettingsError";
  }
}

const MAX_TOKENS = 200_000;

type Kind = "name" | "number" | "string" | "op" | "newline" | "end";

interface Token {
  kind: Kind;
  /** The name, the operator, the decoded string, the number's text. */
  text: string;
  line: number;
  column: number;
  /** A string token's value (decoded). */
  value?: string;
}

/**
 * The settings a settings.py assigns (its upper-case names), as JSON-ready data.
 * @throws PythonSettingsError naming the line and column of the first thing it refuses.
 */
export function readPythonSettings(
  text: string,
  options: PythonSettingsOptions = {},
): Record<string, unknown> {
  const maxLength = options.maxLength ?? 1024 * 1024;
  if (text.length > maxLength) {
    throw new PythonSettingsError(`the file is longer than ${maxLength} characters`, 1, 1);
  }
  const tokens = tokenize(text.replace(/^\uFEFF/, ""));
  const parser = new Parser(tokens, options.env, options.maxDepth ?? 64);
  return parser.module();
}

const OPERATORS = ["**", "==", "!=", "<=", ">=", "//", "->", ":=", "+=", "-=", "*=", "/="];
const SINGLE = "=,:()[]{}.+-*/%<>@&|^~;!";

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0;
  const at = (pos: number) => ({ line, column: pos - lineStart + 1 });
  const fail = (message: string, pos: number): never => {
    const { line: l, column } = at(pos);
    throw new PythonSettingsError(message, l, column);
  };
  const push = (token: Token) => {
    if (tokens.length >= MAX_TOKENS) fail(`more than ${MAX_TOKENS} tokens`, i);
    tokens.push(token);
  };
  while (i < src.length) {
    const c = src[i];
    if (c === "\n" || c === "\r") {
      if (depth === 0 && tokens.length && tokens[tokens.length - 1].kind !== "newline") {
        push({ kind: "newline", text: "\n", ...at(i) });
      }
      i += c === "\r" && src[i + 1] === "\n" ? 2 : 1;
      line++;
      lineStart = i;
      continue;
    }
    if (c === " " || c === "\t" || c === "\f") {
      // Indentation matters to Python: a statement must start at the first column.
      const startsLine = tokens.length === 0 || tokens[tokens.length - 1].kind === "newline";
      const rest = src.slice(i).match(/^[ \t\f]*/)![0];
      const next = src[i + rest.length];
      if (
        depth === 0 && startsLine && i === lineStart && next !== undefined && next !== "\n" &&
        next !== "\r" && next !== "#"
      ) {
        fail("unexpected indentation", i + rest.length);
      }
      i += rest.length;
      continue;
    }
    if (c === "#") {
      while (i < src.length && src[i] !== "\n" && src[i] !== "\r") i++;
      continue;
    }
    if (c === "\\" && (src[i + 1] === "\n" || src[i + 1] === "\r")) {
      i += src[i + 1] === "\r" && src[i + 2] === "\n" ? 3 : 2;
      line++;
      lineStart = i;
      continue;
    }
    const start = i;
    const prefix = /^([rRuU]|[bBfF][rR]?|[rR][bBfF])?(['"])/.exec(src.slice(i, i + 4));
    if (prefix) {
      const flags = (prefix[1] ?? "").toLowerCase();
      if (flags.includes("b")) fail("bytes literals are not settings", start);
      if (flags.includes("f")) fail("f-strings are not literals", start);
      i += (prefix[1] ?? "").length;
      const { value, end, lines, lastLineStart } = readString(src, i, flags.includes("r"), fail);
      push({ kind: "string", text: value, value, ...at(start) });
      if (lines > 0) {
        line += lines;
        lineStart = lastLineStart;
      }
      i = end;
      continue;
    }
    const number =
      /^(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(\d[\d_]*)?\.?\d[\d_]*([eE][+-]?\d[\d_]*)?[jJ]?|\d[\d_]*\.)/
        .exec(src.slice(i, i + 400));
    if (number && /\d/.test(src[i] === "." ? src[i + 1] ?? "" : src[i])) {
      push({ kind: "number", text: number[0], ...at(start) });
      i += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i, i + 400));
    if (name) {
      push({ kind: "name", text: name[0], ...at(start) });
      i += name[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i)) ?? (SINGLE.includes(c) ? c : null);
    if (op === null) fail(`unexpected character ${JSON.stringify(c)}`, i);
    if (op === "(" || op === "[" || op === "{") depth++;
    if ((op === ")" || op === "]" || op === "}") && depth > 0) depth--;
    push({ kind: "op", text: op!, ...at(start) });
    i += op!.length;
  }
  if (tokens.length && tokens[tokens.length - 1].kind !== "newline") {
    tokens.push({ kind: "newline", text: "\n", ...at(i) });
  }
  tokens.push({ kind: "end", text: "", ...at(i) });
  return tokens;
}

const ESCAPES: Record<string, string> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

/** Reads a string literal whose quote is at `i`. */
function readString(
  src: string,
  i: number,
  raw: boolean,
  fail: (message: string, pos: number) => never,
): { value: string; end: number; lines: number; lastLineStart: number } {
  const quote = src[i];
  const triple = src.startsWith(quote.repeat(3), i);
  const close = triple ? quote.repeat(3) : quote;
  const start = i;
  i += close.length;
  let out = "";
  let lines = 0;
  let lastLineStart = 0;
  while (true) {
    if (i >= src.length) fail("unterminated string", start);
    if (src.startsWith(close, i)) {
      return { value: out, end: i + close.length, lines, lastLineStart };
    }
    const c = src[i];
    if (c === "\n" || c === "\r") {
      if (!triple) fail("unterminated string", start);
      const step = c === "\r" && src[i + 1] === "\n" ? 2 : 1;
      out += "\n";
      i += step;
      lines++;
      lastLineStart = i;
      continue;
    }
    if (c !== "\\") {
      out += c;
      i++;
      continue;
    }
    const next = src[i + 1];
    if (next === undefined) fail("unterminated string", start);
    if (raw) {
      // A raw string keeps the backslash; it still cannot end on an escaped quote.
      out += c + next;
      i += 2;
      continue;
    }
    if (next === "\n" || next === "\r") {
      i += next === "\r" && src[i + 2] === "\n" ? 3 : 2;
      lines++;
      lastLineStart = i;
      continue;
    }
    if (Object.hasOwn(ESCAPES, next)) {
      out += ESCAPES[next];
      i += 2;
      continue;
    }
    const hex = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0;
    if (hex) {
      const digits = src.slice(i + 2, i + 2 + hex);
      if (!new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) fail("invalid escape", i);
      const code = parseInt(digits, 16);
      if (code > 0x10ffff) fail("invalid escape", i);
      out += String.fromCodePoint(code);
      i += 2 + hex;
      continue;
    }
    if (/[0-7]/.test(next)) {
      const octal = /^[0-7]{1,3}/.exec(src.slice(i + 1, i + 4))![0];
      out += String.fromCharCode(parseInt(octal, 8));
      i += 1 + octal.length;
      continue;
    }
    // Python keeps an unknown escape as it is.
    out += c + next;
    i += 2;
  }
}

class Parser {
  private i = 0;
  /** Every name assigned so far (settings and the names composing them). */
  private readonly names = new Map<string, unknown>();
  private osImported = false;

  constructor(
    private readonly tokens: Token[],
    private readonly env: PythonSettingsOptions["env"],
    private readonly maxDepth: number,
  ) {}

  private get tok(): Token {
    return this.tokens[this.i];
  }

  private fail(message: string, tok: Token = this.tok): never {
    throw new PythonSettingsError(message, tok.line, tok.column);
  }

  private isOp(text: string): boolean {
    return this.tok.kind === "op" && this.tok.text === text;
  }

  private expectOp(text: string, what = `'${text}'`): void {
    if (!this.isOp(text)) this.fail(`expected ${what}, found ${describe(this.tok)}`);
    this.i++;
  }

  module(): Record<string, unknown> {
    let first = true;
    while (this.tok.kind !== "end") {
      if (this.tok.kind === "newline") {
        this.i++;
        continue;
      }
      this.statement(first);
      first = false;
      if ((this.tok.kind as Kind) !== "newline") {
        this.fail(`expected the end of the statement, found ${describe(this.tok)}`);
      }
      this.i++;
    }
    const out: Record<string, unknown> = {};
    for (const [name, value] of this.names) {
      if (/^[A-Z][A-Z0-9_]*$/.test(name)) out[name] = structuredClone(value);
    }
    return out;
  }

  private statement(first: boolean): void {
    const tok = this.tok;
    if (tok.kind === "string" && first) {
      // A docstring.
      this.value(0);
      return;
    }
    if (tok.kind === "name" && tok.text === "import") {
      this.i++;
      const name = this.tok;
      if (name.kind !== "name" || name.text !== "os") {
        this.fail("only `import os` is accepted", name);
      }
      this.i++;
      this.osImported = true;
      return;
    }
    if (tok.kind === "name" && tok.text === "from") {
      this.fail("imports other than `import os` are not accepted");
    }
    // targets: NAME ("," NAME)* "=" ... "=" value
    const targets: Token[][] = [];
    do {
      targets.push(this.targetList());
      if (!this.isOp("=")) {
        this.fail(`expected an assignment (NAME = value), found ${describe(this.tok)}`);
      }
      this.i++;
    } while (this.looksLikeTargets());
    const value = this.valueList();
    for (const group of targets) this.assign(group, value);
  }

  /** Whether the tokens from here are `NAME ("," NAME)* "="`. */
  private looksLikeTargets(): boolean {
    let j = this.i;
    while (true) {
      if (this.tokens[j].kind !== "name") return false;
      j++;
      const t = this.tokens[j];
      if (t.kind === "op" && t.text === "=") return true;
      if (!(t.kind === "op" && t.text === ",")) return false;
      j++;
    }
  }

  private targetList(): Token[] {
    const names: Token[] = [];
    while (true) {
      const tok = this.tok;
      if (tok.kind !== "name" || KEYWORDS.has(tok.text)) {
        this.fail(`expected a name to assign, found ${describe(tok)}`);
      }
      names.push(tok);
      this.i++;
      if (!this.isOp(",")) return names;
      this.i++;
      if (this.isOp("=")) return names; // `A, = ...`
    }
  }

  private assign(group: Token[], value: unknown): void {
    if (group.length === 1) {
      this.names.set(group[0].text, unwrapTuple(value));
      return;
    }
    const count = Array.isArray(value) ? value.length : 1;
    if (!Array.isArray(value) || count !== group.length) {
      this.fail(`${group.length} names are assigned ${count} value(s)`, group[0]);
    }
    group.forEach((name, n) => this.names.set(name.text, unwrapTuple(value[n])));
  }

  /** `value ("," value)*`: a bare tuple when there is a comma. */
  private valueList(): unknown {
    const first = this.value(0);
    if (!this.isOp(",")) return first;
    const items = [first];
    while (this.isOp(",")) {
      this.i++;
      if (this.tok.kind === "newline" || this.tok.kind === "end") break;
      items.push(this.value(0));
    }
    return tuple(items);
  }

  private value(depth: number): unknown {
    if (depth > this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth} levels`);
    const tok = this.tok;
    switch (tok.kind) {
      case "string": {
        let text = "";
        while (this.tok.kind === "string") {
          text += this.tok.value;
          this.i++;
        }
        return text;
      }
      case "number":
        this.i++;
        return this.number(tok, 1);
      case "name":
        return this.named(tok, depth);
      case "op":
        if (tok.text === "-" || tok.text === "+") {
          this.i++;
          const num = this.tok;
          if (num.kind !== "number") this.fail("only a number may follow a sign", num);
          this.i++;
          return this.number(num, tok.text === "-" ? -1 : 1);
        }
        if (tok.text === "[") return this.sequence("]", depth);
        if (tok.text === "(") return this.parenthesised(depth);
        if (tok.text === "{") return this.dict(depth);
    }
    this.fail(`expected a literal value, found ${describe(tok)}`);
  }

  private number(tok: Token, sign: number): number {
    const text = tok.text.replace(/_/g, "");
    if (/[jJ]$/.test(text)) this.fail("complex numbers are not settings", tok);
    let n: number;
    if (/^0[xX]/.test(text)) n = parseInt(text.slice(2), 16);
    else if (/^0[oO]/.test(text)) n = parseInt(text.slice(2), 8);
    else if (/^0[bB]/.test(text)) n = parseInt(text.slice(2), 2);
    else if (/^0\d+$/.test(text)) this.fail("leading zeros are not valid in Python 3", tok);
    else n = Number(text);
    if (!Number.isFinite(n!)) this.fail("number out of range", tok);
    return sign * n!;
  }

  private named(tok: Token, depth: number): unknown {
    this.i++;
    if (tok.text === "True") return true;
    if (tok.text === "False") return false;
    if (tok.text === "None") return null;
    if (KEYWORDS.has(tok.text)) this.fail(`expected a literal value, found '${tok.text}'`, tok);
    if (tok.text === "os" && this.isOp(".")) return this.environment(tok, depth);
    if (this.isOp("(")) this.fail(`calls are not accepted (${tok.text}(...))`, tok);
    if (this.isOp(".")) this.fail(`attribute access is not accepted (${tok.text}.)`, tok);
    if (this.isOp("[")) this.fail(`subscripts are not accepted (${tok.text}[...])`, tok);
    if (this.names.has(tok.text)) return structuredClone(this.names.get(tok.text));
    // `"coerce": int`: the built-in coercer of that name (validation/coercers.ts).
    if (tok.text === "int" || tok.text === "float") return tok.text;
    this.fail(`name '${tok.text}' is not assigned before`, tok);
  }

  /** `os.environ.get("X"[, default])` or `os.getenv("X"[, default])`. */
  private environment(os: Token, depth: number): unknown {
    if (!this.osImported) this.fail("`os` is used without `import os`", os);
    this.i++; // "."
    const member = this.tok;
    if (member.kind === "name" && member.text === "environ") {
      this.i++;
      this.expectOp(".", "'.get(' after os.environ");
      const get = this.tok;
      if (get.kind !== "name" || get.text !== "get") {
        this.fail("only os.environ.get(...) reads the environment", get);
      }
      this.i++;
    } else if (!(member.kind === "name" && member.text === "getenv")) {
      this.fail("only os.environ.get(...) and os.getenv(...) are accepted", member);
    } else this.i++;
    this.expectOp("(");
    const nameTok = this.tok;
    const name = this.value(depth + 1);
    if (typeof name !== "string") this.fail("the variable name must be a string", nameTok);
    let fallback: unknown = null;
    if (this.isOp(",")) {
      this.i++;
      if (!this.isOp(")")) fallback = unwrapTuple(this.value(depth + 1));
      if (this.isOp(",")) this.i++;
    }
    this.expectOp(")");
    const found = this.env?.get(name as string);
    return found === undefined ? fallback : found;
  }

  private sequence(close: string, depth: number): unknown[] {
    this.i++;
    const items: unknown[] = [];
    while (!this.isOp(close)) {
      items.push(unwrapTuple(this.value(depth + 1)));
      if (this.isOp(",")) this.i++;
      else if (!this.isOp(close)) {
        this.fail(`expected ',' or '${close}', found ${describe(this.tok)}`);
      }
    }
    this.i++;
    return items;
  }

  /** `( value )` is the value; `()`, `(a,)`, `(a, b)` are tuples (read as lists). */
  private parenthesised(depth: number): unknown {
    this.i++;
    if (this.isOp(")")) {
      this.i++;
      return tuple([]);
    }
    const first = this.value(depth + 1);
    if (this.isOp(")")) {
      this.i++;
      return first;
    }
    const items = [unwrapTuple(first)];
    while (this.isOp(",")) {
      this.i++;
      if (this.isOp(")")) break;
      items.push(unwrapTuple(this.value(depth + 1)));
    }
    this.expectOp(")", "',' or ')'");
    return tuple(items);
  }

  private dict(depth: number): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    while (!this.isOp("}")) {
      const keyTok = this.tok;
      if (this.isOp("**")) this.fail("dict unpacking (**) is not accepted");
      const key = this.value(depth + 1);
      if (typeof key !== "string" && typeof key !== "number") {
        this.fail("dict keys must be strings or numbers", keyTok);
      }
      const name = String(key);
      if (name === "__proto__") this.fail('the key "__proto__" is not accepted', keyTok);
      this.expectOp(":");
      Object.defineProperty(out, name, {
        value: unwrapTuple(this.value(depth + 1)),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      if (this.isOp(",")) this.i++;
      else if (!this.isOp("}")) this.fail(`expected ',' or '}', found ${describe(this.tok)}`);
    }
    this.i++;
    if (!isPlainObject(out)) this.fail("not a dict");
    return out;
  }
}

const KEYWORDS = new Set([
  "False",
  "None",
  "True",
  "and",
  "as",
  "assert",
  "async",
  "await",
  "break",
  "class",
  "continue",
  "def",
  "del",
  "elif",
  "else",
  "except",
  "finally",
  "for",
  "from",
  "global",
  "if",
  "import",
  "in",
  "is",
  "lambda",
  "nonlocal",
  "not",
  "or",
  "pass",
  "raise",
  "return",
  "try",
  "while",
  "with",
  "yield",
]);

/** A bare tuple (`1, 2`), kept apart from a list until it is assigned. */
const TUPLE = Symbol("tuple");

function tuple(items: unknown[]): unknown[] {
  return Object.assign(items, { [TUPLE]: true });
}

/** Tuples are plain lists once stored. */
function unwrapTuple(value: unknown): unknown {
  return Array.isArray(value) && (value as { [TUPLE]?: boolean })[TUPLE] ? [...value] : value;
}

function describe(tok: Token): string {
  switch (tok.kind) {
    case "end":
      return "the end of the file";
    case "newline":
      return "the end of the line";
    case "string":
      return "a string";
    default:
      return `'${tok.text}'`;
  }
}
