/**
 * The HTTP server: `Deno.serve`, the only one. It parses HTTP/1.1 and HTTP/2 (TLS with ALPN
 * when a certificate and key are given) and hands each request to the fetch handler.
 *
 * Connection-level defences (header and idle timeouts, per-client connection limits, request
 * normalisation) belong to the reverse proxy in front of every production deployment
 * (`deploy/nginx.conf`, docs/deployment.md); what belongs to the application (body budgets and
 * the minimum body data rate, query time bounds, change-feed caps) is enforced by the app.
 *
 * @example
 * ```ts
 * const server = await startServer(app.fetch, { hostname: "127.0.0.1", port: 8000 });
 * await server.shutdown();
 * ```
 * @module
 */
import { inFlight } from "../util/in_flight.ts";

/** The fetch handler the server calls for each request. */
export type FetchHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Response | Promise<Response>;

/** Where the server reports what goes wrong outside a request (structured log records). */
export type ServerLog = (
  level: "info" | "warn" | "error",
  message: string,
  extra?: Record<string, unknown>,
) => void;

/** A PEM certificate chain and its private key: the server speaks TLS (and HTTP/2). */
export interface ServerTls {
  cert: string;
  key: string;
}

/** Options of {@link startServer}. */
export interface ServeOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  tls?: ServerTls;
  log?: ServerLog;
  onListen?: (addr: Deno.NetAddr) => void;
}

/** A running server. */
export interface Server {
  readonly addr: Deno.NetAddr;
  /** Whether the server speaks TLS. */
  readonly tls: boolean;
  /**
   * Resolves once the server has shut down, or once it stopped accepting by itself (an
   * accept error such as EMFILE, logged); never rejects.
   */
  readonly finished: Promise<void>;
  /**
   * Stops accepting and waits for in-flight requests to finish (the caller ends open change
   * feeds first, and bounds the wait).
   */
  shutdown(): Promise<void>;
}

/** Starts the server; see the module comment. Rejects when it cannot listen. */
export function startServer(handler: FetchHandler, options: ServeOptions): Promise<Server> {
  // The executor turns a synchronous failure (AddrInUse, a bad certificate) into a rejection.
  return new Promise((resolve) => resolve(start(handler, options)));
}

function start(handler: FetchHandler, options: ServeOptions): Server {
  const log: ServerLog = options.log ?? (() => {});
  let stopping = false;
  // With TLS, HTTP/2 may carry many clients' requests over one connection: the process then
  // never counts as serving one client (src/util/in_flight.ts).
  if (options.tls) inFlight.multiplexed = true;
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : {}),
    // The service compresses by its own settings (middleware/compress.ts).
    automaticCompression: false,
    onListen() {},
    onError(error) {
      log("error", "unhandled server error", { error: String(error) });
      return new Response("Internal Server Error", { status: 500 });
    },
  }, handler as Deno.ServeHandler<Deno.NetAddr>);
  options.onListen?.(server.addr);
  // `Deno.serve` ends on an accept error (EMFILE): say so; the caller decides (src/main.ts
  // exits non-zero so that a supervisor restarts the service).
  const finished = server.finished.then(() => "finished", (error) => error).then((why) => {
    if (!stopping) log("error", "server stopped accepting", { error: String(why) });
  });
  return {
    addr: server.addr,
    tls: options.tls !== undefined,
    finished,
    shutdown: async () => {
      stopping = true;
      await server.shutdown().catch(() => {});
      await finished;
    },
  };
}
