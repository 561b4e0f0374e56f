/** The options of `?where` parsing, shared by the parser and the filter checker. */
import type { SchemaModel } from "../domain/schema.ts";
import type { ExpressionLimits } from "./sandbox.ts";
import type { ReferenceVisitor } from "./references.ts";

/** How `?where` is read and checked for one resource. */
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
  /**
   * MONGO_QUERY_WHITELIST / `mongo_query_whitelist`: operators accepted at any depth besides
   * Eve's own query operators; absent: no check by that list.
   */
  whitelist?: string[];
  /** `$expr` limits (QUERY_MAX_RANGE, QUERY_EXPR_MAX_ELEMENTS); defaults when absent. */
  expressionLimits?: ExpressionLimits;
  /** Maximum length of the raw parameter (default 10 000). */
  maxLength?: number;
  /** Maximum nesting depth (default 32). */
  maxDepth?: number;
  /** `query_objectid_as_string`: 24-hex strings stay strings, even on objectid fields. */
  objectIdAsString?: boolean;
  /**
   * Told every field the filter can read (see query/references.ts) once its operators are
   * known good and before any field is checked against the schema, so a field the read policy
   * hides is refused first, by a message that does not name it. Absent: nothing is hidden.
   */
  references?: ReferenceVisitor;
}
