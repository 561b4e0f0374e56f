/**
 * The one error type of the query layer: every client mistake in a query parameter.
 */

/** A malformed or refused query parameter; the HTTP layer answers `status` (400). */
export class QueryError extends Error {
  /** HTTP status to answer with. */
  status = 400;

  constructor(
    message: string,
    /** Query parameter at fault (`where`, `sort`, ...), when known. */
    readonly param?: string,
    /** 0-based character position of a parse error, when known. */
    readonly position?: number,
  ) {
    super(message);
    this.name = "QueryError";
  }
}

/** Builds a parse error whose message names the parameter and the character position. */
export function parseError(param: string, position: number, what: string): QueryError {
  return new QueryError(`invalid ${param}: ${what} at position ${position}`, param, position);
}
