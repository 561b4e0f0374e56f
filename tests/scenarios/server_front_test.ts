/**
 * SERVER_FRONT (src/http/server.ts): the service serves with its own HTTP server and its limits, and with `Deno.serve`, on
 * each store, and the front's limits (header timeout, connection cap) apply only with it.
 * Without it `Deno.serve` listens on TCP itself, for deployments behind a proxy that enforces
 * those limits. The command line honours the setting too. Every wait has a deadline.
 */
import assert from "node:assert/strict";
import { STORES, storeSettings } from "../support/harness.ts";
import { Client } from "../support/client.ts";
import { withServedService } from "../support/served.ts";
import { closeQuietly, readUntilClosed } from "../support/net.ts";
import { startMain } from "../support/main_process.ts";
import { until, withDeadline } from "../support/wait.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
};

const LIMITS = { headersTimeoutMs: 500, idleTimeoutMs: 5000, maxConnections: 3 };

const encode = (s: string) => new TextEncoder().encode(s);

/** `count` connections that send half a request head and then nothing. */
async function stalledHeads(port: number, count: number): Promise<Deno.Conn[]> {
  const conns: Deno.Conn[] = [];
  for (let i = 0; i < count; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(encode("GET /people HTTP/1.1\r\nHost: x\r\nX-Slow: "));
    conns.push(conn);
  }
  return conns;
}

for (const kind of STORES) {
  for (const front of [true, false]) {
    Deno.test({
      name: `[${kind}] SERVER_FRONT ${front}: serves; front limits ${
        front ? "apply" : "do not apply"
      }`,
      sanitizeOps: false,
      sanitizeResources: false,
      fn: () =>
        withServedService(kind, SETTINGS, { limits: LIMITS, front }, async ({ server, api }) => {
          assert.equal(server.front, front);
          const created = await api.post("people", { name: "ada" });
          assert.equal(created.status, 201, created.text);
          const read = await api.get(`people/${created.body._id}`);
          assert.equal(read.status, 200);
          assert.equal(read.body.name, "ada");

          const port = server.addr.port;
          // Fill SERVER_MAX_CONNECTIONS (3), counting the client's pooled keep-alive
          // connection when there is one (without the front nothing counts them).
          const held = LIMITS.maxConnections - server.connections();
          const stalled = await stalledHeads(port, held);
          if (front) await until(() => server.connections() === 3, "all held", { ms: 2000 });
          // One connection more: past SERVER_MAX_CONNECTIONS only with the front.
          const third = await Deno.connect({ hostname: "127.0.0.1", port });
          await third.write(encode("GET /people HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
          const answer = await readUntilClosed(third, 3000);
          closeQuietly(third);
          assert.ok(answer.closed, "the third connection was answered and closed");
          if (front) assert.match(answer.text, /^HTTP\/1\.1 503/);
          else assert.match(answer.text, /^HTTP\/1\.1 200/);

          // The stalled heads: closed after SERVER_HEADERS_TIMEOUT_MS only with the front.
          const waited = LIMITS.headersTimeoutMs + 1000;
          const results = await Promise.all(stalled.map((c) => readUntilClosed(c, waited)));
          stalled.forEach(closeQuietly);
          for (const r of results) {
            assert.equal(r.closed, front, `closed: ${r.closed} after ${waited} ms`);
            if (front) assert.ok(r.text === "" || r.text.startsWith("HTTP/1.1 408"), r.text);
            else assert.equal(r.text, "");
          }
          const again = await api.get("people");
          assert.equal(again.status, 200);
          assert.equal(again.body._items.length, 1);
        }),
    });
  }

  Deno.test({
    name: `[${kind}] the command line with SERVER_FRONT false serves without the front`,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const dir = await Deno.makeTempDir({ prefix: "restsvc-front-" });
      const store = await storeSettings(kind);
      await Deno.writeTextFile(
        `${dir}/settings.json`,
        JSON.stringify({ ...SETTINGS, SERVER_FRONT: false }),
      );
      const main = await startMain(`${dir}/settings.json`, { env: store });
      const stderr = main.stderr;
      try {
        assert.match(stderr(), /Deno\.serve without connection limits \(SERVER_FRONT false\)/);
        const api = new Client(main.base);
        const created = await api.post("people", { name: "bob" });
        assert.equal(created.status, 201, created.text);
        const list = await api.get("people");
        assert.equal(list.status, 200);
        assert.equal(list.body._items.length, 1);
        main.child.kill("SIGTERM");
        const status = await withDeadline(main.child.status, 10_000, "the process exits");
        assert.equal(status.code, 0, stderr());
      } finally {
        await main.kill();
        await Deno.remove(dir, { recursive: true });
        if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
      }
    },
  });
}
