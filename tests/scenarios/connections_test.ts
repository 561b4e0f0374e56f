/**
 * Connection limits of the HTTP front (src/http/server.ts), against a started service on
 * each store: header-read timeout, idle timeout, connection cap, accept errors survived.
 * After each attack the service answers a normal request within 100 ms.
 */
import assert from "node:assert/strict";
import { createService } from "../../src/mod.ts";
import { serve, type Server, type ServerLimits } from "../../src/http/server.ts";
import { createLogger } from "../../src/log.ts";
import { type StoreKind, STORES, storeSettings } from "../support/harness.ts";
import { Client } from "../support/client.ts";
import { answersQuickly } from "../support/hostile.ts";
import { closeQuietly, readUntilClosed } from "../support/net.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
};

const LIMITS: ServerLimits = { headersTimeoutMs: 400, idleTimeoutMs: 800, maxConnections: 64 };

interface Front {
  server: Server;
  port: number;
  records: Record<string, unknown>[];
}

/** Starts the service behind the front; `body` runs, then everything stops. */
async function withFront(
  kind: StoreKind,
  opts: {
    limits?: Partial<ServerLimits>;
    listen?: (o: { hostname: string; port: number }) => Deno.Listener;
  },
  body: (f: Front) => Promise<void>,
): Promise<void> {
  const store = await storeSettings(kind);
  const records: Record<string, unknown>[] = [];
  const service = await createService({ ...SETTINGS, ...store }, {
    env: false,
    logger: createLogger((r) => records.push(r)),
  });
  const server = await serve(service.fetch as never, {
    hostname: "127.0.0.1",
    port: 0,
    limits: { ...LIMITS, ...opts.limits },
    log: (level, message, extra) => records.push({ level, message, ...extra }),
    listen: opts.listen,
  });
  try {
    await body({ server, port: server.addr.port, records });
  } finally {
    await server.shutdown();
    await service.close();
    if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
  }
}

function connections(
  name: string,
  body: (f: Front) => Promise<void>,
  limits?: Partial<ServerLimits>,
) {
  for (const kind of STORES) {
    Deno.test({
      name: `[${kind}] ${name}`,
      sanitizeOps: false,
      sanitizeResources: false,
      fn: () => withFront(kind, { limits }, body),
    });
  }
}

const encode = (s: string) => new TextEncoder().encode(s);

/** Asserts the service on `port` still answers a normal request quickly. */
function stillAnswers(port: number): Promise<void> {
  return answersQuickly(new Client(`http://127.0.0.1:${port}/`), "people");
}

connections(
  "partial-header connections are closed after the header timeout",
  async ({ port, server }) => {
    const conns: Deno.Conn[] = [];
    for (let i = 0; i < 50; i++) {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      await c.write(encode("GET /people HTTP/1.1\r\nHost: x\r\nX-Slow: "));
      conns.push(c);
    }
    const silent = await Deno.connect({ hostname: "127.0.0.1", port });
    const t0 = performance.now();
    const results = await Promise.all([...conns, silent].map((c) => readUntilClosed(c, 3000)));
    const ms = performance.now() - t0;
    for (const r of results) {
      assert.ok(r.closed, "connection left open");
      assert.ok(r.text === "" || r.text.startsWith("HTTP/1.1 408"), r.text);
    }
    assert.ok(ms < LIMITS.headersTimeoutMs + 1000, `closed after ${ms.toFixed(0)} ms`);
    [...conns, silent].forEach(closeQuietly);
    await stillAnswers(port);
    assert.ok(server.connections() <= 1);
  },
);

connections(
  "past SERVER_MAX_CONNECTIONS new connections are shed with 503",
  async ({ port, server }) => {
    const held: Deno.Conn[] = [];
    for (let i = 0; i < 8; i++) held.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    const deadline = Date.now() + 2000;
    while (server.connections() < 8 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(server.connections(), 8);
    const extra = await Deno.connect({ hostname: "127.0.0.1", port });
    const shed = await readUntilClosed(extra, 2000);
    assert.ok(shed.closed);
    assert.match(shed.text, /^HTTP\/1\.1 503/);
    closeQuietly(extra);
    held.forEach(closeQuietly);
    while (server.connections() > 0 && Date.now() < deadline + 2000) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await stillAnswers(port);
  },
  { maxConnections: 8, headersTimeoutMs: 5000, idleTimeoutMs: 5000 },
);

connections("idle keep-alive connections and stalled bodies are closed", async ({ port }) => {
  const keepAlive = await Deno.connect({ hostname: "127.0.0.1", port });
  await keepAlive.write(encode("GET /people HTTP/1.1\r\nHost: x\r\n\r\n"));
  const stalled = await Deno.connect({ hostname: "127.0.0.1", port });
  await stalled.write(
    encode(
      'POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na',
    ),
  );
  const t0 = performance.now();
  const [a, b] = await Promise.all([
    readUntilClosed(keepAlive, 4000),
    readUntilClosed(stalled, 4000),
  ]);
  const ms = performance.now() - t0;
  assert.match(a.text, /^HTTP\/1\.1 200/);
  assert.ok(a.closed && b.closed, "connection left open");
  assert.ok(ms < LIMITS.idleTimeoutMs + 1000, `closed after ${ms.toFixed(0)} ms`);
  closeQuietly(keepAlive);
  closeQuietly(stalled);
  await stillAnswers(port);
});

connections("pipelined and chunked requests are served in turn", async ({ port }) => {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(encode(
    "POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
      'Transfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\n9\r\ne":"ann"}\r\n0\r\n\r\n' +
      "GET /people HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
  ));
  const { text, closed } = await readUntilClosed(conn, 3000);
  closeQuietly(conn);
  assert.ok(closed);
  assert.match(text, /^HTTP\/1\.1 201/);
  assert.match(text, /HTTP\/1\.1 200[\s\S]*"name":"ann"/);
}, { headersTimeoutMs: 5000, idleTimeoutMs: 5000 });

connections(
  "a client cannot choose its address with a header (the former front's internal one)",
  async ({ port, records }) => {
    const res = await fetch(`http://127.0.0.1:${port}/people`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-eve-internal-client-addr": "6.6.6.6 1" },
      body: JSON.stringify({ name: "bob" }),
    });
    await res.body?.cancel();
    assert.equal(res.status, 201);
    const ips = records.filter((r) => "clientip" in r).map((r) => r.clientip);
    assert.ok(ips.length > 0);
    assert.ok(ips.every((ip) => ip === "127.0.0.1"), JSON.stringify(ips));
  },
);

for (const kind of STORES) {
  Deno.test({
    name: `[${kind}] accept errors (EMFILE) are logged and survived`,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      let failures = 2;
      const listen = (o: { hostname: string; port: number }): Deno.Listener => {
        const real = Deno.listen(o);
        return new Proxy(real, {
          get(target, prop) {
            if (prop === "accept") {
              return () =>
                failures-- > 0
                  ? Promise.reject(new Error("Too many open files (os error 24)"))
                  : target.accept();
            }
            const v = Reflect.get(target, prop, target);
            return typeof v === "function" ? v.bind(target) : v;
          },
        });
      };
      await withFront(kind, { listen }, async ({ port, records }) => {
        const res = await fetch(`http://127.0.0.1:${port}/people`);
        await res.body?.cancel();
        assert.equal(res.status, 200);
        assert.equal(records.filter((r) => r.message === "accept failed").length, 2);
        await stillAnswers(port);
      });
    },
  });
}
