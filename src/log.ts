/**
 * Structured logging: one JSON object per line on stderr. Records about a request carry
 * `clientip`, `url` (full, with query) and `method`.
 */

export type Level = "debug" | "info" | "warn" | "error";

export interface Logger {
  log(level: Level, message: string, extra?: Record<string, unknown>): void;
}

/** Where records go; replaceable by an embedding application (e.g. to collect them). */
export type Sink = (record: Record<string, unknown>) => void;

const stderrSink: Sink = (record) => {
  console.error(JSON.stringify(record));
};

export function createLogger(sink: Sink = stderrSink, minLevel: Level = "info"): Logger {
  const order: Level[] = ["debug", "info", "warn", "error"];
  const min = order.indexOf(minLevel);
  return {
    log(level, message, extra = {}) {
      if (order.indexOf(level) < min) return;
      sink({ time: new Date().toISOString(), level, message, ...extra });
    },
  };
}
