/**
 * The `sort` query parameter: `-a,b`, Eve's tuple list `[("a", 1), ("b", -1)]` or JSON
 * `[["a", 1], ["b", -1]]`.
 */
import type { Sort } from "../store/store.ts";
import { parseError, QueryError } from "./errors.ts";
import { checkLength, readQuotedString } from "./json.ts";
import { forbiddenSegment } from "../domain/keys.ts";

/** Maximum number of sort keys accepted. */
export const MAX_SORT_FIELDS = 32;
const MAX_SORT_LENGTH = 2_000;
const FIELD_RE = /^[^$\s.][^\s]*$/;

/**
 * Parses a sort parameter into a MongoDB sort, keys in the given order.
 * @throws QueryError (400) on bad syntax, bad direction, duplicate or invalid field names.
 */
export function parseSort(raw: string): Sort {
  checkLength("sort", raw, MAX_SORT_LENGTH);
  const text = raw.trim();
  if (text === "") throw new QueryError("sort is empty", "sort", 0);
  const pairs = text.startsWith("[") ? parseListForm(raw) : parseCommaForm(raw);
  if (pairs.length > MAX_SORT_FIELDS) {
    throw new QueryError(`sort has more than ${MAX_SORT_FIELDS} fields`, "sort");
  }
  const sort: Sort = {};
  for (const [field, dir, pos] of pairs) {
    if (
      !FIELD_RE.test(field) || field.endsWith(".") || field.includes("..") ||
      field.includes(".$")
    ) {
      throw parseError("sort", pos, `invalid field name ${JSON.stringify(field)}`);
    }
    const bad = forbiddenSegment(field);
    if (bad !== undefined) {
      throw parseError("sort", pos, `field name ${JSON.stringify(bad)} is not allowed`);
    }
    if (Object.hasOwn(sort, field)) {
      throw parseError("sort", pos, `duplicate or invalid field ${JSON.stringify(field)}`);
    }
    sort[field] = dir;
  }
  return sort;
}

type Pair = [field: string, dir: 1 | -1, pos: number];

function parseCommaForm(raw: string): Pair[] {
  const pairs: Pair[] = [];
  let pos = 0;
  for (const part of raw.split(",")) {
    const lead = part.length - part.trimStart().length;
    let name = part.trim();
    const at = pos + lead;
    if (name.includes('"') || name.includes("'")) {
      const q = part.search(/["']/);
      throw parseError(
        "sort",
        pos + q,
        part[q] === "'" ? "single quotes are not allowed" : "unexpected '\"'",
      );
    }
    let dir: 1 | -1 = 1;
    if (name.startsWith("-")) {
      dir = -1;
      name = name.slice(1);
    } else if (name.startsWith("+")) {
      name = name.slice(1);
    }
    if (name === "") throw parseError("sort", at, "empty field name");
    pairs.push([name, dir, at]);
    pos += part.length + 1;
  }
  return pairs;
}

/** `[("a", 1), ("b", -1)]` or `[["a", 1]]`; a trailing comma is tolerated, as in Python. */
function parseListForm(src: string): Pair[] {
  let i = src.indexOf("[") + 1;
  const pairs: Pair[] = [];
  const skip = () => {
    while (i < src.length && /\s/.test(src[i])) i++;
  };
  const expect = (ch: string) => {
    skip();
    if (src[i] !== ch) throw unexpected(src, i, `'${ch}'`);
    i++;
  };
  skip();
  while (src[i] !== "]") {
    const open = src[i];
    if (open !== "(" && open !== "[") throw unexpected(src, i, "'(' or '['");
    i++;
    skip();
    if (src[i] === "'") throw parseError("sort", i, "single quotes are not allowed");
    if (src[i] !== '"') throw unexpected(src, i, "a double-quoted field name");
    const at = i;
    const { value, end } = readQuotedString("sort", src, i);
    i = end;
    expect(",");
    skip();
    const m = /^[+-]?\d+/.exec(src.slice(i, i + 12));
    const dir = m ? Number(m[0]) : NaN;
    if (dir !== 1 && dir !== -1) throw parseError("sort", i, "direction must be 1 or -1");
    i += m![0].length;
    expect(open === "(" ? ")" : "]");
    pairs.push([value, dir, at]);
    skip();
    if (src[i] === ",") {
      i++;
      skip();
    } else if (src[i] !== "]") {
      throw unexpected(src, i, "',' or ']'");
    }
  }
  i++;
  skip();
  if (i < src.length) throw unexpected(src, i, "end of sort");
  if (pairs.length === 0) throw new QueryError("sort is empty", "sort");
  return pairs;
}

function unexpected(src: string, i: number, what: string): QueryError {
  if (src[i] === "'") return parseError("sort", i, "single quotes are not allowed");
  const found = i < src.length ? JSON.stringify(src[i]) : "end of input";
  return parseError("sort", i, `expected ${what}, found ${found}`);
}
