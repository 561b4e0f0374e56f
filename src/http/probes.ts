import { getPath } from "hono/utils/url";

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
async function ask(check: ReadinessCheck, ms: number): Promise<string> {
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
 * Liveness and readiness probes for orchestrators, answered in front of the middleware chain
 * (no authentication, rate limit, metrics or logging): the liveness probe says the process
 * answers; the readiness probe asks the store (and Redis, when rate limiting uses it) and
 * answers 503 when one of them does not answer in time. Reasons are generic: no internal
 * text. The returned function answers a probe, or null for any other request (which then
 * goes through the chain, paying nothing here but a method and path check).
 */
export function probes(options: ProbeOptions): (request: Request) => Promise<Response> | null {
  return function probe(request) {
    const method = request.method;
    if (method !== "GET" && method !== "HEAD") return null;
    const path = getPath(request); // as Hono reads it (percent-decoded)
    let answer: Promise<Response>;
    if (options.healthPath && path === options.healthPath) {
      answer = Promise.resolve(json(200, { status: "ok" }));
    } else if (options.readyPath && path === options.readyPath) answer = ready(options);
    else return null;
    return method === "HEAD" ? answer.then((full) => new Response(null, full)) : answer;
  };
}

/** The readiness probe's answer: every dependency asked at once. */
async function ready(options: ProbeOptions): Promise<Response> {
  const results = await Promise.all(
    options.checks.map(async (check) => [check.name, await ask(check, options.timeoutMs)]),
  );
  const ready = results.every(([, result]) => result === "ok");
  return json(ready ? 200 : 503, {
    status: ready ? "ok" : "unavailable",
    checks: Object.fromEntries(results),
  });
}
