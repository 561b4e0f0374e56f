/**
 * Authentication and authorisation in front of the routes (AUTH_SCHEMES, the resources'
 * `public_methods`, `allowed_roles` and their item and read variants): a public target
 * passes; any other needs valid credentials (401, with the schemes' challenges) and one of
 * the allowed roles (403). The account goes on the Hono variable `account` and on the
 * request, where routes, hooks and the rate limit find it.
 *
 * Why a middleware: every endpoint, the media, schema and change-feed endpoints included,
 * is guarded in one place, before any of its work (a body is not read for a request that
 * will be refused).
 *
 * ```ts
 * app.use("*", resolve(rt, routes)); // sets the request's target, which this reads
 * app.use("*", authenticate(auth));
 * app.get("/people", (c) => c.json(c.get("account"))); // only reached when allowed
 * ```
 */
import type { MiddlewareHandler } from "hono";
import { HttpError } from "../errors.ts";
import type { Auth } from "../../auth/mod.ts";
import { CREDENTIAL_PARAMS } from "../../auth/credentials.ts";
import { setAccount } from "../../auth/types.ts";
import type { AppEnv } from "../env.ts";
import { authTarget } from "../dispatch.ts";

/**
 * Authenticates and authorises each request before it reaches a route: public targets
 * pass; others need valid credentials (401) and one of the allowed roles (403). The account
 * goes on the Hono variable `account` and on the request (`accountOf(request)`).
 * What the request addresses is its resolved target (`c.get("target")`, `dispatch.ts` says
 * what each kind guards; nothing for no endpoint: the route answers 404).
 */
export function authenticate(auth: Auth): MiddlewareHandler<AppEnv> {
  return async function authenticate(c, next) {
    const target = c.get("target");
    const { query } = target;
    if (query && CREDENTIAL_PARAMS.some((name) => query.has(name))) {
      throw new HttpError(400, "Credentials are not accepted in the query string.");
    }
    const found = authTarget(target, c.get("method"));
    if (!found) return await next();
    const roles = auth.required(found);
    // The schema and media endpoints answer everyone: what they serve depends on what the
    // requester may read (credentials, when sent, are checked).
    const perDocument = found.kind === "schema" || found.kind === "media";
    const optional = perDocument || roles === null;
    if (optional && (!perDocument || !c.req.header("authorization"))) {
      return await next();
    }
    const account = await auth.authenticate(c.req.raw, found, c.get("logFields"));
    if (roles !== null && !perDocument) auth.authorize(account, roles);
    c.set("account", account);
    setAccount(c.req.raw, account);
    await next();
  };
}
