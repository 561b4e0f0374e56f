/**
 * The Hono application: a middleware chain in front of the home, resource and item
 * routes. Errors of every kind become responses in `onError`, the one place for that.
 */
import { type Context, Hono } from "hono";
import type { AppEnv } from "./env.ts";
import { ClientAbortError, HttpError, httpErrorOf, REASONS } from "./errors.ts";
import { apiPath, queryOf } from "./urls.ts";
import { parsePreconditions } from "./preconditions.ts";
import { readRequestBody } from "./body/mod.ts";
import { toResponse } from "./respond.ts";
import { jsonpCallback } from "./jsonp.ts";
import { methodOverride } from "./middleware/method-override.ts";
import { hostCheck } from "./middleware/host.ts";
import { type ProbeOptions, probes, type ReadinessCheck } from "./probes.ts";
import { cors, type CorsConfig } from "./middleware/cors.ts";
import { rateLimit, rateLimitHeaders, type RateLimitOptions } from "./middleware/rate-limit.ts";
import { requestLog } from "./middleware/request-log.ts";
import { compress } from "./middleware/compress.ts";
import { EveryPathRouter } from "./every_path_router.ts";
import { metrics, type MetricsTarget } from "./middleware/metrics.ts";
import type { Metrics, MetricsConfig } from "../metrics/mod.ts";
import { clientIp } from "./client-address.ts";
import { authenticate } from "./middleware/auth.ts";
import type { Auth, AuthTarget } from "../auth/mod.ts";
import type { Runtime } from "../services/runtime.ts";
import { buildRoutes, type Endpoint, matchRoute } from "../routes/router.ts";
import { homeRoute } from "../routes/home.ts";
import { resourceRoute } from "../routes/resource.ts";
import { schemaRoute, schemaTarget } from "../routes/schema.ts";
import { mediaRoute, mediaTarget } from "../routes/media.ts";
import { type OpenApiEndpoints, openApiEndpoints } from "../routes/openapi.ts";
import type { OpenApiConfig } from "../openapi/config.ts";
import { rateLimitingOn } from "../ratelimit/mod.ts";
import { changesRoute, changesTarget } from "../routes/changes.ts";

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
  const s = rt.settings;
  return {
    status: error.status,
    headers: error.extra.headers,
    body: {
      [s.STATUS]: s.STATUS_ERR,
      [s.ERROR]: { code: error.status, message: error.message || REASONS[error.status] },
      ...error.extra.body,
    },
  };
}

/**
 * What a request addresses, for authorisation; null when no endpoint matches (and for the
 * docs page's files, which hold no data).
 */
function authTarget(
  rt: Runtime,
  c: Context<AppEnv>,
  routes: { endpoints: Endpoint[]; openapi: OpenApiEndpoints | null },
): AuthTarget | null {
  const { endpoints, openapi } = routes;
  const method = c.get("method");
  const path = apiPath(rt.settings, c.req.path);
  if (path === null) return null;
  // The description says what the home endpoint links to: it is authorised the same way.
  if (path === "" || openapi?.isDocument(path)) return { kind: "home", resource: null, method };
  if (schemaTarget(rt, path) !== null) return { kind: "schema", resource: null, method };
  if (mediaTarget(rt, path) !== null) return { kind: "media", resource: null, method };
  // A change feed asks what a GET on its resource endpoint asks.
  const feed = changesTarget(rt, endpoints, path);
  if (feed) return { kind: "collection", resource: feed.endpoint.resource, method };
  const match = matchRoute(endpoints, path);
  if (!match) return null;
  return { kind: match.endpoint.kind, resource: match.endpoint.resource, method };
}

/** The metric labels of a request: its resource name and endpoint kind, never its URL. */
function metricsTarget(
  rt: Runtime,
  c: Context<AppEnv>,
  routes: { endpoints: Endpoint[]; openapi: OpenApiEndpoints | null },
): MetricsTarget {
  const path = apiPath(rt.settings, c.req.path);
  if (path !== null && path !== "" && routes.openapi?.isDocument(path)) {
    return { resource: "", endpoint: "openapi" };
  }
  const target = authTarget(rt, c, routes);
  return { resource: target?.resource?.name ?? "", endpoint: target?.kind ?? "none" };
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
  const app = createApp(rt, options);
  const probe = probes(probeOptions(rt, options));
  return (request, info) => probe(request) ?? Promise.resolve(app.fetch(request, info));
}

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
        clientip: clientIp(c),
        url: c.req.url,
        method: c.get("method") ?? c.req.method,
      });
    }
    let http = httpErrorOf(error, rt.settings);
    if (!http) {
      rt.log.log("error", "unhandled error", {
        clientip: clientIp(c),
        url: c.req.url,
        method: c.get("method") ?? c.req.method,
        error: error instanceof Error ? error.stack ?? error.message : String(error),
      });
      http = new HttpError(500, "The server could not complete the request.");
    }
    return toResponse(c.req.raw, errorReply(rt, http), { ...render, method: c.get("method") });
  });

  // Metrics first: the scrape is exempt like the probes (see createHandler); every other
  // request is counted.
  if (options.metrics) {
    const target = (c: Context<AppEnv>) => metricsTarget(rt, c, { endpoints, openapi });
    app.use("*", metrics({ ...options.metrics, target }));
  }
  app.use("*", requestLog(rt.log));
  // br/gzip/deflate for answers over COMPRESS_MIN_BYTES when the client accepts it (0: off).
  if (rt.settings.COMPRESS_MIN_BYTES > 0) {
    app.use("*", compress({ threshold: rt.settings.COMPRESS_MIN_BYTES }));
  }
  // CORS and rate-limit headers wrap everything below, so errors carry them too. Middlewares
  // of features that are off are not installed at all (each one costs every request).
  if (options.cors) app.use("*", cors(options.cors));
  const limited = options.rateLimit.limiter !== null;
  if (limited) app.use("*", rateLimitHeaders(options.rateLimit));
  app.use("*", hostCheck());
  app.use("*", methodOverride(rt.settings.ALLOW_OVERRIDE_HTTP_METHOD));
  if (options.auth) {
    app.use("*", authenticate(options.auth, (c) => authTarget(rt, c, { endpoints, openapi })));
  }
  // After authentication, so the rate limit counts per account.
  if (limited) app.use("*", rateLimit(options.rateLimit));
  app.all("*", async (c) => {
    const method = c.get("method");
    const path = apiPath(rt.settings, c.req.path);
    if (path === null) throw new HttpError(404, "The requested URL was not found on the server.");
    const query = queryOf(c.req.url);
    jsonpCallback(rt.settings, query); // refuses a bad callback name before any work
    const described = openapi?.answer(path, c.req.raw, method);
    if (described) return await described;
    const media = mediaTarget(rt, path);
    if (media) {
      const account = c.get("account") ?? null;
      return await mediaRoute(rt, {
        id: media,
        request: c.req.raw,
        method,
        account,
        preconditions: parsePreconditions(c.req.raw.headers),
      });
    }
    const feed = changesTarget(rt, endpoints, path);
    if (feed) {
      return await changesRoute(rt, { match: feed, request: c.req.raw, method, ip: clientIp(c) });
    }
    const schema = schemaTarget(rt, path);
    const reply = path === ""
      ? await homeRoute(rt, { request: c.req.raw, method, links: openapi?.homeLinks })
      : schema !== null
      ? schemaRoute(rt, { target: schema, request: c.req.raw, method })
      : await resourceRoute(rt, {
        endpoints,
        path,
        request: c.req.raw,
        method,
        ip: clientIp(c),
        query: query ?? new URLSearchParams(),
        preconditions: parsePreconditions(c.req.raw.headers),
        readBody: (options) => readRequestBody(rt.settings, c.req.raw, options),
      });
    return toResponse(c.req.raw, reply, { ...render, method, query });
  });
  return app;
}
