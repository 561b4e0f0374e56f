/**
 * Prometheus metrics of one service (docs/configuration.md, "Metrics"), kept in a registry of its own so
 * that several services in one process (tests, embedding apps) never share counters:
 *
 * - `restsvc_http_requests_total{resource, endpoint, method, status}` and
 *   `restsvc_http_request_duration_seconds{resource, endpoint, method}`: the resource is the
 *   configured resource name (never the raw URL), so the label sets stay bounded;
 * - `restsvc_store_operation_duration_seconds{operation, collection}` and
 *   `restsvc_store_errors_total{operation, collection, kind}`;
 * - `restsvc_rate_limit_rejections_total{resource, method}`;
 * - prom-client's default process metrics (memory, CPU, heap, event loop lag); see
 *   `processMemory` for what changes when `/proc/self` cannot be read.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Settings } from "../settings/check.ts";
import type { StoreObservation } from "../store/logged.ts";

/** Where and how the metrics are served; null when METRICS is off. */
export interface MetricsConfig {
  /** METRICS_PATH: a server path, not under URL_PREFIX / API_VERSION. */
  path: string;
  /** METRICS_TOKEN: the bearer token a scrape must send, or null when none is needed. */
  token: string | null;
}

/** Shortest METRICS_TOKEN accepted: a guessable token protects nothing. */
const MIN_TOKEN_LENGTH = 16;

/** Reads and checks the metrics settings; problems are appended to `problems`. */
export function metricsConfig(settings: Settings, problems: string[]): MetricsConfig | null {
  const path = settings.METRICS_PATH;
  const token = settings.METRICS_TOKEN;
  if (!/^\/[A-Za-z0-9._~/-]*$/.test(path) || path === "/") {
    problems.push(`METRICS_PATH: must be a path such as "/metrics"`);
  } else if (path === settings.HEALTH_PATH || path === settings.READY_PATH) {
    problems.push("METRICS_PATH: must differ from HEALTH_PATH and READY_PATH");
  }
  if (token !== null && (token.length < MIN_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token))) {
    problems.push(
      `METRICS_TOKEN: must be at least ${MIN_TOKEN_LENGTH} printable characters without spaces`,
    );
  }
  if (!settings.METRICS) return null;
  return { path, token };
}

/** Methods counted by name; any other method is counted as "OTHER". */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Seconds; from a cached item read to a slow page of a large collection. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STORE_BUCKETS = [
  0.0001,
  0.00025,
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  10,
];

/** prom-client's default metrics that read `/proc/self` on Linux. */
const PROC_METRICS = [
  "process_resident_memory_bytes",
  "process_virtual_memory_bytes",
  "process_heap_bytes",
  "process_open_fds",
  "process_max_fds",
];

/**
 * Deno lets only a process run with every permission (`-A`) read `/proc/self`, so with the
 * permissions `deno task start` grants, prom-client's Linux process metrics would read 0.
 * Then they are removed and the resident memory comes from `Deno.memoryUsage()` instead
 * (virtual memory and file descriptors are not reported).
 */
function processMemory(registry: Registry): void {
  try {
    Deno.readTextFileSync("/proc/self/status");
    return;
  } catch { /* not readable: replace them */ }
  for (const name of PROC_METRICS) registry.removeSingleMetric(name);
  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
    registers: [registry],
    collect() {
      this.set(Deno.memoryUsage().rss);
    },
  });
}

/** One answered request, as the HTTP layer reports it. */
export interface RequestObservation {
  /** The configured resource name, or "" for endpoints of no resource. */
  resource: string;
  /** collection, item, lookup, home, schema, media, openapi, or none (no endpoint matched). */
  endpoint: string;
  method: string;
  status: number;
  seconds: number;
}

/** The metrics of one service. */
export class Metrics {
  /** The registry served at METRICS_PATH; embedding apps may register their own metrics. */
  readonly registry: Registry = new Registry();
  private readonly requests: Counter<string>;
  private readonly latency: Histogram<string>;
  private readonly storeLatency: Histogram<string>;
  private readonly storeErrors: Counter<string>;
  private readonly rejections: Counter<string>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    processMemory(this.registry);
    this.requests = new Counter({
      name: "restsvc_http_requests_total",
      help: "Answered HTTP requests, by resource, endpoint kind, method and status.",
      labelNames: ["resource", "endpoint", "method", "status"],
      registers,
    });
    this.latency = new Histogram({
      name: "restsvc_http_request_duration_seconds",
      help: "Time from a request's arrival to its response head, in seconds.",
      labelNames: ["resource", "endpoint", "method"],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.storeLatency = new Histogram({
      name: "restsvc_store_operation_duration_seconds",
      help: "Duration of store operations (failed ones included), in seconds.",
      labelNames: ["operation", "collection"],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.storeErrors = new Counter({
      name: "restsvc_store_errors_total",
      help: "Failed store operations, by kind: duplicate_key, invalid_query, timeout, error.",
      labelNames: ["operation", "collection", "kind"],
      registers,
    });
    this.rejections = new Counter({
      name: "restsvc_rate_limit_rejections_total",
      help: "Requests refused with 429 by the rate limit.",
      labelNames: ["resource", "method"],
      registers,
    });
  }

  /** Counts one answered request. */
  observeRequest(observation: RequestObservation): void {
    const method = METHODS.has(observation.method) ? observation.method : "OTHER";
    const labels = { resource: observation.resource, endpoint: observation.endpoint, method };
    this.requests.inc({ ...labels, status: String(observation.status) });
    this.latency.observe(labels, observation.seconds);
  }

  /** Counts one store operation (the hook of the logged store). */
  observeStore(observation: StoreObservation): void {
    const labels = { operation: observation.operation, collection: observation.collection };
    this.storeLatency.observe(labels, observation.seconds);
    if (observation.outcome !== "ok") {
      this.storeErrors.inc({ ...labels, kind: observation.outcome });
    }
  }

  /** Counts one request refused by the rate limit. */
  rateLimited(resource: string, method: string): void {
    this.rejections.inc({ resource, method: METHODS.has(method) ? method : "OTHER" });
  }

  /** The exposition text and its content type. */
  async exposition(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
