/** Test helpers for event scenarios: recording callbacks and collecting log records. */
import type { Events } from "../../src/events.ts";
import { createLogger, type Logger } from "../../src/log.ts";

/** One raised event as a callback saw it. */
export interface Call {
  event: string;
  args: unknown[];
}

/**
 * Registers a recording callback on each of `names`; calls land in the returned list in
 * the order they were raised. Arguments are kept as given (live objects).
 */
export function record(events: Events, names: string[]): Call[] {
  const calls: Call[] = [];
  for (const event of names) {
    events.on(event, (...args: unknown[]) => {
      calls.push({ event, args });
    });
  }
  return calls;
}

/** A logger keeping its records in `records` (emptied by `clear`), at debug level. */
export function memoryLogger(): {
  logger: Logger;
  records: Record<string, unknown>[];
  clear(): void;
} {
  const records: Record<string, unknown>[] = [];
  return {
    logger: createLogger((r) => records.push(r), "debug"),
    records,
    clear: () => records.splice(0),
  };
}
