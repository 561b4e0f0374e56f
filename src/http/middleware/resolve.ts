/**
 * Works out, once, what each request addresses: its target (`target.ts`: the endpoint
 * kind, the resource, the URL values cast to their types, the query and the JSONP callback
 * asked for), stored on the Hono context as `target`.
 *
 * Why: the path is classified in one place, first in the chain, and everything after it
 * reads the result: the metrics' labels, authentication, and the app's handler, which
 * answers through the table of endpoint kinds (`dispatch.ts`).
 *
 * ```ts
 * app.use("*", resolve(rt, { endpoints, openapi }));
 * app.all("*", (c) => dispatch(c.get("target"), { rt, c, routes }));
 * ```
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";
import { type Endpoints, resolveTarget } from "../target.ts";
import type { Runtime } from "../../services/runtime.ts";

/** Sets `target` on every request's context (see the module comment). */
export function resolve(rt: Runtime, routes: Endpoints): MiddlewareHandler<AppEnv> {
  return function resolve(c, next) {
    c.set("target", resolveTarget(rt, routes, { pathname: c.req.path, url: c.req.url }));
    return next();
  };
}
