/**
 * @module
 * The aggregation endpoint of the shop domain served, as `deno task bench` ends: a service on
 * bench/shop-settings.json with a fresh data directory goes through every load of
 * `deno task bench` before the aggregation (seeding, the GET warm-ups, then each load for
 * BENCH_SECONDS, 5), so its heap and its orders (about 7,000-15,000, most POSTed one by one)
 * are those the bench's aggregation meets; `--loads=orders` instead seeds in bulk and POSTs
 * orders one by one (the POST order load's script) until about `--orders` are stored. Then
 * `/sales_by_status?aggregate={"$min_total":15}` runs under wrk for `--seconds`, `--rounds`
 * times, with the CPU time the service spent per answered request (from /proc/<pid>/stat).
 *
 * `--baseline=<checkout>` starts a second service from that checkout (its dependencies
 * installed) on its own data, loaded the same way; the rounds then alternate between the two,
 * so both see the same machine (before/after in one run).
 *
 * ```sh
 * deno run --lock=deno.lock -A bench/aggregate_served.ts
 * deno run --lock=deno.lock -A bench/aggregate_served.ts --loads=orders --orders=14000 --rounds=3
 * deno run --lock=deno.lock -A bench/aggregate_served.ts --baseline=/tmp/base
 * BENCH_PROFILE=/tmp/prof deno run --lock=deno.lock -A bench/aggregate_served.ts   # CPU profile of the service
 * ```
 */
import { parseArgs } from "node:util";
import {
  freePort,
  seedShop,
  type Server,
  shopLoads,
  startProcess,
  wrk as benchWrk,
} from "./bench.ts";
import { customer, order, product } from "./shop_data.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    orders: { type: "string", default: "14000" },
    seconds: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "32" },
    baseline: { type: "string" },
    loads: { type: "string", default: "bench" },
    threads: { type: "string", default: "2" },
  },
});
const ORDERS = Number(values.orders);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const THREADS = Number(values.threads);
if (values.loads !== "bench" && values.loads !== "orders") {
  throw new Error(`--loads: bench (the default) or orders, not ${values.loads}`);
}
const ROOT = new URL("..", import.meta.url).pathname;
const AGGREGATE = `/sales_by_status?aggregate=${
  encodeURIComponent(JSON.stringify({ $min_total: 15 }))
}`;

/** CPU time (user + system) of a process so far, in microseconds. */
function cpuMicros(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Resident set size of a process, in MiB. */
function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

/** wrk with this script's threads and connections for `seconds`. */
function wrk(url: string, lua: string, seconds: number) {
  return benchWrk(url, lua, { threads: THREADS, connections: CONNECTIONS, seconds });
}

async function count(base: string): Promise<number> {
  const res = await fetch(`${base}/orders?max_results=1`);
  return (await res.json())._meta.total;
}

interface Side {
  name: string;
  server: Server;
  dir: string;
  cpu: number[];
  rps: number[];
}

async function start(name: string, cwd: string): Promise<Side> {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-aggregate-" });
  const settings = await Deno.readTextFile(new URL("shop-settings.json", import.meta.url));
  await Deno.writeTextFile(`${dir}/settings.json`, settings);
  const port = freePort();
  const profile = Deno.env.get("BENCH_PROFILE");
  const server = await startProcess(
    [
      ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
      "src/main.ts",
      "--settings",
      `${dir}/settings.json`,
    ],
    { DATA_DIR: `${dir}/data`, PORT: String(port), HOST: "127.0.0.1", STORE: "embedded" },
    port,
    cwd,
  );
  return { name, server, dir, cpu: [], rps: [] };
}

/** Every load of `deno task bench` before the aggregation, as it runs them. */
async function benchLoads(side: Side): Promise<void> {
  const base = side.server.base;
  const loads = (await shopLoads(base)).filter(([name]) => name !== "aggregation endpoint");
  for (const [name, script] of loads) {
    if (name.startsWith("GET")) await benchWrk(base + "/", await script(0));
  }
  for (const [, script] of loads) await benchWrk(base + "/", await script(0));
}

/** Seeds as `deno task bench` does, then POSTs orders one by one until about ORDERS. */
async function ordersOnly(side: Side): Promise<void> {
  const base = side.server.base;
  const customers = await seedShop(
    base,
    "customers",
    Array.from({ length: 1000 }, (_, n) => customer(n)),
  );
  const products = await seedShop(
    base,
    "products",
    Array.from({ length: 100 }, (_, n) => product(n)),
  );
  await seedShop(
    base,
    "orders",
    Array.from({ length: 1000 }, (_, n) => order(n, { customers, products })),
  );
  const lua = `
customers = {${customers.map((c) => `"${c._id}"`).join(",")}}
products = {${products.map((p) => `"${p._id}"`).join(",")}}
request = function()
  local body = string.format('{"customer":"%s","items":[{"product":"%s","quantity":2,"price":12.5}],"total":25,"note":"bench"}', customers[math.random(#customers)], products[math.random(#products)])
  return wrk.format("POST", "/orders", {["Content-Type"] = "application/json"}, body)
end
`;
  const deadline = Date.now() + 120_000;
  for (let n = await count(base); n < ORDERS && Date.now() < deadline; n = await count(base)) {
    await wrk(base + "/", lua, Math.max(1, Math.min(5, Math.ceil((ORDERS - n) / 2500))));
  }
}

const sides = [await start("this checkout", ROOT)];
if (values.baseline) sides.push(await start("baseline", values.baseline));
try {
  for (const side of sides) await (values.loads === "bench" ? benchLoads(side) : ordersOnly(side));
  for (const side of sides) {
    const res = await fetch(side.server.base + AGGREGATE);
    console.log(
      `${side.name}: ${await count(side.server.base)} orders, RSS ${
        rssMiB(side.server.process.pid).toFixed(0)
      } MiB; ${res.status} ${await res.text()}`,
    );
  }
  const lua = `request = function() return wrk.format("GET", "${AGGREGATE}") end\n`;
  for (let round = 0; round < ROUNDS; round++) {
    const order = sides.map((_, i) => sides[(i + round) % sides.length]);
    for (const side of order) {
      const pid = side.server.process.pid;
      const before = cpuMicros(pid);
      const result = await wrk(side.server.base + "/", lua, SECONDS);
      const used = cpuMicros(pid) - before;
      side.cpu.push(used / result.requests);
      side.rps.push(result.rps);
      console.log(
        `round ${round + 1} ${side.name}: ${result.rps.toFixed(0)} req/s, CPU ${
          (used / result.requests).toFixed(0)
        } us/req, ${result.errors} errors, RSS ${rssMiB(pid).toFixed(0)} MiB`,
      );
    }
  }
} finally {
  for (const side of sides) {
    await side.server.stop();
    await Deno.remove(side.dir, { recursive: true });
  }
}
