/**
 * The HTTP server: connection limits `Deno.serve` does not offer.
 *
 * `Deno.serve` has no header-read timeout, no idle timeout and no connection cap, and an
 * accept error (EMFILE) ends its `finished` promise; `node:http` under Deno ignores
 * `headersTimeout`/`requestTimeout`/`maxConnections`. So a small TCP front built on
 * `Deno.listen` takes the connections and enforces the limits, and hands the bytes to
 * `Deno.serve` listening on a private Unix socket (a 0700 temporary directory):
 *
 * - SERVER_HEADERS_TIMEOUT_MS: from a connection's start, or a request's first byte, to the
 *   end of its head; past it the connection is closed (408 when nothing was answered yet);
 * - SERVER_IDLE_TIMEOUT_MS: no byte in either direction for that long closes the connection
 *   (idle keep-alive, stalled bodies); keep it above QUERY_TIMEOUT_MS;
 * - SERVER_MAX_CONNECTIONS: past it a new connection gets a 503 and is closed at once;
 * - accept errors (EMFILE, ...) are logged and the server keeps accepting.
 *
 * The front frames requests (Content-Length or chunked bodies) only to know where heads
 * are: bytes pass through unchanged except that each head gets the client address header
 * (any copy sent by the client is removed), which the handler turns back into `remoteAddr`.
 *
 * With `front: false` (SERVER_FRONT) `Deno.serve` listens on TCP itself: faster, but none of
 * the limits above apply; for deployments behind a proxy that enforces them.
 */

/** Limits of the front; see the module comment. */
export interface ServerLimits {
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  maxConnections: number;
  /** Largest request head (bytes); a bigger one answers 431. Default 64 KiB. */
  maxHeadBytes?: number;
}

/** What the server logs: a level, a message and fields. */
export type ServerLog = (
  level: "info" | "warn" | "error",
  message: string,
  extra?: Record<string, unknown>,
) => void;

/** The fetch handler, as `Deno.serve` calls it. */
export type FetchHandler = (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response>;

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
   * False serves with `Deno.serve` directly on TCP, without the front and its limits
   * (SERVER_FRONT); `limits` and `listen` are then unused. Default true.
   */
  front?: boolean;
}

/** A running server. */
export interface Server {
  readonly addr: Deno.NetAddr;
  /** Whether the TCP front (and its limits) is in place. */
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

/** Header carrying the client address from the front to the handler. */
const ADDR_HEADER = "x-eve-internal-client-addr";
const CRLF2 = [13, 10, 13, 10];
const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");
const BUFFER = 16 * 1024;
/** Answers are often bigger than requests (pages): fewer reads and writes per answer. */
const ANSWER_BUFFER = 32 * 1024;
/** On shutdown, how long connections get to relay their last answers before being closed. */
const SETTLE_MS = 2000;

const answer = (status: string) =>
  encoder.encode(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
const SHED = answer("503 Service Unavailable");
const TIMEOUT = answer("408 Request Timeout");
const TOO_LARGE = answer("431 Request Header Fields Too Large");
const BAD = answer("400 Bad Request");

/** Starts the server; see the module comment. */
export async function serve(handler: FetchHandler, options: ServeOptions): Promise<Server> {
  const log: ServerLog = options.log ?? (() => {});
  if (options.front === false) return serveDirect(handler, { ...options, log });
  const dir = await Deno.makeTempDir({ prefix: "eve-http-" });
  await Deno.chmod(dir, 0o700);
  const limits = { ...options.limits, maxConnections: fdBudget(options.limits, log) };
  const inner = new Inner(dir, { handler, log });
  const listen = options.listen ?? Deno.listen;
  const listener = listen({ hostname: options.hostname, port: options.port });
  const addr = listener.addr as Deno.NetAddr;
  const front = new Front(listener, { inner, limits, log });
  options.onListen?.(addr);
  const accepting = front.run();
  let stopping: Promise<void> | undefined;
  const shutdown = () =>
    stopping ??= (async () => {
      front.stop();
      await accepting;
      await inner.shutdown();
      // The inner server has answered everything; let the front relay the last answers.
      await front.settle(SETTLE_MS);
      front.closeAll();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    })();
  let resolveFinished: () => void;
  const finished = new Promise<void>((resolve) => resolveFinished = resolve);
  const server: Server = {
    addr,
    front: true,
    finished,
    connections: () => front.active.size,
    shutdown: () => shutdown().then(() => resolveFinished()),
  };
  return server;
}

/** `Deno.serve` on TCP, no front (see the module comment). */
function serveDirect(handler: FetchHandler, options: ServeOptions & { log: ServerLog }): Server {
  const { log } = options;
  let stopping = false;
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
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
 * Each client connection holds three descriptors (client socket, upstream socket, the inner
 * server's end): the cap is lowered so that they always fit the process's open-file limit
 * (read from /proc/self/limits; kept as configured where that cannot be read).
 */
function fdBudget(limits: ServerLimits, log: ServerLog): number {
  let soft = Infinity;
  try {
    const text = Deno.readTextFileSync("/proc/self/limits");
    const m = /^Max open files\s+(\d+)/m.exec(text);
    if (m) soft = Number(m[1]);
  } catch { /* not Linux or no read permission */ }
  const fit = Math.max(1, Math.floor((soft - 128) / 3));
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

/**
 * The inner `Deno.serve` on a private Unix socket. Its accept loop ends on an accept error;
 * it is then started again on a new socket, so the service keeps answering.
 */
class Inner {
  private server!: Deno.HttpServer<Deno.UnixAddr>;
  private generation = 0;
  private stopping = false;
  path = "";

  constructor(
    private readonly dir: string,
    private readonly o: { handler: FetchHandler; log: ServerLog },
  ) {
    this.start();
  }

  private start(): void {
    const { handler, log } = this.o;
    this.path = `${this.dir}/http-${this.generation++}.sock`;
    const server = Deno.serve({
      transport: "unix",
      path: this.path,
      onListen() {},
      onError(error) {
        log("error", "unhandled server error", { error: String(error) });
        return new Response("Internal Server Error", { status: 500 });
      },
    }, (request, info) => handler(request, innerInfo(request, info)));
    this.server = server;
    const restart = (error?: unknown) => {
      if (this.stopping || this.server !== server) return;
      log("error", "inner server stopped; starting it again", { error: String(error) });
      setTimeout(() => this.stopping || this.start(), 50);
    };
    server.finished.then(() => restart("finished"), restart);
  }

  async shutdown(): Promise<void> {
    this.stopping = true;
    await this.server.shutdown().catch(() => {});
  }
}

/** The handler's view of the client: the address the front saw. */
function innerInfo(request: Request, info: Deno.ServeHandlerInfo): Deno.ServeHandlerInfo {
  const sent = request.headers.get(ADDR_HEADER);
  if (!sent) return info;
  const cut = sent.lastIndexOf(" ");
  const remoteAddr: Deno.NetAddr = {
    transport: "tcp",
    hostname: sent.slice(0, cut),
    port: Number(sent.slice(cut + 1)),
  };
  return { ...info, remoteAddr } as Deno.ServeHandlerInfo;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Front {
  readonly active = new Set<Connection>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(
    private readonly listener: Deno.Listener,
    readonly o: { inner: Inner; limits: ServerLimits; log: ServerLog },
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
        shed(conn, SHED);
        continue;
      }
      const connection = new Connection(conn, this.o);
      this.active.add(connection);
      const running = connection.run().finally(() => {
        this.active.delete(connection);
        this.running.delete(running);
      });
      this.running.add(running);
    }
  }

  private sweep(): void {
    const now = performance.now();
    for (const c of this.active) c.check(now);
  }

  stop(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    try {
      this.listener.close();
    } catch { /* already closed */ }
  }

  /**
   * Waits (at most `ms`) for the connections to end by themselves: once the inner server
   * has shut down, each one still has to pass its last answer on to its client.
   */
  async settle(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => timer = setTimeout(resolve, ms));
    await Promise.race([Promise.all([...this.running]), deadline]);
    clearTimeout(timer);
  }

  closeAll(): void {
    for (const c of this.active) c.close();
  }
}

/** Writes a short answer and closes, without waiting on a client that does not read. */
function shed(conn: Deno.Conn, bytes: Uint8Array): void {
  conn.write(bytes).catch(() => {}).finally(() => {
    try {
      conn.close();
    } catch { /* closed */ }
  });
}

type State = "head" | "length" | "chunk-size" | "chunk-data" | "chunk-end" | "trailers";

/** One client connection and its upstream connection to the inner server. */
class Connection {
  /** When the current head started (connection start counts), or null between requests. */
  private headSince: number | null;
  private lastActivity: number;
  private answered = false;
  private closed = false;
  private upstream: Deno.Conn | null = null;
  private readonly addr: string;
  // Request framing
  private state: State = "head";
  private head: Uint8Array[] = [];
  private headBytes = 0;
  private remaining = 0;
  private line = "";

  constructor(
    private readonly conn: Deno.Conn,
    private readonly o: { inner: Inner; limits: ServerLimits; log: ServerLog },
  ) {
    this.headSince = this.lastActivity = performance.now();
    const remote = conn.remoteAddr as Deno.NetAddr;
    this.addr = `${remote.hostname} ${remote.port}`;
  }

  async run(): Promise<void> {
    try {
      this.upstream = await Deno.connect({ transport: "unix", path: this.o.inner.path });
    } catch (error) {
      this.o.log("error", "cannot reach the inner server", { error: String(error) });
      shed(this.conn, SHED);
      this.closed = true;
      return;
    }
    if (this.closed) return this.close();
    await Promise.all([this.fromClient(this.upstream), this.toClient(this.upstream)]);
    this.close();
  }

  /** Closes when a head takes too long or the connection is idle. */
  check(now: number): void {
    const { headersTimeoutMs, idleTimeoutMs } = this.o.limits;
    if (this.headSince !== null && now - this.headSince > headersTimeoutMs) {
      this.fail(this.answered ? null : TIMEOUT);
    } else if (now - this.lastActivity > idleTimeoutMs) this.close();
  }

  close(): void {
    if (this.closed && !this.upstream) return;
    this.closed = true;
    for (const c of [this.conn, this.upstream]) {
      try {
        c?.close();
      } catch { /* already closed */ }
    }
    this.upstream = null;
  }

  /** Ends the connection, first answering `bytes` when no response has started. */
  private fail(bytes: Uint8Array | null): void {
    if (bytes && !this.answered && !this.closed) {
      this.closed = true;
      try {
        this.upstream?.close();
      } catch { /* closed */ }
      this.upstream = null;
      shed(this.conn, bytes);
      return;
    }
    this.close();
  }

  private async fromClient(up: Deno.Conn): Promise<void> {
    const buf = new Uint8Array(BUFFER);
    try {
      while (!this.closed) {
        const n = await this.conn.read(buf);
        if (n === null) break;
        this.lastActivity = performance.now();
        const out = this.frame(buf.subarray(0, n));
        if (out === null) return;
        // One write per read: a head and the body bytes that came with it go together.
        if (out.length === 1) await writeAll(up, out[0]);
        else if (out.length > 1) await writeAll(up, concat(out, totalLength(out)));
      }
      // Client finished sending: let the upstream answer what it has.
      await up.closeWrite().catch(() => {});
    } catch {
      this.close();
    }
  }

  private async toClient(up: Deno.Conn): Promise<void> {
    const buf = new Uint8Array(ANSWER_BUFFER);
    try {
      while (!this.closed) {
        const n = await up.read(buf);
        if (n === null) break;
        this.answered = true;
        this.lastActivity = performance.now();
        await writeAll(this.conn, buf.subarray(0, n));
      }
    } catch { /* either side closed */ }
    this.close();
  }

  /**
   * Splits client bytes into what to forward: request heads (rewritten) and body bytes.
   * Returns null after refusing the connection.
   */
  private frame(bytes: Uint8Array): Uint8Array[] | null {
    const out: Uint8Array[] = [];
    let i = 0;
    while (i < bytes.length) {
      switch (this.state) {
        case "head": {
          if (this.headBytes === 0) {
            // Blank lines between requests are allowed; a new head starts its clock.
            while (i < bytes.length && (bytes[i] === 13 || bytes[i] === 10)) i++;
            if (i === bytes.length) break;
            this.headSince ??= performance.now();
            this.answered = false;
          }
          const end = findHeadEnd(bytes, i, { before: this.head });
          const take = end === -1 ? bytes.length - i : end - i;
          if (this.headBytes + take > (this.o.limits.maxHeadBytes ?? 64 * 1024)) {
            this.fail(TOO_LARGE);
            return null;
          }
          this.head.push(bytes.slice(i, i + take));
          this.headBytes += take;
          i += take;
          if (end !== -1) {
            const head = this.finishHead();
            if (head === null) return null;
            out.push(head);
          }
          break;
        }
        case "length": {
          const take = Math.min(this.remaining, bytes.length - i);
          out.push(bytes.subarray(i, i + take));
          i += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = "head";
          break;
        }
        case "chunk-data": {
          const take = Math.min(this.remaining, bytes.length - i);
          out.push(bytes.subarray(i, i + take));
          i += take;
          this.remaining -= take;
          if (this.remaining === 0) this.state = "chunk-end";
          break;
        }
        default: {
          // Line-oriented chunk framing: size lines, the CRLF after data, trailers.
          const start = i;
          while (i < bytes.length && bytes[i] !== 10) i++;
          const complete = i < bytes.length;
          if (complete) i++;
          out.push(bytes.subarray(start, i));
          this.line += latin1.decode(bytes.subarray(start, i));
          if (this.line.length > 4096) {
            this.fail(BAD);
            return null;
          }
          if (complete && !this.chunkLine(this.line.trim())) {
            this.fail(BAD);
            return null;
          }
          if (complete) this.line = "";
        }
      }
    }
    return out;
  }

  /** Advances the chunk framing past one complete line; false when malformed. */
  private chunkLine(line: string): boolean {
    if (this.state === "chunk-end") {
      this.state = "chunk-size";
      return line === "";
    }
    if (this.state === "trailers") {
      if (line === "") this.state = "head";
      return true;
    }
    const size = /^([0-9a-fA-F]{1,12})(?:;.*)?$/.exec(line);
    if (!size) return false;
    this.remaining = parseInt(size[1], 16);
    this.state = this.remaining === 0 ? "trailers" : "chunk-data";
    return true;
  }

  /** The complete head, rewritten; sets the body framing. Null after refusing. */
  private finishHead(): Uint8Array | null {
    const text = latin1.decode(concat(this.head, this.headBytes));
    this.head = [];
    this.headBytes = 0;
    this.headSince = null;
    const lines = text.split("\r\n");
    const requestLine = lines[0];
    if (!/^[A-Z]+ \S+ HTTP\/1\.[01]$/.test(requestLine)) {
      this.fail(BAD);
      return null;
    }
    const kept: string[] = [requestLine, `${ADDR_HEADER}: ${this.addr}`];
    let length: string | null = null;
    let chunked = false;
    let encodings = 0;
    for (const line of lines.slice(1)) {
      if (line === "") continue;
      const colon = line.indexOf(":");
      const name = (colon === -1 ? line : line.slice(0, colon)).toLowerCase();
      const value = colon === -1 ? "" : line.slice(colon + 1).trim();
      if (name === ADDR_HEADER) continue;
      if (name === "content-length") {
        if (length !== null && length !== value) return this.refuse();
        length = value;
      } else if (name === "transfer-encoding") {
        encodings++;
        chunked = value.toLowerCase() === "chunked";
      }
      kept.push(line);
    }
    if (encodings > 0) {
      if (!chunked || encodings > 1 || length !== null) return this.refuse();
      this.state = "chunk-size";
    } else if (length !== null) {
      if (!/^\d{1,15}$/.test(length)) return this.refuse();
      this.remaining = Number(length);
      this.state = this.remaining > 0 ? "length" : "head";
    } else this.state = "head";
    return encoder.encode(kept.join("\r\n") + "\r\n\r\n");
  }

  private refuse(): null {
    this.fail(BAD);
    return null;
  }
}

/**
 * Index in `bytes`, searched from `from`, just past the CRLFCRLF ending a head whose earlier
 * bytes are `options.before`, or -1.
 */
function findHeadEnd(bytes: Uint8Array, from: number, options: { before: Uint8Array[] }): number {
  const { before } = options;
  // Up to three bytes of the terminator may sit at the end of the previous chunks.
  const tail: number[] = [];
  for (let k = before.length - 1; k >= 0 && tail.length < 3; k--) {
    const b = before[k];
    for (let j = b.length - 1; j >= 0 && tail.length < 3; j--) tail.unshift(b[j]);
  }
  for (let carry = Math.min(3, tail.length); carry > 0; carry--) {
    const need = 4 - carry;
    if (bytes.length - from < need) continue;
    let ok = true;
    for (let j = 0; j < carry && ok; j++) ok = tail[tail.length - carry + j] === CRLF2[j];
    for (let j = 0; j < need && ok; j++) ok = bytes[from + j] === CRLF2[carry + j];
    if (ok) return from + need;
  }
  for (let i = from; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i + 4;
    }
  }
  return -1;
}

function totalLength(parts: Uint8Array[]): number {
  let length = 0;
  for (const p of parts) length += p.length;
  return length;
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}
