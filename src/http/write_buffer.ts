/**
 * @module
 * One padded answer per keep-alive connection, so that Deno sends each later answer of that
 * connection up to about `WRITE_BUFFER_BYTES` long in one write instead of two.
 *
 * Why: Deno's HTTP/1.1 server (2.9) writes an answer's head into a buffer of its connection,
 * 512 bytes to start with, and adds the body to that same write only when it fits what is
 * left; any longer answer goes out as two writes (two segments, and two wake-ups of the
 * client), which cost the service 13-22% of a served item's CPU time (docs/performance.md).
 * The buffer grows only when a head alone does not fit it, to the head's size (at least
 * double), and then keeps that size for the rest of the connection (a chunked answer, which
 * Deno gathers in it, shrinks it back to 512 bytes). So the second answer of a connection
 * carries one field of padding, {@link PADDING_FIELD}, `WRITE_BUFFER_BYTES` long, and the
 * connection's later answers that fit go in one write. A connection that carries one request
 * (`curl`, `Connection: close`) never sees the field; neither does a client behind the reverse
 * proxy, which drops it (`deploy/nginx.conf`). Over TLS the server may speak HTTP/2, which
 * frames its own writes: nothing is padded there.
 *
 * ```ts
 * import { PADDING_FIELD, writeBufferPadding } from "./write_buffer.ts";
 * const padding = writeBufferPadding(2048);
 * padding.shouldPad("127.0.0.1", 50412); // false: the connection's first answer
 * padding.shouldPad("127.0.0.1", 50412); // true: its second one carries the padding
 * const response = new Response("{}");
 * response.headers.set(PADDING_FIELD, padding.value);
 * ```
 */

/** The field that carries the padding; its value means nothing. */
export const PADDING_FIELD = "x-padding";

/**
 * A port not heard from for this long is taken for a new connection (a connection idle that
 * long and then used again is padded a second time, which costs its bytes and nothing else).
 */
const IDLE_MS = 10_000;

/** The connections remembered at most; past this, idle ones are forgotten (all, if need be). */
const MAX_CONNECTIONS = 4096;

/** What is known of a connection: its peer, when it last sent a request, whether padded. */
interface Connection {
  host: string | undefined;
  last: number;
  padded: boolean;
}

/** Which answers carry the padding, and its value (see the module comment). */
export interface WriteBufferPadding {
  /** The padding field's value. */
  readonly value: string;
  /**
   * Counts a request from the connection `host`:`port`; whether its answer should carry the
   * padding: the connection's second request.
   */
  shouldPad(host: string | undefined, port: number | undefined): boolean;
}

/** Options of {@link writeBufferPadding}. */
export interface WriteBufferOptions {
  /** The clock, in milliseconds; `Date.now` by default. */
  now?: () => number;
}

/** The padding of `bytes` bytes (see the module comment). */
export function writeBufferPadding(
  bytes: number,
  options: WriteBufferOptions = {},
): WriteBufferPadding {
  const { now: clock = Date.now } = options;
  // Connections are told apart by their peer's port (and host): Deno gives a handler nothing
  // that names the connection itself.
  const connections = new Map<number, Connection>();
  return {
    value: ".".repeat(bytes),
    shouldPad(host, port) {
      if (port === undefined) return false;
      const now = clock();
      const known = connections.get(port);
      if (known === undefined || known.host !== host || now - known.last > IDLE_MS) {
        if (known === undefined && connections.size >= MAX_CONNECTIONS) {
          forgetIdle(connections, now);
        }
        connections.set(port, { host, last: now, padded: false });
        return false;
      }
      known.last = now;
      if (known.padded) return false;
      known.padded = true;
      return true;
    },
  };
}

/** Forgets the connections idle for {@link IDLE_MS}, and all of them if that is not enough. */
function forgetIdle(connections: Map<number, Connection>, now: number): void {
  for (const [port, connection] of connections) {
    if (now - connection.last > IDLE_MS) connections.delete(port);
  }
  if (connections.size >= MAX_CONNECTIONS) connections.clear();
}
