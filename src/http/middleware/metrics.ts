/**
 * Prometheus metrics (METRICS): serves the exposition at METRICS_PATH and counts and times
 * every other request, labelled by resource name, endpoint kind, method and status (never
 * by URL, so the label sets stay bounded), and counts rate-limited requests.
 *
 * Why first in the chain: a request refused by any later middleware (a bad Host, a failed
 * authentication, a rate limit) is counted too, and the scrape skips logging,
 * authentication and rate limits, like the probes.
 *
 * ```ts
 * app.use("*", resolve(rt, routes)); // sets the request's target: the labels come from it
 * app.use("*", metrics({ metrics, config }));
 * // GET /metrics -> text/plain exposition; other requests -> restsvc_http_requests_total{...}
 * ```
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";
import { HttpError } from "../errors.ts";
import { metricsLabels } from "../dispatch.ts";
import { accepted } from "../../ratelimit/mod.ts";
import { safeEqual } from "../../auth/secrets.ts";
import type { Metrics, MetricsConfig } from "../../metrics/mod.ts";

/** Options of {@link metrics}. */
export interface MetricsOptions {
  metrics: Metrics;
  config: MetricsConfig;
}

/** The bearer token of an `Authorization` header, or null. */
function bearer(header: string | undefined): string | null {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match ? match[1] : null;
}

/**
 * Serves the metrics at METRICS_PATH (GET and HEAD; with METRICS_TOKEN, only to a request
 * sending `Authorization: Bearer <token>`, compared in constant time), before logging,
 * authentication and rate limits; counts and times every other request but the probes,
 * which answer before it.
 */
export function metrics(options: MetricsOptions): MiddlewareHandler<AppEnv> {
  const { metrics, config } = options;
  return async function metricsMiddleware(c, next) {
    const method = c.req.method;
    if (c.req.path === config.path && (method === "GET" || method === "HEAD")) {
      if (config.token !== null) {
        const sent = bearer(c.req.header("authorization"));
        if (sent === null || !safeEqual(sent, config.token)) {
          throw new HttpError(401, "The metrics need a valid bearer token.", {
            headers: { "www-authenticate": 'Bearer realm="metrics"' },
          });
        }
      }
      const { text, contentType } = await metrics.exposition();
      return new Response(method === "HEAD" ? null : text, {
        headers: { "content-type": contentType, "cache-control": "no-store" },
      });
    }
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    // What the request addressed (its resolved target): a configured resource name and the
    // endpoint kind (collection, item, lookup, home, schema, media, openapi or none).
    const { resource, endpoint } = metricsLabels(c.get("target"));
    const counted = c.get("method") ?? method;
    metrics.observeRequest({ resource, endpoint, method: counted, status: c.res.status, seconds });
    const hit = c.get("rateLimit");
    if (hit && !accepted(hit)) metrics.rateLimited(resource, counted);
  };
}
