/**
 * The change feed's settings (docs/oplog-and-change-feed.md), checked once at start-up: the endpoint
 * suffix, which resources have a feed, retention, heartbeats, per-client queue bound,
 * connection cap and the source (change streams or the write path).
 */
import type { Settings } from "../settings/check.ts";

/** Where changes come from: `auto` (MongoDB change streams when available), `writes`. */
export type ChangesSource = "auto" | "writes";

/** The checked change-feed configuration. */
export interface ChangesConfig {
  /** Last path segment of a feed (`people/_changes`). */
  endpoint: string;
  /** Resources with a feed, and whether their events may carry documents. */
  resources: ReadonlyMap<string, { documents: boolean }>;
  /** Changes kept for `Last-Event-ID` resume: at most this many ... */
  retention: number;
  /** ... and none older than this. */
  retentionMs: number;
  heartbeatMs: number;
  /** Events one client may have waiting; past it the client is dropped. */
  queueLimit: number;
  maxConnections: number;
  source: ChangesSource;
}

/** The read timeout a reverse proxy applies by default (nginx's proxy_read_timeout). */
const PROXY_READ_TIMEOUT_MS = 60_000;

const POSITIVE = [
  "CHANGES_RETENTION",
  "CHANGES_RETENTION_SECONDS",
  "CHANGES_HEARTBEAT_MS",
  "CHANGES_QUEUE_LIMIT",
  "CHANGES_MAX_CONNECTIONS",
] as const;

/**
 * Reads the feed settings of `settings` (the global `CHANGES*` keys and each resource's
 * `changes` / `changes_documents`); every problem is appended to `problems`.
 */
export function changesConfig(settings: Settings, problems: string[]): ChangesConfig {
  for (const key of POSITIVE) {
    if (settings[key] < 1) problems.push(`${key}: must be at least 1`);
  }
  const endpoint = settings.CHANGES_ENDPOINT;
  if (!/^[A-Za-z0-9_.~-]+$/.test(endpoint)) {
    problems.push(`CHANGES_ENDPOINT: must be one path segment (letters, digits, "_", "-", ".")`);
  }
  // A reverse proxy closes an upstream that stays silent past its read timeout (nginx's
  // default proxy_read_timeout is 60 s; deploy/nginx.conf gives feeds longer).
  if (settings.CHANGES_HEARTBEAT_MS >= PROXY_READ_TIMEOUT_MS) {
    problems.push(
      `CHANGES_HEARTBEAT_MS: must be below ${PROXY_READ_TIMEOUT_MS} (a reverse proxy's default ` +
        "read timeout: an idle feed would be closed)",
    );
  }
  if (!["auto", "writes"].includes(settings.CHANGES_SOURCE)) {
    problems.push(`CHANGES_SOURCE: must be "auto" or "writes"`);
  }
  const resources = new Map<string, { documents: boolean }>();
  const domain = (settings.DOMAIN ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, raw] of Object.entries(domain)) {
    const on = (raw.changes as boolean | undefined) ?? settings.CHANGES;
    if (!on) continue;
    const path = `DOMAIN.${name}.changes`;
    // The operation log is written alongside other writes, never through the write path.
    if (name === settings.OPLOG_NAME) {
      if (raw.changes === true) problems.push(`${path}: the operation log has no feed`);
      continue;
    }
    if (raw.internal_resource === true) {
      if (raw.changes === true) problems.push(`${path}: an internal resource has no feed`);
      continue;
    }
    const datasource = raw.datasource as { aggregation?: unknown } | undefined;
    if (datasource?.aggregation !== undefined) {
      if (raw.changes === true) problems.push(`${path}: an aggregation endpoint has no feed`);
      continue;
    }
    const documents = (raw.changes_documents as boolean | undefined) ??
      settings.CHANGES_DOCUMENTS;
    resources.set(name, { documents });
  }
  return {
    endpoint,
    resources,
    retention: settings.CHANGES_RETENTION,
    retentionMs: settings.CHANGES_RETENTION_SECONDS * 1000,
    heartbeatMs: settings.CHANGES_HEARTBEAT_MS,
    queueLimit: settings.CHANGES_QUEUE_LIMIT,
    maxConnections: settings.CHANGES_MAX_CONNECTIONS,
    source: settings.CHANGES_SOURCE as ChangesSource, // checked above
  };
}
