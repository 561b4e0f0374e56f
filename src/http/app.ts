/**
 * The Hono application: a middleware chain in front of the home, resource and item
 * routes. Errors of every kind become responses in `onError`, the one place for that.
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { AppEnv } from "./env.ts";
import type { Target } from "./target.ts";
import { ClientAbortError, HttpError, httpErrorOf, REASONS } from "./errors.ts";
import { queryOf } from "./urls.ts";
import { toResponse } from "./respond.ts";
import { jsonpArgument } from "./jsonp.ts";
import { methodOverride } from "./middleware/method-override.ts";
import { hostCheck } from "./middleware/host.ts";
import { type ProbeOptions, probes, type ReadinessCheck } from "./probes.ts";
import { cors, type CorsConfig } from "./middleware/cors.ts";
import { rateLimit, rateLimitHeaders, type RateLimitOptions } from "./middleware/rate-limit.ts";
import { requestLog } from "./middleware/request-log.ts";
import { compress, compressAnswer } from "./middleware/compress.ts";
import { EveryPathRouter } from "./every_path_router.ts";
import { metrics } from "./middleware/metrics.ts";
import { resolve } from "./middleware/resolve.ts";
import { dispatch } from "./dispatch.ts";
import type { Metrics, MetricsConfig } from "../metrics/mod.ts";
import { clientIp, rememberPeer } from "./client-address.ts";
import { authenticate } from "./middleware/auth.ts";
import type { Auth } from "../auth/mod.ts";
import { requestRuntime, type Runtime } from "../services/runtime.ts";
import { buildRoutes } from "../routes/router.ts";
import { openApiEndpoints } from "../routes/openapi.ts";
import type { OpenApiConfig } from "../openapi/config.ts";
import { rateLimitingOn } from "../ratelimit/mod.ts";
import { inFlight, requestStarted } from "../util/in_flight.ts";
import { PADDING_FIELD, type WriteBufferPadding, writeBufferPadding } from "./write_buffer.ts";

export type { AppEnv } from "./env.ts";

/** HTTP-layer options checked at start-up (see `prepare` in src/mod.ts). */
export interface AppOptions {
  /** Null when CORS is off. */
  cors: CorsConfig | null;
  rateLimit: RateLimitOptions;
  /** The API description and docs page; null when OPENAPI_PATH is off. */
  openapi?: OpenApiConfig | null;
  /** Null when METRICS is off. */
  metrics?: { metrics: Metrics; config: MetricsConfig } | null;
  /** Authentication; absent when the API has none. */
  auth?: Auth;
}

/** The error body: `_status` ERR and `_error` {code, message}, plus any extra fields. */
function errorReply(rt: Runtime, error: HttpError) {
  const settings = rt.settings;
  return {
    status: error.status,
    headers: error.extra.headers,
    body: {
      [settings.STATUS]: settings.STATUS_ERR,
      [settings.ERROR]: { code: error.status, message: error.message || REASONS[error.status] },
      ...error.extra.body,
    },
  };
}

/**
 * `first`, a middleware with nothing to do after the route (it returns `next()`), and `then`,
 * as one step of Hono's chain. Each step is an async function and an await (~1-2 us served per
 * request each, measured); the behaviour is that of two steps:
 * an error `first` throws is answered where it was thrown, before `then` starts, as it would be
 * in a step of its own.
 */
function inOneStep(
  first: MiddlewareHandler<AppEnv>,
  then: MiddlewareHandler<AppEnv>,
): MiddlewareHandler<AppEnv> {
  return (c, next) => first(c, () => then(c, next) as Promise<void>);
}

/** The liveness and readiness probes of this service. */
function probeOptions(rt: Runtime, options: AppOptions): ProbeOptions {
  const limiter = options.rateLimit.limiter;
  const checks: ReadinessCheck[] = [{ name: "store", ping: () => rt.store.ping() }];
  if (limiter?.kind === "redis") checks.push({ name: "redis", ping: () => limiter.ping() });
  return {
    healthPath: rt.settings.HEALTH_PATH,
    readyPath: rt.settings.READY_PATH,
    timeoutMs: rt.settings.READY_TIMEOUT_MS,
    checks,
  };
}

/**
 * The service's fetch handler: the liveness and readiness probes are answered in front of
 * the app (exempt from metrics, logging, authentication and rate limits); every other
 * request goes through the app's middleware chain.
 */
export function createHandler(
  rt: Runtime,
  options: AppOptions,
): (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response> {
  const probe = probes(probeOptions(rt, options));
  const bytes = rt.settings.WRITE_BUFFER_BYTES;
  const answer = counting(createApp(rt, options), bytes > 0 ? writeBufferPadding(bytes) : null);
  return (request, info) => probe(request) ?? answer(request, info);
}

/** Ends the count of a request started by {@link counting}'s handler. */
function leave(response: Response): Response {
  inFlight.count--;
  return response;
}

/** Ends the count of a request started by {@link counting}'s handler that failed. */
function leaveFailed(error: unknown): never {
  inFlight.count--;
  throw error;
}

/**
 * The app's fetch handler, each request counted while its answer is being made
 * (src/util/in_flight.ts), and the answers that should carry the write buffer's padding
 * given it (write_buffer.ts; none when `padding` is null).
 */
function counting(
  app: Hono<AppEnv>,
  padding: WriteBufferPadding | null,
): (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response> {
  const value = padding?.value ?? "";
  const pad = (response: Response): Response => {
    try {
      response.headers.set(PADDING_FIELD, value);
    } catch { /* an answer whose fields cannot change goes as it is */ }
    return leave(response);
  };
  return (request, info) => {
    const peer = (info as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr;
    requestStarted(peer?.hostname, peer?.port);
    // Read once: the request log and the route take it from here.
    rememberPeer(info, peer);
    let answer: Response | Promise<Response>;
    try {
      answer = app.fetch(request, info);
    } catch (error) {
      leaveFailed(error);
    }
    // HTTP/2 (over TLS) frames its own writes; a connection about to close needs no buffer.
    if (
      padding !== null && !inFlight.multiplexed && padding.shouldPad(peer?.hostname, peer?.port) &&
      !CLOSE.test(request.headers.get("connection") ?? "")
    ) {
      return Promise.resolve(answer).then(pad, leaveFailed);
    }
    return answer instanceof Promise
      ? answer.then(leave, leaveFailed)
      : Promise.resolve(leave(answer));
  };
}

/** A `Connection` field asking to close the connection after this answer. */
const CLOSE = /(^|[\s,])close($|[\s,])/i;

/** The Hono application (see the module comment); {@link createHandler} serves it. */
export function createApp(rt: Runtime, options: AppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>({ router: new EveryPathRouter() });
  const render = { settings: rt.settings, formatDate: rt.formatDate };
  const endpoints = buildRoutes(rt.domain);
  const openapi = options.openapi
    ? openApiEndpoints(rt, {
      config: options.openapi,
      rateLimited: rateLimitingOn(options.rateLimit.config),
      auth: options.auth,
    })
    : null;

  app.onError((error, c) => {
    if (error instanceof ClientAbortError) {
      rt.log.log("info", "client aborted the request body", {
        ...c.get("logFields"),
        clientip: clientIp(c),
        url: c.req.url,
        method: c.get("method") ?? c.req.method,
      });
    }
    let http = httpErrorOf(error, rt.settings);
    if (!http) {
      rt.log.log("error", "unhandled error", {
        ...c.get("logFields"),
        clientip: clientIp(c),
        url: c.req.url,
        method: c.get("method") ?? c.req.method,
        error: error instanceof Error ? error.stack ?? error.message : String(error),
      });
      http = new HttpError(500, "The server could not complete the request.");
    }
    // The target is set first thing; an error before it renders with the URL read here.
    const target = c.get("target") as Target | undefined;
    const query = target ? target.query : queryOf(c.req.url);
    const jsonp = target ? target.jsonp : jsonpArgument(rt.settings, query);
    return toResponse(c.req.raw, errorReply(rt, http), {
      ...render,
      method: c.get("method"),
      query,
      jsonp,
      late: c.get("lateFields"),
    });
  });

  // What the request addresses, worked out once: everything below reads it.
  const routes = { endpoints, openapi };
  // Metrics next: the scrape is exempt like the probes (see createHandler); every other
  // request is counted.
  const resolved = resolve(rt, routes);
  if (options.metrics) app.use("*", inOneStep(resolved, metrics(options.metrics)));
  app.use("*", options.metrics ? requestLog(rt.log) : inOneStep(resolved, requestLog(rt.log)));
  // br/gzip/deflate for answers over COMPRESS_MIN_BYTES when the client accepts it (0: off).
  const compressing = rt.settings.COMPRESS_MIN_BYTES > 0
    ? { threshold: rt.settings.COMPRESS_MIN_BYTES }
    : null;
  // CORS and rate-limit headers wrap everything below, so errors carry them too. Middlewares
  // of features that are off are not installed at all (each one costs every request).
  // CORS throws nothing itself (it reads the request and sets fields): compression's work on
  // the answer runs after CORS's in the same step, in one async function.
  if (options.cors) {
    app.use("*", cors(options.cors, compressing ? compressAnswer(compressing) : undefined));
  } else if (compressing) app.use("*", compress(compressing));
  const limited = options.rateLimit.limiter !== null;
  if (limited) app.use("*", rateLimitHeaders(options.rateLimit));
  const checks = inOneStep(hostCheck(), methodOverride(rt.settings.ALLOW_OVERRIDE_HTTP_METHOD));
  // With nothing between them and the route, the checks share the route's step: an error
  // they throw is answered at that step, as at a step of their own (nothing between has
  // work after the route).
  const between = Boolean(options.auth) || limited;
  if (between) app.use("*", checks);
  if (options.auth) {
    app.use("*", authenticate(options.auth));
  }
  // After authentication, so the rate limit counts per account.
  if (limited) app.use("*", rateLimit(options.rateLimit));
  // Every endpoint through the table of endpoint kinds (dispatch.ts).
  const route: MiddlewareHandler<AppEnv> = async (c) => {
    const target = c.get("target");
    // The request's services log with its fields (no async context: see src/log.ts).
    const answer = await dispatch(target, {
      rt: requestRuntime(rt, c.get("logFields")),
      c,
      routes,
    });
    if (answer instanceof Response) return answer;
    const { query, jsonp } = target;
    return toResponse(c.req.raw, answer, {
      ...render,
      method: c.get("method"),
      query,
      jsonp,
      late: c.get("lateFields"),
    });
  };
  app.all("*", between ? route : inOneStep(checks, route));
  return app;
}
