/**
 * The HTTP server: connection limits `Deno.serve` does not offer.
 *
 * `Deno.serve` has no header-read timeout, no idle timeout and no connection cap, and an
 * accept error (EMFILE) ends its `finished` promise; `node:http` under Deno ignores
 * `headersTimeout`/`requestTimeout`/`maxConnections`. So the service serves HTTP/1.1 itself
 * on `Deno.listen` connections (`http1_conn.ts`), calling the fetch handler in process with
 * standard `Request` objects, and enforces:
 *
 * - SERVER_HEADERS_TIMEOUT_MS: from a connection's start, or a request's first byte, to the
 *   end of its head; past it the connection is closed (408 when nothing was answered yet);
 * - SERVER_IDLE_TIMEOUT_MS: no byte in either direction for that long closes the connection
 *   (idle keep-alive, stalled bodies); keep it above QUERY_TIMEOUT_MS;
 * - SERVER_MAX_CONNECTIONS: past it a new connection gets a 503 and is closed at once;
 * - accept errors (EMFILE, ...) are logged and the server keeps accepting.
 *
 * With `front: false` (SERVER_FRONT) `Deno.serve` listens itself: none of the limits above
 * apply; for deployments behind a proxy that enforces them.
 *
 * @example
 * ```ts
 * const server = await serve(app.fetch, {
 *   hostname: "127.0.0.1",
 *   port: 8000,
 *   limits: { headersTimeoutMs: 10_000, idleTimeoutMs: 30_000, maxConnections: 1024 },
 * });
 * await server.shutdown();
 * ```
 * @module
 */
import {
  answerAndClose,
  Connection,
  type FetchHandler,
  REFUSALS,
  type ServerLog,
} from "./http1_conn.ts";

export type { FetchHandler, ServerLog };

/** Limits of the server; see the module comment. */
export interface ServerLimits {
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  maxConnections: number;
  /** Largest request head (bytes); a bigger one answers 431. Default 64 KiB. */
  maxHeadBytes?: number;
}

/** Options of {@link serve}. */
export interface ServeOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  limits: ServerLimits;
  log?: ServerLog;
  onListen?: (addr: Deno.NetAddr) => void;
  /** Opens the TCP listener (tests inject failing listeners); default `Deno.listen`. */
  listen?: (options: { hostname: string; port: number }) => Deno.Listener;
  /**
   * False serves with `Deno.serve` directly, without the limits (SERVER_FRONT); `limits`
   * and `listen` are then unused. Default true.
   */
  front?: boolean;
  /** False relays every response body as a stream (for tests of that path). */
  inspectBodies?: boolean;
  /** False makes every request a full `Request` at once (for tests of that path). */
  lazyRequests?: boolean;
}

/** A running server. */
export interface Server {
  readonly addr: Deno.NetAddr;
  /** Whether the service's own HTTP server (and its limits) is in place. */
  readonly front: boolean;
  /**
   * Resolves once the server has shut down, or (without the front) once it stopped
   * accepting by itself (an accept error); never rejects.
   */
  readonly finished: Promise<void>;
  /** Open client connections (always 0 without the front: `Deno.serve` does not tell). */
  connections(): number;
  /** Stops accepting, lets in-flight requests finish, closes every connection. */
  shutdown(): Promise<void>;
}

/** On shutdown, how long in-flight requests get before their connections are closed. */
const DRAIN_MS = 10_000;

/** Starts the server; see the module comment. Rejects when it cannot listen. */
export function serve(handler: FetchHandler, options: ServeOptions): Promise<Server> {
  // The executor turns a synchronous failure (AddrInUse) into a rejection.
  return new Promise((resolve) => resolve(start(handler, options)));
}

function start(handler: FetchHandler, options: ServeOptions): Server {
  const log: ServerLog = options.log ?? (() => {});
  if (options.front === false) return serveDirect(handler, { ...options, log });
  const limits = { ...options.limits, maxConnections: fdBudget(options.limits, log) };
  const listen = options.listen ?? Deno.listen;
  const listener = listen({ hostname: options.hostname, port: options.port });
  const addr = listener.addr as Deno.NetAddr;
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  const acceptor = new Acceptor(listener, {
    limits,
    log,
    connection: {
      handler,
      log,
      maxHeadBytes: limits.maxHeadBytes ?? 64 * 1024,
      localHost: `${host}:${addr.port}`,
      inspectBodies: options.inspectBodies,
      lazyRequests: options.lazyRequests,
    },
  });
  options.onListen?.(addr);
  const accepting = acceptor.run();
  let stopping: Promise<void> | undefined;
  let resolveFinished: () => void;
  const finished = new Promise<void>((resolve) => resolveFinished = resolve);
  const shutdown = () =>
    stopping ??= (async () => {
      acceptor.stop();
      await accepting;
      await acceptor.drain(DRAIN_MS);
      resolveFinished();
    })();
  return { addr, front: true, finished, connections: () => acceptor.active.size, shutdown };
}

/** `Deno.serve` on TCP, no limits (see the module comment). */
function serveDirect(handler: FetchHandler, options: ServeOptions & { log: ServerLog }): Server {
  const { log } = options;
  let stopping = false;
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    // The service compresses by its own settings (compress.ts), as the front does not.
    automaticCompression: false,
    onListen() {},
    onError(error) {
      log("error", "unhandled server error", { error: String(error) });
      return new Response("Internal Server Error", { status: 500 });
    },
  }, handler);
  options.onListen?.(server.addr);
  // Unlike the front, `Deno.serve` ends on an accept error (EMFILE): say so; the caller
  // decides (src/main.ts exits non-zero so that a supervisor restarts the service).
  const finished = server.finished.then(() => "finished", (error) => error).then((why) => {
    if (!stopping) log("error", "server stopped accepting", { error: String(why) });
  });
  return {
    addr: server.addr,
    front: false,
    finished,
    connections: () => 0,
    shutdown: async () => {
      stopping = true;
      await server.shutdown().catch(() => {});
      await finished;
    },
  };
}

/**
 * Each client connection holds one descriptor: the cap is lowered so that connections always
 * fit the process's open-file limit (read from /proc/self/limits; kept as configured where
 * that cannot be read), with room left for the store, logs and outgoing connections.
 */
function fdBudget(limits: ServerLimits, log: ServerLog): number {
  let soft = Infinity;
  try {
    const text = Deno.readTextFileSync("/proc/self/limits");
    const m = /^Max open files\s+(\d+)/m.exec(text);
    if (m) soft = Number(m[1]);
  } catch { /* not Linux or no read permission */ }
  const fit = Math.max(1, soft - 128);
  if (fit < limits.maxConnections) {
    log("warn", "SERVER_MAX_CONNECTIONS lowered to fit the open-file limit", {
      configured: limits.maxConnections,
      effective: fit,
      openFileLimit: soft,
    });
    return fit;
  }
  return limits.maxConnections;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Accepts connections within the cap and runs each; a sweeper enforces the timeouts. */
class Acceptor {
  readonly active = new Set<Connection>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(
    private readonly listener: Deno.Listener,
    readonly o: {
      limits: ServerLimits;
      log: ServerLog;
      connection: ConstructorParameters<typeof Connection>[1];
    },
  ) {
    const { headersTimeoutMs, idleTimeoutMs } = o.limits;
    const every = Math.max(20, Math.min(250, Math.min(headersTimeoutMs, idleTimeoutMs) / 4));
    this.sweeper = setInterval(() => this.sweep(), every);
  }

  async run(): Promise<void> {
    while (!this.closed) {
      let conn: Deno.Conn;
      try {
        conn = await this.listener.accept();
      } catch (error) {
        if (this.closed || error instanceof Deno.errors.BadResource) break;
        // EMFILE/ENFILE and friends: log, back off a little, keep serving.
        this.o.log("error", "accept failed", { error: String(error) });
        await delay(50);
        continue;
      }
      if (this.active.size >= this.o.limits.maxConnections) {
        answerAndClose(conn, REFUSALS[503]); // shed: past the cap
        continue;
      }
      // Chunked answers (change feeds) are written piece by piece: no Nagle delay.
      if ("setNoDelay" in conn) (conn as Deno.TcpConn).setNoDelay(true);
      const connection = new Connection(conn, this.o.connection);
      this.active.add(connection);
      const running = connection.run().finally(() => {
        this.active.delete(connection);
        this.running.delete(running);
      });
      this.running.add(running);
    }
  }

  private sweep(): void {
    const now = Date.now();
    const { headersTimeoutMs, idleTimeoutMs } = this.o.limits;
    for (const c of this.active) {
      if (c.headSince !== null && now - c.headSince > headersTimeoutMs) {
        c.fail(c.answered ? null : REFUSALS[408]);
      } else if (now - c.lastActivity > idleTimeoutMs) c.close();
    }
  }

  /** Stops accepting; idle connections close now, busy ones after their answer. */
  stop(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    try {
      this.listener.close();
    } catch { /* already closed */ }
    for (const c of this.active) c.stop();
  }

  /** Waits (at most `ms`) for the connections to end, then closes what is left. */
  async drain(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => timer = setTimeout(resolve, ms));
    await Promise.race([Promise.all([...this.running]), deadline]);
    clearTimeout(timer);
    for (const c of this.active) c.close();
    await Promise.all([...this.running]);
  }
}
