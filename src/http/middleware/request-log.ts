/**
 * Request ids and the write log: every request gets an id (the client's `X-Request-Id`
 * when short and safe, else a new UUID), which every log record of the request carries (the
 * record fields are the Hono variable `logFields`); the response returns it in
 * `X-Request-Id` only when the request carried that id (a proxy in front sets one per
 * request, see deploy/nginx.conf). POST, PATCH and PUT are logged with the client address,
 * URL and method.
 *
 * Why: one id ties a client's report to the service's log records of that request. A
 * generated id is not sent back: two requests for the same URL (a HEAD and a GET) then get
 * the same headers, as in Eve, and the proxy's id is the one a client sees anyway.
 *
 * ```ts
 * app.use("*", requestLog(log));
 * // X-Request-Id: abc-1 in, X-Request-Id: abc-1 out, {"requestid":"abc-1",...} in the logs
 * ```
 */
import type { Context, MiddlewareHandler } from "hono";
import type { Logger, RequestFields } from "../../log.ts";
import type { AppEnv } from "../env.ts";
import { clientIp } from "../client-address.ts";
import { isWhole, lateFields } from "../answer_fields.ts";

const LOGGED = new Set(["POST", "PATCH", "PUT"]);

/** A client's `X-Request-Id` is kept only when short and made of safe characters. */
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the client's `X-Request-Id` when safe, else a new UUID), puts
 * it in every log record of the request and, when it is the client's, in the response's
 * `X-Request-Id`; logs POST, PATCH and PUT operations with `clientip`, `url` and `method`.
 */
export function requestLog(log: Logger): MiddlewareHandler<AppEnv> {
  return function requestLog(c, next) {
    const sent = c.req.header("x-request-id");
    const echoed = sent !== undefined && SAFE_ID.test(sent);
    const requestid = echoed ? sent : crypto.randomUUID();
    const clientip = clientIp(c);
    // Rendered answers are made with it (answer_fields.ts); others get it below.
    if (echoed) lateFields(c).headers["x-request-id"] = requestid;
    // The method-override middleware updates `method`; the route hands the fields to the
    // request's services (`requestRuntime`).
    const fields: RequestFields = { requestid, clientip, url: c.req.url, method: c.req.method };
    c.set("logFields", fields);
    const done = next();
    // A GET or HEAD with no id to echo leaves nothing to do afterwards (it is not logged, and
    // only a POST may become another method): the chain below is the step's answer, with no
    // async step of its own (~0.5 KiB and a few microtasks per request).
    if (!echoed && (fields.method === "GET" || fields.method === "HEAD")) return done;
    return afterwards(c, log, done, { echoed, requestid, clientip });
  };
}

/** The request log's work once the chain below has answered (see {@link requestLog}). */
async function afterwards(
  c: Context<AppEnv>,
  log: Logger,
  done: Promise<void>,
  request: { echoed: boolean; requestid: string; clientip: string },
): Promise<void> {
  const { echoed, requestid, clientip } = request;
  await done;
  if (echoed && !isWhole(c.res)) c.res.headers.set("x-request-id", requestid);
  const method = c.get("method") ?? c.req.method;
  if (!LOGGED.has(method)) return;
  log.log("info", `${method} ${c.req.path} ${c.res.status}`, {
    clientip,
    url: c.req.url,
    method,
    requestid,
    status: c.res.status,
  });
}
