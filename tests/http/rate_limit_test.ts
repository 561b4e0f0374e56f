/**
 * The rate-limit middlewares around an authentication middleware (as src/http/app.ts
 * chains them): on an endpoint authentication checks (the request's target), the account
 * is the user; elsewhere the header is; failed authentications are counted by address.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { HttpError } from "../../src/http/errors.ts";
import { rateLimit, rateLimitHeaders } from "../../src/http/middleware/rate-limit.ts";
import { MemoryLimiter, rateLimitConfig } from "../../src/ratelimit/mod.ts";
import { createLogger } from "../../src/log.ts";
import { checkSettings } from "../../src/settings/check.ts";
import type { AppEnv } from "../../src/http/app.ts";
import type { Target } from "../../src/http/target.ts";

/** What the resolving middleware would set: the home endpoint at `/`, no endpoint elsewhere. */
function targetOf(path: string): Target {
  const where = { path: path.replace(/^\/+|\/+$/g, ""), query: null, jsonp: null };
  return path === "/" ? { kind: "home", ...where } : { kind: "none", ...where };
}

function app() {
  const { settings } = checkSettings({ RATE_LIMIT_GET: [2, 60] });
  const problems: string[] = [];
  const config = rateLimitConfig(settings, problems);
  assert.deepEqual(problems, []);
  const options = { config, limiter: new MemoryLimiter(), log: createLogger(() => {}) };
  const hono = new Hono<AppEnv>();
  hono.onError((error) => {
    const http = error as HttpError;
    return Response.json({ code: http.status }, {
      status: http.status,
      headers: http.extra.headers,
    });
  });
  hono.use("*", rateLimitHeaders(options));
  hono.use("*", async (c, next) => {
    c.set("target", targetOf(c.req.path));
    c.set("method", c.req.method);
    await next();
  });
  // A stand-in authentication middleware: `X-Account` names the account, "bad" fails.
  hono.use("*", async (c, next) => {
    const account = c.req.header("x-account");
    if (account === "bad") throw new HttpError(401, "Please provide proper credentials");
    if (account) c.set("account", { id: account, roles: [], scheme: "basic" });
    await next();
  });
  hono.use("*", rateLimit(options));
  hono.get("*", (c) => c.json({ ok: true }));
  return (headers: Record<string, string>, address = "192.0.2.1", path = "/") =>
    hono.request(path, { headers }, { remoteAddr: { hostname: address } });
}

async function check(res: Response | Promise<Response>, status: number, left: string) {
  const answer = await res;
  await answer.body?.cancel();
  assert.equal(answer.status, status);
  assert.equal(answer.headers.get("x-ratelimit-remaining"), left);
}

Deno.test("rate limit: the authenticated account is the user, whatever its header", async () => {
  const get = app();
  await check(get({ "x-account": "ann", authorization: "Basic one" }), 200, "1");
  await check(get({ "x-account": "ann", authorization: "Basic two" }, "192.0.2.9"), 200, "0");
  await check(get({ "x-account": "ann", authorization: "Basic three" }), 429, "0");
  await check(get({ "x-account": "bob", authorization: "Basic one" }), 200, "1");
});

Deno.test("rate limit: failed authentications count by address and get headers", async () => {
  const get = app();
  await check(get({ "x-account": "bad", authorization: "Basic guess1" }), 401, "1");
  await check(get({ "x-account": "bad", authorization: "Basic guess2" }), 401, "0");
  await check(get({ "x-account": "bad", authorization: "Basic guess3" }), 429, "0");
  // Another address is another user.
  await check(get({ "x-account": "bad" }, "192.0.2.2"), 401, "1");
  // The same address without credentials shares the address's counter.
  await check(get({}), 429, "0");
});

Deno.test("rate limit: where the target is no endpoint authentication checks, the header is the user", async () => {
  const get = app();
  const nowhere = (headers: Record<string, string>) => get(headers, "192.0.2.1", "/nowhere");
  // An account on such a request was not verified for it: the header as sent is counted.
  await check(nowhere({ "x-account": "ann", authorization: "Basic one" }), 200, "1");
  await check(nowhere({ "x-account": "ann", authorization: "Basic two" }), 200, "1");
  await check(nowhere({ "x-account": "ann", authorization: "Basic one" }), 200, "0");
  await check(nowhere({ "x-account": "ann", authorization: "Basic one" }), 429, "0");
  // The home endpoint is checked: the account counts, apart from those headers.
  await check(get({ "x-account": "ann", authorization: "Basic one" }), 200, "1");
});
