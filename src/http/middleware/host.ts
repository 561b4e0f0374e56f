/**
 * Refuses a request whose `Host` header is not a host name or address (400).
 *
 * Why: the request URL is built from `Host`, so a value holding `/`, `?` or `#` would
 * change the path that gets routed (and what authorisation and the rate limit see).
 *
 * ```ts
 * app.use("*", hostCheck()); // `Host: a/b` -> 400 before any route runs
 * ```
 */
import type { MiddlewareHandler } from "hono";
import { HttpError } from "../errors.ts";
import type { AppEnv } from "../env.ts";

/** A host name or address, with an optional port (RFC 9110 `Host`). */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * Refuses a `Host` header that is not a host name: the request URL is built from it, so a
 * value holding `/`, `?` or `#` would otherwise change the path that gets routed. The
 * service never builds absolute URLs from `Host` either (see PUBLIC_BASE_URL).
 */
export function hostCheck(): MiddlewareHandler<AppEnv> {
  return function hostCheck(c, next) {
    const host = c.req.header("host");
    if (host !== undefined && !HOST.test(host)) {
      throw new HttpError(400, "The Host header is not a valid host name.");
    }
    return next();
  };
}
