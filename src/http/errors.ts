/**
 * The one exception type of the HTTP layer. Services and hooks throw it; the app's error
 * handler turns it (and anything else) into a response in one place.
 */

export type Issues = { [field: string]: string | Issues };

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

/** Standard reason phrases for the statuses the service answers with. */
export const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  409: "Conflict",
  412: "Precondition Failed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  428: "Precondition Required",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

export const notFound = (message = "The requested URL was not found on the server.") =>
  new HttpError(404, message);
