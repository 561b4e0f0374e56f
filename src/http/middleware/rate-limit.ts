/**
 * Rate limiting (RATE_LIMIT_<METHOD> = [requests, seconds]) as two middlewares:
 *
 * - `rateLimit` counts the request and refuses it with 429 past the limit. It runs after
 *   the method override (the effective method is counted) and after authentication. The
 *   user is read from what the request addresses, its resolved target (`c.get("target")`,
 *   set first in the chain): on an endpoint authentication checks for the method
 *   (`authTarget`, the table in `dispatch.ts`), the account it verified; otherwise the
 *   `Authorization` header (hashed: the secret is never stored), otherwise the client
 *   address. Limits are per method and user, whatever the endpoint (the spec's; Eve's are
 *   global too), so every target is counted, "no endpoint" (404) included.
 * - `rateLimitHeaders` wraps everything after it: it puts `X-RateLimit-Limit`, `-Remaining`
 *   and `-Reset` on every answer of a limited method, errors included, and counts, by
 *   client address, the requests refused before `rateLimit` ran (a bad method override, a
 *   failed authentication), so those are limited too.
 *
 * In src/http/app.ts: `cors`, then `rateLimitHeaders`, then method override and
 * authentication, then `rateLimit`, then the routes.
 */
import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import type { Logger } from "../../log.ts";
import {
  accepted,
  type Hit,
  type Limiter,
  LimiterUnavailable,
  type RateLimitConfig,
  remaining,
} from "../../ratelimit/mod.ts";
import { clientAddress } from "../client-address.ts";
import { HttpError } from "../errors.ts";
import { ruleMethod } from "../../domain/methods.ts";
import type { AppEnv } from "../env.ts";
import { authTarget } from "../dispatch.ts";

export interface RateLimitOptions {
  config: RateLimitConfig;
  /** Null when rate limiting is off (both middlewares then do nothing). */
  limiter: Limiter | null;
  log: Logger;
}

/** Response headers a browser may need to read when rate limiting is on. */
export const RATE_LIMIT_HEADERS = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
];

/** A limiter failure is logged at most this often (every request fails during an outage). */
const LOG_EVERY_MS = 10_000;

/** What `rateLimit` leaves for `rateLimitHeaders`: the hit, or null when not counted. */
type State = Hit | null;

const sha256 = (text: string) => createHash("sha256").update(text).digest("base64url");

/** The counted method (HEAD counts as GET) and its limit, or null when not limited. */
function ruleFor(config: RateLimitConfig, method: string) {
  const counted = ruleMethod(method);
  const rule = Object.hasOwn(config.limits, counted) ? config.limits[counted] : undefined;
  return rule ? { method: counted, ...rule } : null;
}

/**
 * Who `c` is counted for, as a limiter key part: on an endpoint the request's target says
 * authentication checks for `method`, the account it verified (so one user's tokens share
 * a count); otherwise the `Authorization` header as sent (its hash), else the client
 * address.
 */
function userOf(c: Context<AppEnv>, method: string, config: RateLimitConfig): string {
  const account = authTarget(c.get("target"), method) ? c.get("account") : undefined;
  const id = account?.id;
  if (id !== undefined && id !== null) return `account:${sha256(String(id))}`;
  const authorization = c.req.header("authorization");
  if (authorization) return `auth:${sha256(authorization)}`;
  return `ip:${clientAddress(c, config.trustedProxies)}`;
}

/** Seconds until `resetAt`, at least 1. */
const secondsUntil = (resetAt: number) => Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));

function headersOf(hit: Hit): Record<string, string> {
  return {
    "x-ratelimit-limit": String(hit.limit),
    "x-ratelimit-remaining": String(remaining(hit)),
    "x-ratelimit-reset": String(Math.ceil(hit.resetAt / 1000)),
  };
}

/**
 * Counts one hit of `counted.user` under `counted.rule`; throws 429 past the limit, or 503
 * per the outage policy.
 */
function counter(options: RateLimitOptions) {
  const { config, limiter, log } = options;
  let lastLogged = -Infinity;
  return async function count(
    c: Context<AppEnv>,
    counted: { rule: NonNullable<ReturnType<typeof ruleFor>>; user: string },
  ): Promise<State> {
    const { rule, user } = counted;
    let hit: Hit;
    try {
      hit = await limiter!.hit(`${config.prefix}${rule.method}:${user}`, rule);
    } catch (error) {
      if (!(error instanceof LimiterUnavailable)) throw error;
      if (Date.now() - lastLogged >= LOG_EVERY_MS) {
        lastLogged = Date.now();
        log.log("error", `rate limiting unavailable (policy: ${config.onRedisError})`, {
          ...c.get("logFields"),
          error: error.message,
        });
      }
      c.set("rateLimit", null);
      if (config.onRedisError === "refuse") {
        throw new HttpError(503, "Rate limiting is unavailable; try again later.", {
          headers: { "retry-after": "1" },
        });
      }
      return null;
    }
    c.set("rateLimit", hit);
    if (!accepted(hit)) {
      throw new HttpError(429, "Request limit exceeded", {
        headers: { ...headersOf(hit), "retry-after": String(secondsUntil(hit.resetAt)) },
      });
    }
    return hit;
  };
}

/** Counts the request per user and method; 429 past the limit (see the module comment). */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler<AppEnv> {
  const count = counter(options);
  const { config, limiter } = options;
  return async function rateLimit(c, next) {
    const method = c.get("method") ?? c.req.method;
    const rule = limiter && ruleFor(config, method);
    if (rule) await count(c, { rule, user: userOf(c, method, config) });
    await next();
  };
}

/** Rate-limit headers on every answer of a limited method (see the module comment). */
export function rateLimitHeaders(options: RateLimitOptions): MiddlewareHandler<AppEnv> {
  const count = counter(options);
  const { config, limiter } = options;
  return async function rateLimitHeaders(c, next) {
    await next();
    const rule = limiter && ruleFor(config, c.get("method") ?? c.req.method.toUpperCase());
    if (!rule) return;
    let state = c.get("rateLimit");
    if (state === undefined) {
      // Refused before `rateLimit` ran: counted by address (an unverified credential is no
      // identity), and answered 429 past the limit like any other request.
      state = await count(c, {
        rule,
        user: `ip:${clientAddress(c, config.trustedProxies)}`,
      });
    }
    if (!state) return;
    for (const [name, value] of Object.entries(headersOf(state))) c.res.headers.set(name, value);
  };
}
