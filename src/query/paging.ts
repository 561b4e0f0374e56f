/**
 * The `page`, `max_results` and `embedded` query parameters.
 */
import { QueryError } from "./errors.ts";
import { parseJsonParam } from "./json.ts";
import { isPlainObject } from "../util/plain.ts";

/** Page number (1-based) and page size of a collection GET. */
export interface Paging {
  page: number;
  maxResults: number;
}

/**
 * The largest number of documents a page may skip: MongoDB counts `skip` in 32-bit
 * integers in places, so both stores stop here and answer the same.
 */
export const MAX_PAGE_OFFSET = 2 ** 31 - 1;

/**
 * Reads `page` and `max_results`; absent or empty parameters take the defaults, and a
 * `max_results` above the limit is clamped to it, as Eve does.
 * @throws QueryError (400) for non-integers, `page` < 1, `max_results` < 1, or a page that
 *   would skip more than MAX_PAGE_OFFSET documents (one message however large).
 */
export function parsePaging(
  params: { page?: string; max_results?: string },
  opts: { default: number; limit: number },
): Paging {
  const requested = readInt("max_results", params.max_results) ?? opts.default;
  if (requested < 1) throw new QueryError("max_results must be 1 or more", "max_results");
  const maxResults = Math.min(requested, opts.limit);
  const lastPage = Math.floor(MAX_PAGE_OFFSET / maxResults) + 1;
  const tooLarge = () =>
    new QueryError(
      `page is too large: with max_results ${maxResults} the last page there can be is ` +
        `${lastPage}`,
      "page",
    );
  const page = readInt("page", params.page, tooLarge) ?? 1;
  if (page < 1) throw new QueryError("page must be 1 or more", "page");
  if (page > lastPage) throw tooLarge();
  return { page, maxResults };
}

/** An integer parameter; `tooLarge` makes the error for an integer too large to read. */
function readInt(
  param: string,
  raw: string | undefined,
  tooLarge?: () => QueryError,
): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const text = raw.trim();
  if (tooLarge && /^\+?\d{16,}$/.test(text) && !Number.isSafeInteger(Number(text))) {
    throw tooLarge();
  }
  const n = /^[+-]?\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new QueryError(`${param} must be an integer`, param);
  return n;
}

/**
 * Parses the `embedded` parameter: a JSON object field -> 1 (embed) or 0 (opt out of
 * default embedding). Dotted names reach nested references.
 * @throws QueryError (400) when it is not such an object.
 */
export function parseEmbedded(raw: string): Record<string, 0 | 1> {
  let parsed: unknown;
  try {
    parsed = parseJsonParam("embedded", raw, { maxDepth: 1 });
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    throw new QueryError("Unable to parse `embedded` clause: " + error.message, "embedded");
  }
  if (!isPlainObject(parsed)) {
    throw new QueryError("Unable to parse `embedded` clause: not a JSON object", "embedded");
  }
  const entries = Object.entries(parsed);
  if (entries.length > MAX_EMBEDDED_FIELDS) {
    throw new QueryError(`embedded has more than ${MAX_EMBEDDED_FIELDS} fields`, "embedded");
  }
  // As in Eve, only 1 and 0 count; other values, like unknown names, are ignored.
  const flags: Record<string, 0 | 1> = {};
  for (const [field, flag] of entries) {
    if (field.split(".").some((p) => p === "" || p.startsWith("$"))) continue;
    if (flag === 1 || flag === true) flags[field] = 1;
    else if (flag === 0 || flag === false) flags[field] = 0;
  }
  return flags;
}

const MAX_EMBEDDED_FIELDS = 100;
