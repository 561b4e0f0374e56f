/**
 * The shipped reverse proxy (deploy/nginx.conf, run by Debian's nginx without privileges of its
 * own: `nginx -p DIR -c FILE`, every path inside DIR) in front of the service on
 * `Deno.serve`, with the deployment's settings (deploy/settings.ts), on each store. Only the
 * addresses, paths, worker counts and the header timeout (10 s shipped, 4 s here) are
 * substituted; each substitution must match the file exactly once. It shows:
 * - a head trickled a byte every 3 s is closed within the header timeout;
 * - a body trickled a byte every 3 s is answered 408 by the service's minimum data rate
 *   (nginx restarts its own body timeout on every byte);
 * - 1,500 idle connections from 127.0.0.2 do not keep a client on 127.0.0.3 from a 200;
 * - a chunked body ending `0\r\n` followed by a request reaches the service as no extra
 *   request;
 * - a change-feed event arrives through the proxy within 1 s;
 * - the write buffer's padding (WRITE_BUFFER_BYTES) never reaches a client;
 * - a Range download is byte-exact;
 * - the rate limiter counts the real client address and ignores a forged X-Forwarded-For
 *   from anyone but the proxy.
 * Every wait has a deadline.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { createService } from "../../src/mod.ts";
import { createLogger } from "../../src/log.ts";
import { startServer } from "../../src/http/server.ts";
import deployment from "../../deploy/settings.ts";
import { STORES, storeSettings } from "../support/harness.ts";
import { skipUnless } from "../support/skip.ts";
import { closeQuietly, freePort, readAnswer, readUntilClosed } from "../support/net.ts";
import { openFeed } from "../support/sse.ts";
import { eventually, withDeadline } from "../support/wait.ts";

const CONF = new URL("../../deploy/nginx.conf", import.meta.url).pathname;
/** The header timeout of the substituted file. */
const HEADER_TIMEOUT_MS = 4000;
/** GETs per client address per minute in these scenarios. */
const GET_LIMIT = 20;

/** Debian's nginx, on PATH or where Debian puts it; null when it is not installed. */
function findNginx(): string | null {
  for (const path of ["/usr/sbin/nginx", "/usr/bin/nginx"]) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch { /* not there */ }
  }
  return null;
}
const NGINX = findNginx();

/** Replaces `pattern` in `text`, which must match exactly once. */
function replaceOnce(text: string, pattern: RegExp, by: string): string {
  const matches = text.match(new RegExp(pattern.source, "gm"));
  assert.equal(matches?.length, 1, `deploy/nginx.conf: ${pattern} must match once`);
  return text.replace(new RegExp(pattern.source, "m"), by);
}

/** deploy/nginx.conf with this machine's addresses and paths (see the module comment). */
export function testConfig(text: string, o: { dir: string; port: number; upstream: number }) {
  const edits: Array<[RegExp, string]> = [
    [/^worker_processes .*;$/, "worker_processes 1;"],
    [/^worker_rlimit_nofile .*;$/, "worker_rlimit_nofile 8192;"],
    [/^ {2}worker_connections .*;$/, "  worker_connections 4096;"],
    [/^pid .*;$/, `pid ${o.dir}/nginx.pid;`],
    [/^error_log .*;$/, `error_log ${o.dir}/error.log warn;`],
    [
      /^ {2}access_log .*;$/,
      `  access_log ${o.dir}/access.log;\n` +
      ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
        .map((kind) => `  ${kind}_temp_path ${o.dir}/${kind}_temp;`).join("\n"),
    ],
    [/^ {2}client_header_timeout .*;$/, `  client_header_timeout ${HEADER_TIMEOUT_MS / 1000}s;`],
    [/^ {4}server api1:5000 (.*);$/, `    server 127.0.0.1:${o.upstream} $1;`],
    [/^ {4}server api2:5000 .*;\n/, ""],
    [/^ {4}listen 8080;$/, `    listen 127.0.0.1:${o.port};`],
  ];
  for (const [pattern, by] of edits) text = replaceOnce(text, pattern, by);
  return text;
}

const encode = (s: string) => new TextEncoder().encode(s);
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes `bytes` a byte every `everyMs` until done, the peer closes, or `stop` resolves. */
async function trickle(
  conn: Deno.Conn,
  bytes: Uint8Array,
  everyMs: number,
  stop: Promise<unknown>,
) {
  let stopped = false;
  void stop.then(() => stopped = true);
  for (let i = 0; i < bytes.length && !stopped; i++) {
    try {
      await conn.write(bytes.subarray(i, i + 1));
    } catch {
      return; // closed
    }
    await Promise.race([delay(everyMs), stop]);
  }
}

/** A client bound to `address` (a loopback address of its own). */
const clientFrom = (address: string) => Deno.createHttpClient({ localAddress: address } as never);

/** Opens `count` TCP connections from `localAddress` to `port`; resolves once all are open. */
async function idleConnections(
  port: number,
  localAddress: string,
  count: number,
): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  const opened: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const socket = net.connect({ host: "127.0.0.1", port, localAddress });
    socket.on("error", () => {});
    sockets.push(socket);
    opened.push(
      new Promise((resolve, reject) => {
        socket.once("connect", () => resolve());
        socket.once("error", reject);
      }),
    );
  }
  await withDeadline(Promise.all(opened), 20_000, `${count} connections open`);
  return sockets;
}

const SETTINGS = {
  ...deployment,
  TRUSTED_PROXIES: ["127.0.0.1"],
  RATE_LIMIT_GET: [GET_LIMIT, 60],
  RETURN_MEDIA_AS_URL: true,
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET"],
  DOMAIN: {
    people: { changes: true, schema: { name: { type: "string" } } },
    files: { schema: { data: { type: "media" } } },
  },
};

for (const kind of STORES) {
  Deno.test({
    ...skipUnless(
      `[${kind}] deploy/nginx.conf in front of the service`,
      NGINX ? null : "nginx is not installed (.ci/run installs Debian's nginx)",
    ),
    sanitizeOps: false,
    sanitizeResources: false,
    async fn(t) {
      const dir = await Deno.makeTempDir({ prefix: "restsvc-nginx-" });
      // nginx's worker processes (another user when the tests run as root) write here.
      await Deno.chmod(dir, 0o777);
      const store = await storeSettings(kind);
      const service = await createService({ ...SETTINGS, ...store }, {
        env: false,
        logger: createLogger(() => {}),
      });
      /** Requests that reached the service, as "METHOD /path". */
      const reached: string[] = [];
      /** Answers of the service that carried the write buffer's padding. */
      let padded = 0;
      const server = await startServer(async (request, info) => {
        reached.push(`${request.method} ${new URL(request.url).pathname}`);
        const answer = await service.fetch(request, info);
        if (answer.headers.has("x-padding")) padded++;
        return answer;
      }, { hostname: "127.0.0.1", port: 0 });
      const port = freePort();
      const conf = `${dir}/nginx.conf`;
      await Deno.writeTextFile(
        conf,
        testConfig(await Deno.readTextFile(CONF), { dir, port, upstream: server.addr.port }),
      );
      const nginx = new Deno.Command(NGINX!, {
        args: ["-p", dir, "-c", conf, "-e", `${dir}/error.log`, "-g", "daemon off;"],
        stdout: "null",
        stderr: "piped",
        signal: AbortSignal.timeout(300_000),
      }).spawn();
      const nginxLog = () => Deno.readTextFile(`${dir}/error.log`).catch(() => "");
      const proxy = `http://127.0.0.1:${port}/`;
      const direct = `http://127.0.0.1:${server.addr.port}/`;
      const connect = () => Deno.connect({ hostname: "127.0.0.1", port });
      try {
        await eventually(
          async () => {
            try {
              const res = await fetch(`${proxy}health`);
              await res.body?.cancel();
              return res.status === 200;
            } catch {
              return false;
            }
          },
          "nginx answers through to the service",
          { ms: 10_000 },
        );

        await t.step(
          "a head trickled a byte every 3 s is closed within the header timeout",
          async () => {
            const conn = await connect();
            const t0 = performance.now();
            const head = encode("GET /people HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a".repeat(100));
            const closed = readUntilClosed(conn, HEADER_TIMEOUT_MS + 3000);
            const sending = trickle(conn, head, 3000, closed);
            const result = await closed;
            const ms = performance.now() - t0;
            closeQuietly(conn);
            await sending;
            assert.ok(result.closed, "the connection was left open");
            assert.ok(ms < HEADER_TIMEOUT_MS + 1500, `closed after ${ms.toFixed(0)} ms`);
            assert.ok(
              !reached.some((r) => r.startsWith("GET /people")),
              "the head reached the service",
            );
          },
        );

        await t.step(
          "a body trickled a byte every 3 s is cut by the service's rate rule",
          async () => {
            const conn = await connect();
            const body = encode(JSON.stringify({ name: "x".repeat(200) }));
            await conn.write(encode(
              "POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
                `Content-Length: ${body.length}\r\n\r\n`,
            ));
            const t0 = performance.now();
            const answer = readAnswer(conn, 15_000);
            const sending = trickle(conn, body, 3000, answer);
            const { text, complete } = await answer;
            const ms = performance.now() - t0;
            // The proxy closes the client's connection after the answer.
            const after = await readUntilClosed(conn, 3000);
            closeQuietly(conn);
            await sending;
            assert.ok(after.closed, "the proxy left the connection open");
            assert.ok(complete, text);
            assert.match(text, /^HTTP\/1\.1 408/, text);
            assert.match(text, /MIN_REQUEST_BODY_RATE/);
            const grace = deployment.MIN_REQUEST_BODY_RATE_GRACE_MS;
            // Cut soon after the grace period, with 200 of its bytes still to come (10 minutes).
            assert.ok(ms < grace + 3000, `answered after ${ms.toFixed(0)} ms`);
            assert.ok(reached.includes("POST /people"), "the body streamed to the service");
          },
        );

        await t.step(
          "1,500 idle connections from 127.0.0.2 leave a client on 127.0.0.3 served",
          async () => {
            const idle = await idleConnections(port, "127.0.0.2", 1500);
            try {
              const client = clientFrom("127.0.0.3");
              try {
                const t0 = performance.now();
                const res = await withDeadline(
                  fetch(`${proxy}people`, { client }),
                  3000,
                  "the answer",
                );
                await res.arrayBuffer();
                assert.equal(res.status, 200);
                assert.ok(performance.now() - t0 < 2000);
              } finally {
                client.close();
              }
              assert.ok(idle.every((s) => !s.destroyed), "the idle connections were dropped early");
            } finally {
              for (const socket of idle) socket.destroy();
            }
          },
        );

        await t.step("a chunked body ending 0 CRLF then a request: no extra request", async () => {
          const before = reached.length;
          const conn = await connect();
          await conn.write(encode(
            "POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
              'Transfer-Encoding: chunked\r\n\r\nd\r\n{"name":"ann"}\r\n0\r\n' +
              "POST /people HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
              'Content-Length: 15\r\n\r\n{"name":"eve"}\n',
          ));
          const { text } = await readUntilClosed(conn, 3000);
          closeQuietly(conn);
          // The proxy answered (it refuses the request line as a trailer field).
          assert.match(text, /^HTTP\/1\.1 \d{3}/);
          const posts = reached.slice(before).filter((r) => r === "POST /people");
          assert.ok(posts.length <= 1, `${posts.length} requests reached the service: ${text}`);
          const names = (await (await fetch(`${direct}people`)).json())._items.map(
            (p: { name: string }) => p.name,
          );
          assert.ok(!names.includes("eve"), "the smuggled request was served");
        });

        await t.step("a change-feed event arrives through the proxy within 1 s", async () => {
          const feed = await openFeed(`${proxy}people/_changes`);
          try {
            assert.equal(feed.status, 200);
            assert.equal((await feed.event()).event, "ready");
            const t0 = performance.now();
            const created = await fetch(`${proxy}people`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ name: "fay" }),
            });
            assert.equal(created.status, 201, await created.text());
            const event = await feed.event(1000);
            const ms = performance.now() - t0;
            assert.equal(event.event, "insert");
            assert.ok(ms < 1000, `arrived after ${ms.toFixed(0)} ms`);
          } finally {
            await feed.close();
          }
        });

        await t.step("answers through the proxy carry its request id", async () => {
          // The service echoes an id only when the request carried one; the proxy sets one.
          const viaProxy = await fetch(`${proxy}people`);
          await viaProxy.arrayBuffer();
          assert.equal(viaProxy.status, 200);
          assert.match(viaProxy.headers.get("x-request-id") ?? "", /^[0-9a-f]{32}$/);
          const again = await fetch(`${proxy}people`);
          await again.arrayBuffer();
          assert.notEqual(again.headers.get("x-request-id"), viaProxy.headers.get("x-request-id"));
          const plain = await fetch(`${direct}people`);
          await plain.arrayBuffer();
          assert.equal(plain.headers.get("x-request-id"), null);
        });

        await t.step(
          "the write buffer's padding stays between the proxy and the service",
          async () => {
            const before = padded;
            // Sixteen at once: the proxy opens connections to the service for them, whose
            // second answers (the next round's) are padded. Each round from an address of its
            // own, within the rate limit.
            for (let round = 0; round < 3; round++) {
              const client = clientFrom(`127.0.0.${17 + round}`);
              try {
                const answers = await Promise.all(
                  Array.from({ length: 16 }, () => fetch(`${proxy}people`, { client })),
                );
                for (const res of answers) {
                  await res.arrayBuffer();
                  assert.equal(res.status, 200);
                  assert.equal(res.headers.get("x-padding"), null);
                }
              } finally {
                client.close();
              }
            }
            assert.ok(padded > before, "no answer of the service was padded meanwhile");
          },
        );

        await t.step("a Range download is byte-exact", async () => {
          const bytes = new Uint8Array(300_000);
          for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + (i >> 8)) & 0xff;
          const form = new FormData();
          form.append("data", new Blob([bytes], { type: "application/octet-stream" }), "b.bin");
          const created = await fetch(`${proxy}files`, { method: "POST", body: form });
          const id = (await created.json())._id;
          assert.equal(created.status, 201);
          const url = (await (await fetch(`${proxy}files/${id}`)).json()).data as string;
          const whole = await fetch(new URL(url.slice(1), proxy));
          assert.equal(whole.status, 200);
          assert.deepEqual(new Uint8Array(await whole.arrayBuffer()), bytes);
          const part = await fetch(new URL(url.slice(1), proxy), {
            headers: { range: "bytes=1000-200999" },
          });
          assert.equal(part.status, 206);
          assert.equal(part.headers.get("content-range"), `bytes 1000-200999/${bytes.length}`);
          assert.deepEqual(new Uint8Array(await part.arrayBuffer()), bytes.slice(1000, 201000));
        });

        await t.step(
          "the rate limiter counts the real client, not a forged X-Forwarded-For",
          async () => {
            const statuses = async (base: string, from: string, forged: (i: number) => string) => {
              const client = clientFrom(from);
              try {
                const out: number[] = [];
                for (let i = 0; i <= GET_LIMIT; i++) {
                  const res = await fetch(`${base}people`, {
                    client,
                    headers: { "x-forwarded-for": forged(i) },
                  });
                  await res.body?.cancel();
                  out.push(res.status);
                }
                return out;
              } finally {
                client.close();
              }
            };
            const limited = [...Array(GET_LIMIT).fill(200), 429];
            // Through the proxy, a new forged address each time: counted as 127.0.0.4.
            assert.deepEqual(await statuses(proxy, "127.0.0.4", (i) => `10.9.8.${i}`), limited);
            // Straight to the service, naming 127.0.0.6: not the proxy, so its own count.
            assert.deepEqual(await statuses(direct, "127.0.0.5", () => "127.0.0.6"), limited);
            // 127.0.0.6 was not charged for either.
            assert.deepEqual(await statuses(proxy, "127.0.0.6", () => "127.0.0.4"), limited);
          },
        );
      } catch (error) {
        throw new Error(`${(error as Error).message}\nnginx error log:\n${await nginxLog()}`, {
          cause: error,
        });
      } finally {
        try {
          nginx.kill("SIGQUIT");
        } catch { /* exited */ }
        await withDeadline(nginx.status, 10_000, "nginx exits").catch(() => nginx.kill("SIGKILL"));
        await nginx.stderr.cancel().catch(() => {});
        service.endStreams();
        await server.shutdown();
        await service.close();
        await Deno.remove(dir, { recursive: true });
        if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
      }
    },
  });
}

Deno.test("deploy/nginx.conf: client_max_body_size is MAX_BODY_SIZE plus at most 1 MiB", async () => {
  const text = await Deno.readTextFile(CONF);
  const m = /^\s*client_max_body_size (\d+)([km]?);$/m.exec(text);
  assert.ok(m, "client_max_body_size is set");
  const bytes = Number(m[1]) * ({ "": 1, k: 1024, m: 1024 * 1024 }[m[2]] ?? NaN);
  const max = deployment.MAX_BODY_SIZE;
  assert.ok(bytes >= max && bytes <= max + 1024 * 1024, `${bytes} vs MAX_BODY_SIZE ${max}`);
});

Deno.test("deploy/settings.ts: TRUSTED_PROXIES names the proxy's address in the compose file", async () => {
  const compose = await Deno.readTextFile(
    new URL("../../deploy/docker-compose.yml", import.meta.url),
  );
  const address = /ipv4_address: ([\d.]+)/.exec(compose)?.[1];
  assert.ok(address, "the proxy has a fixed address");
  assert.match(compose, new RegExp(`TRUSTED_PROXIES: ${address.replaceAll(".", "\\.")}\\n`));
  // The settings' default, when the environment does not name the proxy.
  const settings = await Deno.readTextFile(new URL("../../deploy/settings.ts", import.meta.url));
  assert.match(settings, new RegExp(`TRUSTED_PROXIES.*\\?\\? "${address.replaceAll(".", "\\.")}"`));
});
