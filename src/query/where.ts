/**
 * The `where` query parameter: JSON form (`{"name": "x"}`) or expression form
 * (`name == "x" and age > 3`), turned into a checked MongoDB filter.
 */
import type { Filter } from "../store/store.ts";
import { QueryError } from "./errors.ts";
import { parseExpression } from "./expression.ts";
import { checkFilter } from "./filter-check.ts";
import type { WhereOptions } from "./options.ts";
import { checkLength, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LENGTH, parseJsonParam } from "./json.ts";
import { isPlainObject } from "../util/plain.ts";

/** How `where` is parsed and checked for one resource. */
export type { WhereOptions } from "./options.ts";

/**
 * Parses and checks a `where` parameter; an empty parameter is the empty filter.
 * @throws QueryError (400) on malformed input, refused operators or fields, bad values.
 */
export function parseWhere(raw: string, opts: WhereOptions): Filter {
  const maxLength = opts.maxLength ?? DEFAULT_MAX_LENGTH;
  const maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
  checkLength("where", raw, maxLength);
  const text = raw.trim();
  if (text === "") return {};
  let parsed: unknown;
  if (text.startsWith("{")) {
    parsed = parseJsonParam("where", raw, { maxLength, maxDepth });
  } else if (text.startsWith("[")) {
    throw new QueryError("where must be a JSON object or an expression", "where", 0);
  } else {
    parsed = parseExpression(raw, {
      parseDate: opts.parseDate,
      dateFormat: opts.dateFormat,
      maxDepth,
    });
  }
  if (!isPlainObject(parsed)) throw new QueryError("where must be a JSON object", "where");
  return checkFilter(parsed, {
    model: opts.model,
    dateFormat: opts.dateFormat,
    parseDate: opts.parseDate,
    allowedFilters: opts.allowedFilters,
    validateFiltering: opts.validateFiltering,
    blacklist: opts.blacklist,
    whitelist: opts.whitelist,
    objectIdAsString: opts.objectIdAsString,
    expressionLimits: opts.expressionLimits,
    references: opts.references,
    param: "where",
  });
}
