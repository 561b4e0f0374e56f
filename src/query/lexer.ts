/**
 * Tokenizer of the `where` expression form (`name == "x" and age > 3`).
 */
import { parseError } from "./errors.ts";
import { readQuotedString } from "./json.ts";

/** Token kinds produced by {@link tokenize}. */
export type TokenKind =
  | "name"
  | "string"
  | "number"
  | "op" // == != < <= > >=
  | "and"
  | "or"
  | "not"
  | "in"
  | "true"
  | "false"
  | "null"
  | "datetime"
  | "objectid"
  | "("
  | ")"
  | "["
  | "]"
  | ","
  | "end";

/** One token with its source position. */
export interface Token {
  kind: TokenKind;
  /** The name, the decoded string, the operator, or the number's source text. */
  text: string;
  pos: number;
}

const KEYWORDS: Record<string, TokenKind> = {
  and: "and",
  or: "or",
  not: "not",
  in: "in",
  true: "true",
  false: "false",
  null: "null",
  datetime: "datetime",
};
/** Python spellings accepted as well, case-sensitively, as Eve's examples use them. */
const PY_LITERALS: Record<string, TokenKind> = {
  None: "null",
  True: "true",
  False: "false",
  ObjectId: "objectid",
};

const NAME_RE = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*/y;
const NUMBER_RE = /-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const SYMBOLS: Array<[string, TokenKind]> = [
  ["==", "op"],
  ["!=", "op"],
  ["<=", "op"],
  [">=", "op"],
  ["&&", "and"],
  ["||", "or"],
  ["<", "op"],
  [">", "op"],
  ["!", "not"],
  ["(", "("],
  [")", ")"],
  ["[", "["],
  ["]", "]"],
  [",", ","],
];

/** Splits an expression into tokens; the last one is always `end`. */
export function tokenize(src: string, param = "where"): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  outer: while (i < src.length) {
    const c = src[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    if (c === '"') {
      const { value, end } = readQuotedString(param, src, i);
      tokens.push({ kind: "string", text: value, pos: i });
      i = end;
      continue;
    }
    if (c === "'") throw parseError(param, i, "single quotes are not allowed");
    NUMBER_RE.lastIndex = i;
    const num = /[-.\d]/.test(c) ? NUMBER_RE.exec(src) : null;
    if (num) {
      tokens.push({ kind: "number", text: num[0], pos: i });
      i += num[0].length;
      continue;
    }
    NAME_RE.lastIndex = i;
    const name = NAME_RE.exec(src);
    if (name) {
      const word = name[0];
      const kind = KEYWORDS[word.toLowerCase()] ?? PY_LITERALS[word] ?? "name";
      tokens.push({ kind, text: word, pos: i });
      i += word.length;
      continue;
    }
    for (const [sym, kind] of SYMBOLS) {
      if (src.startsWith(sym, i)) {
        tokens.push({ kind, text: sym, pos: i });
        i += sym.length;
        continue outer;
      }
    }
    if (c === "=") throw parseError(param, i, "use '==' to compare");
    throw parseError(param, i, `unexpected character ${JSON.stringify(c)}`);
  }
  tokens.push({ kind: "end", text: "", pos: src.length });
  return tokens;
}
