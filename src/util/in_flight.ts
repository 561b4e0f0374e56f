/**
 * @module
 * How many requests this process is handling right now, over every service it runs (they
 * share one main thread). The HTTP layer counts them; the embedded store reads the count to
 * decide whether blocking the main thread for a moment would delay anyone else.
 *
 * ```ts
 * import { inFlight } from "./in_flight.ts";
 * inFlight.count++; // a request starts
 * // ...
 * inFlight.count--; // its answer is ready
 * if (inFlight.count <= 1) { // nothing else is being handled
 * }
 * ```
 */

/** The requests being handled in this process (see the module doc). */
export const inFlight = { count: 0 };
