import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.ts";

/** A dependency the readiness probe asks: it must answer within the deadline. */
export interface ReadinessCheck {
  name: string;
  ping(): Promise<void>;
}

/** Where the probes answer and what readiness waits for. */
export interface ProbeOptions {
  /** Liveness path (HEALTH_PATH), e.g. `/health`; empty: no probe. */
  healthPath: string;
  /** Readiness path (READY_PATH), e.g. `/ready`; empty: no probe. */
  readyPath: string;
  /** READY_TIMEOUT_MS: how long each dependency may take to answer. */
  timeoutMs: number;
  checks: ReadinessCheck[];
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

/** Whether `check` answers within `ms`: "ok", or why not. */
async function probe(check: ReadinessCheck, ms: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${ms} ms`), ms);
  });
  try {
    return await Promise.race([check.ping().then(() => "ok", () => "unavailable"), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Liveness and readiness probes for orchestrators, answered before every other middleware
 * (no authentication, rate limit or logging): the liveness probe says the process answers;
 * the readiness probe asks the store (and Redis, when rate limiting uses it) and answers
 * 503 when one of them does not answer in time. Reasons are generic: no internal text.
 */
export function probes(options: ProbeOptions): MiddlewareHandler<AppEnv> {
  // Not async: requests that are not probes pass on with no frame of their own.
  return function probes(c, next) {
    const method = c.req.method;
    if (method !== "GET" && method !== "HEAD") return next();
    const path = c.req.path;
    if (options.healthPath && path === options.healthPath) {
      return Promise.resolve(json(200, { status: "ok" }));
    }
    if (!options.readyPath || path !== options.readyPath) return next();
    return ready(options);
  };
}

/** The readiness probe's answer: every dependency asked at once. */
async function ready(options: ProbeOptions): Promise<Response> {
  const results = await Promise.all(
    options.checks.map(async (check) => [check.name, await probe(check, options.timeoutMs)]),
  );
  const ready = results.every(([, result]) => result === "ok");
  return json(ready ? 200 : 503, {
    status: ready ? "ok" : "unavailable",
    checks: Object.fromEntries(results),
  });
}
