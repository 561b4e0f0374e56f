/**
 * Query-parameter parsing: where, sort, projection, paging, embedded.
 */
export { QueryError } from "./errors.ts";
export { type JsonLimits, parseJsonParam } from "./json.ts";
export { parseWhere, type WhereOptions } from "./where.ts";
export { parseSort } from "./sort.ts";
export { effectiveProjection, parseProjection } from "./projection.ts";
export { type Paging, parseEmbedded, parsePaging } from "./paging.ts";
