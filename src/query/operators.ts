/**
 * MongoDB query operator vocabulary known to the `where` checker.
 */

/** Comparison operators. */
const COMPARISON_OPERATORS = [
  "$eq",
  "$ne",
  "$gt",
  "$gte",
  "$lt",
  "$lte",
];

/** Geospatial operators and their argument keywords. */
const GEO_OPERATORS = [
  "$near",
  "$nearSphere",
  "$geoWithin",
  "$geoIntersects",
  "$geometry",
  "$box",
  "$center",
  "$centerSphere",
  "$polygon",
  "$maxDistance",
  "$minDistance",
];

/** Operators that combine whole sub-queries. */
export const LOGICAL_OPERATORS: ReadonlySet<string> = new Set(["$and", "$or", "$nor"]);

/** Operators whose argument is checked only for blacklisted operators, never type-checked. */
export const OPAQUE_OPERATORS: ReadonlySet<string> = new Set([
  "$expr",
  "$jsonSchema",
  "$text",
  "$where",
  "$comment",
  ...GEO_OPERATORS,
]);

/** Every operator MongoDB accepts in a query filter. */
export const QUERY_OPERATORS: ReadonlySet<string> = new Set([
  ...COMPARISON_OPERATORS,
  "$in",
  "$nin",
  "$and",
  "$or",
  "$nor",
  "$not",
  "$exists",
  "$type",
  "$expr",
  "$jsonSchema",
  "$mod",
  "$regex",
  "$options",
  "$text",
  "$search",
  "$language",
  "$caseSensitive",
  "$diacriticSensitive",
  "$where",
  "$all",
  "$elemMatch",
  "$size",
  "$bitsAllClear",
  "$bitsAllSet",
  "$bitsAnyClear",
  "$bitsAnySet",
  "$comment",
  ...GEO_OPERATORS,
]);

/** Operators whose argument is a value of the field's type (after coercion). */
export const VALUE_OPERATORS: ReadonlySet<string> = new Set([
  ...COMPARISON_OPERATORS,
]);

/** Operators whose argument is a list of values of the field's type. */
export const LIST_OPERATORS: ReadonlySet<string> = new Set(["$in", "$nin", "$all"]);

/** Operators of a whole query besides the logical ones: valid at query level only. */
export const QUERY_LEVEL_OPERATORS: ReadonlySet<string> = new Set([
  "$text",
  "$where",
  "$expr",
  "$jsonSchema",
  "$comment",
]);

/**
 * Operators that are never a field's condition: those of a whole query and argument
 * keywords of `$text` and of the geospatial operators. MongoDB refuses them inside a field
 * as unknown operators.
 */
export const NOT_FIELD_OPERATORS: ReadonlySet<string> = new Set([
  ...QUERY_LEVEL_OPERATORS,
  "$search",
  "$language",
  "$caseSensitive",
  "$diacriticSensitive",
  "$geometry",
  "$box",
  "$center",
  "$centerSphere",
  "$polygon",
]);

/** Legacy distance bounds: a field condition only beside `$near` or `$nearSphere`. */
export const NEAR_BOUNDS: ReadonlySet<string> = new Set(["$maxDistance", "$minDistance"]);

/**
 * Server-side JavaScript operators: refused whenever `$where` is blacklisted, since
 * `$function` and `$accumulator` (inside `$expr`) run code just as `$where` does.
 */
export const CODE_OPERATORS: readonly string[] = ["$where", "$function", "$accumulator"];
