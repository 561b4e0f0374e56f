/**
 * GET item throughput with Basic authentication (after the first request: the verification
 * is cached) against the same request without authentication, side by side on the embedded
 * store. Not part of the test suite:
 *
 *     deno run -A bench/auth_basic.ts [seconds=5] [concurrency=16] [mode=http|inprocess]
 *
 * `http` goes through a loopback socket; `inprocess` calls the fetch handler directly (the
 * server's own cost only, less sensitive to a loaded machine). Rounds alternate so both
 * configurations see the same load; the median round is reported.
 */
import { createService } from "../src/mod.ts";
import { createLogger } from "../src/log.ts";

const seconds = Number(Deno.args[0] ?? 5);
const concurrency = Number(Deno.args[1] ?? 16);
const mode = Deno.args[2] ?? "http";
// bcrypt hash of "secret".
const HASH = "$2b$10$2buBRUdzS.alJuRMgasZZebGDZieCV7PQ8K7hFiJtU/QYDIZxIWqa";
const DOMAIN = { people: { schema: { name: { type: "string" } } } };

async function start(auth: boolean) {
  const dir = await Deno.makeTempDir({ prefix: "bench-auth-" });
  const settings: Record<string, unknown> = {
    STORE: "embedded",
    DATA_DIR: dir,
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN,
  };
  if (auth) {
    Object.assign(settings, {
      AUTH_SCHEMES: ["basic"],
      AUTH_USERS: [{ username: "root", password: HASH, roles: ["admin"] }],
    });
  }
  const service = await createService(settings, { env: false, logger: createLogger(() => {}) });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, service.fetch);
  const headers: Record<string, string> = auth
    ? { authorization: `Basic ${btoa("root:secret")}` }
    : {};
  const created = await service.data.post("people", { name: "Ann" });
  const url = `http://127.0.0.1:${server.addr.port}/people/${created.body._id}`;
  const first = await fetch(url, { headers });
  if (first.status !== 200) throw new Error(`GET answered ${first.status}`);
  await first.body?.cancel();
  return {
    url,
    headers,
    fetch: mode === "http"
      ? fetch
      : (input: string, init: RequestInit) => service.fetch(new Request(input, init)),
    async stop() {
      await server.shutdown();
      await service.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function run(target: {
  url: string;
  headers: Record<string, string>;
  fetch: (input: string, init: RequestInit) => Promise<Response>;
}): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let count = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const res = await target.fetch(target.url, { headers: target.headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET answered ${res.status}`);
      count++;
    }
  }));
  return count / seconds;
}

const plain = await start(false);
const basic = await start(true);
const results: Record<string, number[]> = { none: [], basic: [] };
// Alternate runs so both see the same machine load.
for (let round = 0; round < 5; round++) {
  results.none.push(await run(plain));
  results.basic.push(await run(basic));
}
await plain.stop();
await basic.stop();
const best = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(`GET item (${mode}), ${concurrency} concurrent, ${seconds}s x 5 rounds (median):`);
console.log(`  without authentication: ${best(results.none).toFixed(0)} req/s`);
console.log(`  with Basic (cached):    ${best(results.basic).toFixed(0)} req/s`);
console.log(`  ratio: ${(best(results.basic) / best(results.none) * 100).toFixed(1)}%`);
