/**
 * X-HTTP-Method-Override (ALLOW_OVERRIDE_HTTP_METHOD): a POST carrying the header is
 * executed as the method it names; the effective method is the Hono variable `method`,
 * which every later middleware and route reads (and the request's log fields show).
 *
 * Why: clients and proxies that can send only GET and POST can still PATCH, PUT and
 * DELETE. Only POST is overridden, so a GET a crawler sends never becomes a write.
 *
 * ```ts
 * app.use("*", methodOverride(true));
 * // POST /people/1 with `X-HTTP-Method-Override: PATCH` is routed as PATCH
 * ```
 */
import type { Context, MiddlewareHandler } from "hono";
import { HttpError } from "../errors.ts";
import type { AppEnv } from "../env.ts";

/** The request's log records name `method` (the request log sets their fields first). */
function logAs(c: Context<AppEnv>, method: string): void {
  const fields = c.get("logFields");
  if (fields) fields.method = method;
}

const OVERRIDABLE = new Set(["GET", "HEAD", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"]);

/**
 * Executes a POST carrying `X-HTTP-Method-Override: <METHOD>` as that method. Only POST is
 * overridden: a GET or HEAD (which proxies, prefetchers and crawlers send freely) never
 * becomes a write, so the header on any other method is refused.
 */
export function methodOverride(enabled: boolean): MiddlewareHandler<AppEnv> {
  return function methodOverride(c, next) {
    const override = enabled ? c.req.header("x-http-method-override") : undefined;
    if (override) {
      const method = override.trim().toUpperCase();
      if (!OVERRIDABLE.has(method)) {
        throw new HttpError(400, `X-HTTP-Method-Override: unknown method "${override}"`);
      }
      const actual = c.req.method.toUpperCase();
      if (actual !== "POST" && method !== actual) {
        throw new HttpError(400, "X-HTTP-Method-Override is only honoured on POST requests");
      }
      c.set("method", method);
      logAs(c, method);
    } else {
      const method = c.req.method.toUpperCase();
      c.set("method", method);
      if (method !== c.req.method) logAs(c, method);
    }
    return next();
  };
}
