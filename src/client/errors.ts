/**
 * The client's one error hierarchy. Every failure a client call reports is a `ClientError`
 * (with the underlying failure as `cause` where there is one):
 *
 *     ClientError
 *     ├── NetworkError            the service could not be reached or the connection broke
 *     ├── AbortedError            the caller's AbortSignal fired
 *     └── ResponseError           the service answered an error status (body and headers kept)
 *         ├── ValidationError     422 (or VALIDATION_ERROR_STATUS): per-field issues
 *         ├── ConflictError       412: the ETag sent is stale; carries the current document
 *         ├── NotFoundError       404
 *         ├── AuthError           401 / 403
 *         ├── RateLimitError      429 still refused after the allowed retries
 *         └── UnavailableError    503 (database unreachable, too many feeds ...), ditto
 */

/** The standard error body of the service. */
export interface ErrorBody {
  _status?: "ERR";
  _error?: { code?: number; message?: string } | string;
  _issues?: Issues;
  _items?: Array<{ _status?: "OK" | "ERR"; _issues?: Issues }>;
  [key: string]: unknown;
}

/** Problems by field name; nested fields nest. */
export interface Issues {
  [field: string]: string | string[] | Issues;
}

/** Per-field issues of a document: its own fields, each with a message (or nested issues). */
export type FieldIssues<T> = { [K in keyof T]?: string | string[] | Issues } & Issues;

/** The root of every error the client throws. */
export class ClientError extends Error {
  override name = "ClientError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The request never got an answer: refused connection, DNS failure, broken stream, time-out. */
export class NetworkError extends ClientError {
  override name = "NetworkError";
  constructor(readonly method: string, readonly url: string, cause: unknown) {
    super(`${method} ${url}: the service could not be reached (${describe(cause)})`, { cause });
  }
}

/** The caller aborted the call through its AbortSignal; `cause` is the signal's reason. */
export class AbortedError extends ClientError {
  override name = "AbortedError";
  constructor(readonly method: string, readonly url: string, cause: unknown) {
    super(`${method} ${url}: aborted`, { cause });
  }
}

/** The service answered with an error status. */
export class ResponseError extends ClientError {
  override name = "ResponseError";
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly headers: Headers,
    readonly body: ErrorBody | undefined,
    message?: string,
  ) {
    super(`${method} ${url}: ${status} ${message ?? errorMessage(body) ?? ""}`.trimEnd());
  }

  /** The service's own message (`_error.message`), when the body has one. */
  get serviceMessage(): string | undefined {
    return errorMessage(this.body);
  }
}

/**
 * A document failed validation. `issues` holds the single document's problems by field;
 * for a bulk create, `items` holds one entry per document sent (`issues` is then the first
 * failing document's).
 */
export class ValidationError<T = Record<string, unknown>> extends ResponseError {
  override name = "ValidationError";
  readonly issues: FieldIssues<T>;
  readonly items: Array<{ status: "OK" | "ERR"; issues: FieldIssues<T> }>;
  constructor(method: string, url: string, status: number, headers: Headers, body: ErrorBody) {
    super(method, url, status, headers, body);
    this.items = (body._items ?? []).map((item) => ({
      status: item._status === "OK" ? "OK" : "ERR",
      issues: (item._issues ?? {}) as FieldIssues<T>,
    }));
    this.issues = (body._issues ?? this.items.find((i) => i.status === "ERR")?.issues ??
      {}) as FieldIssues<T>;
  }
}

/**
 * The document changed since it was read (412: the ETag sent is not the current one).
 * `current` is the document as it is now (null when it could not be read again, for
 * example because it was deleted meanwhile): apply the change to it and try again.
 */
export class ConflictError<D = Record<string, unknown>> extends ResponseError {
  override name = "ConflictError";
  constructor(
    method: string,
    url: string,
    headers: Headers,
    body: ErrorBody | undefined,
    readonly current: D | null,
  ) {
    super(method, url, 412, headers, body);
  }
}

/** 404: no such item (or resource, or file). */
export class NotFoundError extends ResponseError {
  override name = "NotFoundError";
}

/** 401 (no or bad credentials) or 403 (the account lacks a role). */
export class AuthError extends ResponseError {
  override name = "AuthError";
}

/**
 * 429 still refused after the client's bounded retries; `retryAfterMs` is what the service
 * last asked the client to wait, when it said.
 */
export class RateLimitError extends ResponseError {
  override name = "RateLimitError";
  retryAfterMs: number | null = null;
}

/**
 * 503: the service can't serve now (its database is unreachable, too many open feeds,
 * rate limiting unavailable), still so after the retries the client was allowed;
 * `retryAfterMs` as for RateLimitError.
 */
export class UnavailableError extends ResponseError {
  override name = "UnavailableError";
  retryAfterMs: number | null = null;
}

function errorMessage(body: ErrorBody | undefined): string | undefined {
  const error = body?._error;
  if (typeof error === "string") return error;
  return typeof error?.message === "string" ? error.message : undefined;
}

function describe(cause: unknown): string {
  if (cause instanceof Error) return cause.message || cause.name;
  return String(cause);
}
