/**
 * Recursive-descent parser of the `where` expression form, producing a MongoDB filter.
 *
 * Grammar (keywords case-insensitive):
 *   or   := and (("or" | "||") and)*
 *   and  := not (("and" | "&&") not)*
 *   not  := ("not" | "!") not | "(" or ")" | cmp
 *   cmp  := NAME ("==" | "!=" | "<" | "<=" | ">" | ">=") value | NAME ["not"] "in" list
 *   value:= STRING | NUMBER | true | false | null | list | datetime "(" STRING ")"
 *         | ObjectId "(" STRING ")" | NAME
 *
 * A bare NAME as a value is its text, a string (`role == agent`), as Eve's parser reads it.
 *   list := "[" [value ("," value)* [","]] "]"
 */
import { forbiddenSegment } from "../domain/keys.ts";
import type { Filter } from "../store/store.ts";
import { type ObjectId, parseObjectId } from "../doc/bson.ts";
import { parseError, QueryError } from "./errors.ts";
import { type Token, tokenize, type TokenKind } from "./lexer.ts";

/** What the expression parser needs besides the text. */
export interface ExpressionOptions {
  /** Parses the argument of `datetime("...")`; null when it does not fit the format. */
  parseDate(s: string): Date | null;
  /** DATE_FORMAT, named in error messages. */
  dateFormat: string;
  /** Maximum nesting of parentheses, `not` and lists. */
  maxDepth: number;
  /** Parameter name used in error messages (default `where`). */
  param?: string;
}

const COMPARISONS: Record<string, string | null> = {
  "==": null,
  "!=": "$ne",
  "<": "$lt",
  "<=": "$lte",
  ">": "$gt",
  ">=": "$gte",
};

/**
 * Parses an expression such as `name == "x" and not (age < 3)` into a MongoDB filter.
 * @throws QueryError with the position of the offending token.
 */
export function parseExpression(src: string, opts: ExpressionOptions): Filter {
  const param = opts.param ?? "where";
  const parser = new Parser(tokenize(src, param), opts, param);
  const filter = parser.or(0);
  parser.expect("end", "end of expression");
  return filter;
}

class Parser {
  private i = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly opts: ExpressionOptions,
    private readonly param: string,
  ) {}

  private get tok(): Token {
    return this.tokens[this.i];
  }

  private fail(what: string, tok = this.tok): QueryError {
    const found = tok.kind === "end" ? "end of expression" : JSON.stringify(tok.text);
    return parseError(this.param, tok.pos, `${what}, found ${found}`);
  }

  expect(kind: TokenKind, what: string): Token {
    const tok = this.tok;
    if (tok.kind !== kind) throw this.fail(`expected ${what}`);
    this.i++;
    return tok;
  }

  private accept(kind: TokenKind): boolean {
    if (this.tok.kind !== kind) return false;
    this.i++;
    return true;
  }

  private nest(depth: number, at: Token): number {
    if (depth >= this.opts.maxDepth) {
      throw parseError(this.param, at.pos, `nesting deeper than ${this.opts.maxDepth} levels`);
    }
    return depth + 1;
  }

  or(depth: number): Filter {
    const parts = [this.and(depth)];
    while (this.accept("or")) parts.push(this.and(depth));
    return parts.length === 1 ? parts[0] : { $or: parts };
  }

  private and(depth: number): Filter {
    const parts = [this.not(depth)];
    while (this.accept("and")) parts.push(this.not(depth));
    return parts.length === 1 ? parts[0] : { $and: parts };
  }

  private not(depth: number): Filter {
    const tok = this.tok;
    if (this.accept("not")) return negate(this.not(this.nest(depth, tok)));
    if (this.accept("(")) {
      const inner = this.or(this.nest(depth, tok));
      this.expect(")", "')'");
      return inner;
    }
    return this.comparison(depth);
  }

  private comparison(depth: number): Filter {
    const nameTok = this.expect("name", "a field name");
    const name = nameTok.text;
    const bad = forbiddenSegment(name);
    if (bad !== undefined) {
      throw this.fail(`field name ${JSON.stringify(bad)} is not allowed`, nameTok);
    }
    const tok = this.tok;
    if (tok.kind === "op") {
      this.i++;
      const value = this.value(depth);
      const op = COMPARISONS[tok.text];
      return { [name]: op === null ? value : { [op]: value } };
    }
    const negated = this.accept("not");
    if (this.accept("in")) {
      const list = this.list(depth);
      return { [name]: { [negated ? "$nin" : "$in"]: list } };
    }
    throw this.fail(negated ? "expected 'in'" : "expected a comparison operator");
  }

  private value(depth: number): unknown {
    const tok = this.tok;
    switch (tok.kind) {
      case "string":
        this.i++;
        return tok.text;
      case "number": {
        this.i++;
        const n = Number(tok.text);
        if (!Number.isFinite(n)) throw this.fail("number out of range", tok);
        return n;
      }
      case "true":
      case "false":
        this.i++;
        return tok.kind === "true";
      case "null":
        this.i++;
        return null;
      case "[":
        return this.list(depth);
      case "datetime":
        return this.datetime();
      case "objectid":
        return this.objectId();
      case "name":
        // As in Eve's parser, a bare name stands for its own text.
        this.i++;
        return tok.text;
    }
    throw this.fail("expected a value");
  }

  private list(depth: number): unknown[] {
    const open = this.expect("[", "'['");
    const inner = this.nest(depth, open);
    const out: unknown[] = [];
    while (!this.accept("]")) {
      out.push(this.value(inner));
      if (!this.accept(",")) {
        this.expect("]", "',' or ']'");
        break;
      }
    }
    return out;
  }

  /** `ObjectId("<24 hex digits>")`, as Eve's Python expressions write an id. */
  private objectId(): ObjectId {
    this.i++;
    this.expect("(", "'(' after ObjectId");
    const arg = this.expect("string", "a double-quoted id");
    this.expect(")", "')'");
    const id = /^[0-9a-fA-F]{24}$/.test(arg.text) ? parseObjectId(arg.text) : null;
    if (!id) throw parseError(this.param, arg.pos, "ObjectId needs 24 hexadecimal digits");
    return id;
  }

  private datetime(): Date {
    this.i++;
    this.expect("(", "'(' after datetime");
    const arg = this.expect("string", "a double-quoted date string");
    this.expect(")", "')'");
    const date = this.opts.parseDate(arg.text);
    if (!date) {
      throw parseError(
        this.param,
        arg.pos,
        `date ${JSON.stringify(arg.text)} does not match DATE_FORMAT ${this.opts.dateFormat}`,
      );
    }
    return date;
  }
}

/** Negates a filter: per field with `$not` for one comparison, otherwise with `$nor`. */
function negate(filter: Filter): Filter {
  const keys = Object.keys(filter);
  if (keys.length === 1 && !keys[0].startsWith("$")) {
    const field = keys[0];
    const cond = filter[field];
    const isOps = cond !== null && typeof cond === "object" && !Array.isArray(cond) &&
      !(cond instanceof Date);
    if (isOps && Object.keys(cond).length === 1 && "$not" in cond) {
      // MongoDB refuses `$not` inside `$not`: a double negation is the plain condition.
      return { [field]: (cond as Filter).$not };
    }
    return { [field]: { $not: isOps ? cond : { $eq: cond } } };
  }
  return { $nor: [filter] };
}
