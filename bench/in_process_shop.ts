/**
 * @module
 * The service's own per-request cost on the shop domain (bench/shop-settings.json), without
 * sockets: plain Requests handed to `service.fetch` in a loop, on the embedded store, each
 * answer's body read. One row per operation of `deno task bench`'s write path and pages:
 * GET customer, GET page of 25, POST customer, PATCH customer with the If-Match of its previous
 * answer, POST order (two relation checks), and the aggregation endpoint over the orders
 * (`--orders` of them POSTed one by one, 32 at a time, before the rounds, as the POST order
 * load writes them; the POST order rows of each round add more). Rounds interleave the operations, so a busy
 * machine slows all of them alike; prints the fastest and median round, wall-clock and CPU
 * time of the process, in microseconds per request. `--concurrency` requests are in flight at
 * once (32, as `deno task bench`'s connections), so writes share group commits and syncs as
 * they do when served; each waits for its fsync.
 *
 * ```sh
 * deno run -A bench/in_process_shop.ts                  # every operation
 * deno run -A bench/in_process_shop.ts --only=POST      # operations whose name holds POST
 * deno run -A bench/in_process_shop.ts --concurrency=1  # one request at a time
 * deno run -A bench/in_process_shop.ts --only=aggregation --orders=14000
 * deno run -A --cpu-prof --cpu-prof-dir=/tmp/prof bench/in_process_shop.ts --only=PATCH
 * ```
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { createService } from "../src/mod.ts";
import { customer } from "./shop_data.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    only: { type: "string" },
    rounds: { type: "string", default: "8" },
    concurrency: { type: "string", default: "32" },
    orders: { type: "string", default: "0" },
  },
});
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);

const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const origin = "http://127.0.0.1:8000";

const dir = await Deno.makeTempDir({ prefix: "restsvc-in-process-shop-" });
const settings = JSON.parse(
  await Deno.readTextFile(new URL("shop-settings.json", import.meta.url)),
);
const service = await createService(
  { ...settings, STORE: "embedded", DATA_DIR: dir },
  { env: false },
);
const encoder = new TextEncoder();
const json = { "content-type": "application/json", host: "127.0.0.1:8000", "user-agent": "wrk" };

async function call(method: string, path: string, body?: unknown, headers = {}) {
  const text = body === undefined ? undefined : JSON.stringify(body);
  // As a client sends it: with its length.
  const length: Record<string, string> = text === undefined
    ? {}
    : { "content-length": String(encoder.encode(text).length) };
  const res = await service.fetch(
    new Request(origin + path, { method, headers: { ...json, ...length, ...headers }, body: text }),
    info,
  );
  const answer = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${answer}`);
  return answer;
}

async function seed(path: string, docs: unknown[]) {
  return (JSON.parse(await call("POST", path, docs))._items) as Array<
    { _id: string; _etag: string }
  >;
}
const customers = await seed("/customers", Array.from({ length: 1000 }, (_, n) => customer(n)));
const products = await seed(
  "/products",
  Array.from({ length: 100 }, (_, n) => ({ sku: `SKU-${n}`, title: `Product ${n}`, price: 5 })),
);
const etags = new Map(customers.map((c) => [c._id, c._etag]));
let serial = 0;
const order = (i: number) => ({
  customer: customers[i % 1000]._id,
  items: [{ product: products[i % 100]._id, quantity: 2, price: 12.5 }],
  total: 25,
  note: "bench",
});
{
  let left = Number(values.orders);
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (left-- > 0) await call("POST", "/orders", order(left));
  }));
}
const aggregate = `/sales_by_status?aggregate=${
  encodeURIComponent(JSON.stringify({ $min_total: 15 }))
}`;

const OPS: Array<[name: string, per: number, run: (i: number) => Promise<unknown>]> = [
  ["GET customer", 4000, (i) => call("GET", `/customers/${customers[i % 1000]._id}`)],
  ["GET page of 25", 1000, (i) => call("GET", `/customers?page=${1 + i % 40}`)],
  ["POST customer", 500, () => call("POST", "/customers", customer(serial++, "w"))],
  ["PATCH customer, If-Match", 500, async (i) => {
    const id = customers[i % 1000]._id;
    const text = await call("PATCH", `/customers/${id}`, { age: 18 + i % 70 }, {
      "if-match": etags.get(id)!,
    });
    etags.set(id, JSON.parse(text)._etag);
  }],
  ["POST order (2 relations)", 500, (i) => call("POST", "/orders", order(i))],
  ["aggregation endpoint", 100, () => call("GET", aggregate)],
];
const chosen = OPS.filter(([name]) => !values.only || name.includes(values.only));
const results = chosen.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
let counter = 0;
for (let r = 0; r < ROUNDS; r++) {
  for (const [k, [, per, run]] of chosen.entries()) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    let left = per;
    const worker = async () => {
      while (left-- > 0) await run(counter++);
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    results[k].wall.push((performance.now() - started) * 1000 / per);
    const used = process.cpuUsage(cpu);
    results[k].cpu.push((used.user + used.system) / per);
  }
}
const mid = ROUNDS >> 1;
console.log("shop domain, embedded store, in process (us per request)");
for (const [k, [name]] of chosen.entries()) {
  const { wall, cpu } = results[k];
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  console.log(
    `  ${name.padEnd(26)} wall: fastest ${wall[0].toFixed(1)}, median ${
      wall[mid].toFixed(1)
    }; CPU: fastest ${cpu[0].toFixed(1)}, median ${cpu[mid].toFixed(1)}`,
  );
}
await service.close();
await Deno.remove(dir, { recursive: true });
