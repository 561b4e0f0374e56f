/**
 * Structured logging: one JSON object per line on stderr. Records about a request carry
 * `clientip`, `url` (full, with query) and `method`.
 *
 * What is logged (as the spec asks): POST, PATCH and PUT operations (the request-log
 * middleware), exceptions of the database layer (the logged store decorator,
 * `src/store/logged.ts`), and errors that become a 500 (with their stack).
 *
 * The request fields reach records written below the HTTP layer explicitly: each request's
 * services get a runtime whose logger and store add them (`requestRuntime` in
 * `src/services/runtime.ts`, {@linkcode requestLogger}). An async context would carry them
 * implicitly, but in Deno an active one costs every promise of the request (served GET
 * customer made 7-21% more requests per second without it). Code of the application that
 * a request runs (event hooks, the `authenticate` hook) runs inside
 * {@linkcode withLogContext}, so {@linkcode logContext} gives it the fields, and records of
 * {@linkcode createLogger} loggers it writes carry them.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type Level = "debug" | "info" | "warn" | "error";

export interface Logger {
  log(level: Level, message: string, extra?: Record<string, unknown>): void;
}

/** Where records go; replaceable by an embedding application (e.g. to collect them). */
export type Sink = (record: Record<string, unknown>) => void;

/** The attributes every record about a request carries. */
export interface RequestFields {
  clientip: string;
  /** The full URL, query included. */
  url: string;
  method: string;
  /** The request id (`X-Request-Id`, the client's when safe, else generated). */
  requestid?: string;
}

/**
 * Lines not written yet: they go in one write {@link FLUSH_MS} after the first of them, or at
 * once when they reach {@link FLUSH_CHARS} characters or an error is logged. A write to a pipe
 * wakes its reader (a log collector, a container runtime): one per line cost a busy write
 * load several percent of its CPU time.
 */
let pending: string[] = [];
let pendingChars = 0;
const encoder = new TextEncoder();
/** How long a line may wait for the lines after it. */
const FLUSH_MS = 10;
/** How much text waits at most. */
const FLUSH_CHARS = 64 * 1024;

/**
 * Writes the log lines still waiting for the end of this turn. Call it before writing to
 * stderr directly, so lines keep their order.
 */
export function flushLog(): void {
  if (timer !== undefined) {
    clearTimeout(timer);
    timer = undefined;
  }
  if (pending.length === 0) return;
  const bytes = encoder.encode(pending.join(""));
  pending = [];
  pendingChars = 0;
  for (let off = 0; off < bytes.length;) off += Deno.stderr.writeSync(bytes.subarray(off));
}

/** The timer of the next write of pending lines, while some wait. */
let timer: ReturnType<typeof setTimeout> | undefined;

// Lines still pending when the process exits (Deno.exit included) are written first.
globalThis.addEventListener("unload", flushLog);

/** One write per {@link FLUSH_MS}; errors go out at once, with what precedes them. */
const stderrSink: Sink = (record) => {
  const line = JSON.stringify(record) + "\n";
  pending.push(line);
  pendingChars += line.length;
  if (record.level === "error" || pendingChars >= FLUSH_CHARS) flushLog();
  else if (timer === undefined) {
    const next = timer = setTimeout(flushLog, FLUSH_MS);
    // A waiting line keeps no process alive: the unload handler writes it.
    Deno.unrefTimer(next);
  }
};

const LEVELS: Level[] = ["debug", "info", "warn", "error"];

const requestContext = new AsyncLocalStorage<RequestFields>();

/** Runs `fn` with `fields` as the request context of every record written meanwhile. */
export function withLogContext<T>(fields: RequestFields, fn: () => T): T {
  return requestContext.run(fields, fn);
}

/**
 * The request fields of the request being handled, inside {@linkcode withLogContext} (event
 * hooks and the `authenticate` hook run there); undefined elsewhere.
 */
export function logContext(): RequestFields | undefined {
  return requestContext.getStore();
}

/**
 * A logger writing records `{time, level, message, ...request fields, ...extra}` to `sink`,
 * dropping those below `minLevel`.
 */
export function createLogger(sink: Sink = stderrSink, minLevel: Level = "info"): Logger {
  const min = LEVELS.indexOf(minLevel);
  return {
    log(level, message, extra = {}) {
      if (LEVELS.indexOf(level) < min) return;
      sink({ time: new Date().toISOString(), level, message, ...logContext(), ...extra });
    },
  };
}

/**
 * `log` adding a request's fields to every record: the logger of a request's services
 * (fields the record gives itself win).
 */
export function requestLogger(log: Logger, fields: RequestFields): Logger {
  return new RequestLogger(log, fields);
}

class RequestLogger implements Logger {
  constructor(readonly base: Logger, readonly fields: RequestFields) {}
  log(level: Level, message: string, extra?: Record<string, unknown>): void {
    this.base.log(level, message, { ...this.fields, ...extra });
  }
}

/** Renders a thrown value for a log record: the stack when there is one. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}
