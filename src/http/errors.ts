/**
 * The HTTP layer's errors, and the one place where every other error a request can raise
 * (service errors, query errors, store errors) becomes a status and a body. Event hooks of
 * an embedding app may throw an `HttpError` to answer with a status of their choosing.
 */
import { QueryError } from "../query/errors.ts";
import { ServiceError, type ServiceErrorKind } from "../services/errors.ts";
import type { Settings } from "../settings/check.ts";
import {
  InvalidQueryError,
  PartialWriteError,
  QueryTimeoutError,
  StoreError,
  WriteConcernError,
} from "../store/store.ts";
import { idToString } from "../services/meta.ts";
import { SlowBodyError } from "../util/body_rate.ts";
import type { DataAccess } from "../services/data.ts";

/** An answer with a status; `extra` adds body fields and headers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: {
      /** Extra top-level body fields (e.g. `_issues`, `_items`). */
      body?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/**
 * The client stopped sending its body (connection reset, aborted upload). Answered 400
 * (nobody may read it) and logged once at info, never as a server error.
 */
export class ClientAbortError extends HttpError {
  constructor() {
    super(400, "the request body was not received completely");
    this.name = "ClientAbortError";
  }
}

/** Standard reason phrases: the messages of error bodies. */
export const REASONS: Record<number, string> = {
  100: "Continue",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  206: "Partial Content",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Payload Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  422: "Unprocessable Entity",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The status of each service error kind (validation: VALIDATION_ERROR_STATUS). */
const STATUS: Record<Exclude<ServiceErrorKind, "validation">, number> = {
  "bad-request": 400,
  "unauthorized": 401,
  "forbidden": 403,
  "not-found": 404,
  "method-not-allowed": 405,
  "conflict": 409,
  "precondition-failed": 412,
  "too-large": 413,
  "unsupported-media-type": 415,
  "precondition-required": 428,
  "unavailable": 503,
};

/**
 * The answer to `error`: an `HttpError` for every failure the client should hear about, or
 * null for an internal failure (the caller logs it and answers 500 with a generic body).
 * Store errors were logged already, with the request's fields, by the logged store.
 */
export function httpErrorOf(error: unknown, settings: Settings): HttpError | null {
  if (error instanceof HttpError) return error;
  if (error instanceof SlowBodyError) {
    // The rest of the body is not read: the connection is to be closed after the answer (the
    // reverse proxy in front closes the client's).
    return new HttpError(408, error.message, { headers: { connection: "close" } });
  }
  if (error instanceof ServiceError) {
    const status = error.kind === "validation"
      ? settings.VALIDATION_ERROR_STATUS
      : STATUS[error.kind];
    const body = { ...error.body };
    if (error.issues) body[settings.ISSUES] = error.issues;
    return new HttpError(status, error.message, { body, headers: error.headers });
  }
  if (error instanceof QueryError) return new HttpError(400, error.message);
  if (error instanceof InvalidQueryError) {
    // The embedded engine's own text can quote internals: only a reason the store vouches
    // for (the MongoDB server's) is passed on.
    return new HttpError(
      400,
      error.reason
        ? `The database refused this query: ${error.reason}`
        : "The database could not run this query: check the where, sort, projection, " +
          "embedded and aggregate parameters.",
    );
  }
  if (error instanceof QueryTimeoutError) {
    return new HttpError(
      503,
      `The query took longer than ${settings.QUERY_TIMEOUT_MS} ms (QUERY_TIMEOUT_MS); ` +
        "narrow it or try again later.",
    );
  }
  if (error instanceof PartialWriteError) {
    const ids = error.remaining.map((id) => idToString(id)).join(", ");
    return new HttpError(
      503,
      "The documents could not all be stored, and removing the ones that were failed too: " +
        `these documents may remain stored: ${ids}. Check them, then try again.`,
    );
  }
  // The deployment cannot acknowledge the write concern configured: the server's fault
  // (logged with its reason), not the client's, and nothing to retry.
  if (error instanceof WriteConcernError) {
    return new HttpError(500, "The server could not complete the request.");
  }
  if (error instanceof StoreError) {
    return new HttpError(503, "The database is not available; try again later.");
  }
  return null;
}

/**
 * The in-process API answering as HTTP would: a call rejects with the `HttpError` the same
 * request over HTTP would get (an internal failure stays as it is).
 */
export function withHttpErrors(data: DataAccess, settings: Settings): DataAccess {
  const mapped =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) => (...args: A): Promise<R> =>
      call(...args).catch((error) => {
        throw httpErrorOf(error, settings) ?? error;
      });
  return {
    get: mapped(data.get),
    post: mapped(data.post),
    patch: mapped(data.patch),
    put: mapped(data.put),
    delete: mapped(data.delete),
  };
}
