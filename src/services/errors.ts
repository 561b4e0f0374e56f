/**
 * The one error type of the service layer (services, routes, authentication, event hooks
 * may throw it too): what went wrong, in the service's words, with no HTTP status. The
 * HTTP layer maps each kind to a status and a body in one place (`http/errors.ts`); the
 * in-process API maps it the same way.
 */
import type { Issues } from "../validation/types.ts";

/** What kind of failure a service reports. */
export type ServiceErrorKind =
  /** The request is malformed (a bad parameter, a body that is not a document ...). */
  | "bad-request"
  /** No credentials, or wrong ones (`headers` carry the challenge). */
  | "unauthorized"
  /** The account may not do this. */
  | "forbidden"
  /** The addressed resource, item or version does not exist (or is hidden). */
  | "not-found"
  /** The endpoint does not take this method (`headers.allow` lists the ones it takes). */
  | "method-not-allowed"
  /** The request clashes with the stored state (an id already taken). */
  | "conflict"
  /** `If-Match` names another representation than the stored one. */
  | "precondition-failed"
  /** An edit without the `If-Match` it needs. */
  | "precondition-required"
  /** The request is larger than a configured bound. */
  | "too-large"
  /** The body's media type is not one the service reads. */
  | "unsupported-media-type"
  /** Documents fail validation (`issues`, or per-document results in `body`). */
  | "validation"
  /** A dependency (the database, Redis) cannot serve the request now. */
  | "unavailable";

/** Options of a {@link ServiceError}. */
export interface ServiceErrorOptions {
  /** The underlying error, kept for the log (never shown to the client). */
  cause?: unknown;
  /** Validation issues by field, as shown (kind "validation"; lists with VALIDATION_ERROR_AS_LIST). */
  issues?: Issues | Readonly<Record<string, unknown>>;
  /** Extra top-level fields of the error body (bulk results, a deleted item ...). */
  body?: Record<string, unknown>;
  /** Headers the answer must carry (`allow`, `www-authenticate`, `etag` ...). */
  headers?: Record<string, string>;
}

/** A failure a service reports: a kind, a message the client may read, and details. */
export class ServiceError extends Error {
  readonly issues?: ServiceErrorOptions["issues"];
  readonly body?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    readonly kind: ServiceErrorKind,
    message: string,
    options: ServiceErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ServiceError";
    this.issues = options.issues;
    this.body = options.body;
    this.headers = options.headers;
  }
}

/** The not-found error, with Eve's wording unless another message is given. */
export function notFound(message = "The requested URL was not found on the server."): ServiceError {
  return new ServiceError("not-found", message);
}

/** The 405-kind error of an endpoint that takes only `allow` (OPTIONS is added). */
export function methodNotAllowed(allow: readonly string[]): ServiceError {
  return new ServiceError(
    "method-not-allowed",
    "The method is not allowed for the requested URL.",
    {
      headers: { allow: [...allow.filter((m) => m !== "OPTIONS"), "OPTIONS"].join(", ") },
    },
  );
}
