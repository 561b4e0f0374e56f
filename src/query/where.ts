/**
 * The `where` query parameter: JSON form (`{"name": "x"}`) or expression form
 * (`name == "x" and age > 3`), turned into a checked MongoDB filter.
 */
import type { SchemaModel } from "../domain/schema.ts";
import type { Filter } from "../store/store.ts";
import { QueryError } from "./errors.ts";
import { parseExpression } from "./expression.ts";
import { checkFilter } from "./filter-check.ts";
import type { ExpressionLimits } from "./sandbox.ts";
import { checkLength, DEFAULT_MAX_DEPTH, DEFAULT_MAX_LENGTH, parseJsonParam } from "./json.ts";
import { isPlainObject } from "../util/plain.ts";

/** How `where` is parsed and checked for one resource. */
export interface WhereOptions {
  /**
   * The resource's schema model: the fields a filter may name (key and meta fields
   * included) and the types their values are read as.
   */
  model: SchemaModel;
  /** DATE_FORMAT, named in error messages. */
  dateFormat: string;
  /** Parses a DATE_FORMAT string (or one in `format`); null when it does not fit. */
  parseDate(s: string, format?: string): Date | null;
  /** ALLOWED_FILTERS: filterable field names; `"*"` allows all. */
  allowedFilters: string[];
  /** VALIDATE_FILTERING: fields must exist in the schema and values fit their type. */
  validateFiltering: boolean;
  /** DB_QUERY_BLACKLIST, e.g. `["$where", "$regex"]`. */
  blacklist: string[];
  /** `$expr` limits (QUERY_MAX_RANGE, QUERY_EXPR_MAX_ELEMENTS); defaults when absent. */
  expressionLimits?: ExpressionLimits;
  /** Maximum length of the raw parameter (default 10 000). */
  maxLength?: number;
  /** Maximum nesting depth (default 32). */
  maxDepth?: number;
  /** `query_objectid_as_string`: 24-hex strings stay strings, even on objectid fields. */
  objectIdAsString?: boolean;
}

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
    objectIdAsString: opts.objectIdAsString,
    expressionLimits: opts.expressionLimits,
    param: "where",
  });
}
