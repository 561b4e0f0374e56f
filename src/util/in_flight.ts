/**
 * @module
 * Whether this process is serving one client or several right now, over every service it
 * runs (they share one main thread). The HTTP layer counts the requests being handled and
 * notes which connection each came from; the embedded store asks {@link servingOneClient}
 * before blocking the main thread for a moment.
 *
 * ```ts
 * import { inFlight, requestStarted, servingOneClient } from "./in_flight.ts";
 * requestStarted("127.0.0.1", 50412); // a request starts
 * // ...
 * inFlight.count--; // its answer is ready
 * if (servingOneClient()) { // nothing else is being handled, and lately one connection
 * }
 * ```
 */

/**
 * The requests being handled in this process (see the module doc), until when
 * (`performance.now()`) it counts as serving several clients, and whether a connection may
 * carry several clients' requests at once (HTTP/2: set when a TLS server starts), in which
 * case it never counts as serving one.
 */
export const inFlight = { count: 0, severalUntil: 0, multiplexed: false };

/**
 * How long after two requests from different connections the process counts as serving
 * several clients. While one request is handled at a time, the others' requests may wait
 * unread in their connections: the count alone would then see one client.
 */
export const SEVERAL_CLIENTS_MS = 100;

let lastHost: string | undefined;
let lastPort: number | undefined;

/** Counts a request starting, from the connection `host`:`port` (undefined: not known). */
export function requestStarted(host?: string, port?: number): void {
  inFlight.count++;
  if (port !== lastPort || host !== lastHost) {
    if (lastHost !== undefined || lastPort !== undefined) {
      inFlight.severalUntil = performance.now() + SEVERAL_CLIENTS_MS;
    }
    lastHost = host;
    lastPort = port;
  }
}

/**
 * Whether only one request is being handled and, lately, requests came from one connection
 * only: blocking the main thread briefly then delays no one else.
 */
export function servingOneClient(): boolean {
  return inFlight.count === 1 && !inFlight.multiplexed &&
    (inFlight.severalUntil === 0 || performance.now() >= inFlight.severalUntil);
}
