/**
 * Documents and queries in MongoDB dialect: the types every layer speaks (the data layer,
 * the query layer, the resource domain), and the error a malformed query raises.
 */

/** A stored document. */
export type Doc = Record<string, unknown>;
/** A MongoDB query filter. */
export type Filter = Doc;
/** A MongoDB sort specification, in key order. */
export type Sort = Record<string, 1 | -1>;
/** A MongoDB projection (inclusive or exclusive). */
export type Projection = Record<string, 0 | 1>;

/**
 * Thrown when the store refuses a query, update or pipeline as malformed (a client mistake
 * that got past the query layer, e.g. `{"$in": 5}`); the HTTP layer answers 400.
 */
export class InvalidQueryError extends Error {
  /**
   * The database server's own reason, fit to show a client (MongoDB's `errmsg`, scrubbed
   * and bounded); absent when the engine's text is not (the embedded engine's internals).
   */
  readonly reason?: string;
  constructor(message: string, options?: ErrorOptions & { reason?: string }) {
    super(message, options);
    this.name = "InvalidQueryError";
    this.reason = options?.reason;
  }
}
