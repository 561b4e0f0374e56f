import type { MiddlewareHandler } from "hono";
import { type Logger, withLogContext } from "../../log.ts";
import type { AppEnv } from "../app.ts";

const LOGGED = new Set(["POST", "PATCH", "PUT"]);

/** The client address: the socket peer given by the server, else "unknown". */
export function clientIp(c: { env: unknown }): string {
  const info = (c.env as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr;
  return info?.hostname ?? "unknown";
}

/** Logs POST, PATCH and PUT operations with `clientip`, `url` and `method`. */
export function requestLog(log: Logger): MiddlewareHandler<AppEnv> {
  return async function requestLog(c, next) {
    await withLogContext({
      clientip: clientIp(c),
      url: c.req.url,
      // The method-override middleware runs later, so the method is read when logged.
      get method() {
        return c.get("method") ?? c.req.method;
      },
    }, next);
    const method = c.get("method") ?? c.req.method;
    if (!LOGGED.has(method)) return;
    log.log("info", `${method} ${new URL(c.req.url).pathname} ${c.res.status}`, {
      clientip: clientIp(c),
      url: c.req.url,
      method,
      status: c.res.status,
    });
  };
}
