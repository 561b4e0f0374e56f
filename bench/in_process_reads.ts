/**
 * @module
 * The service's own per-request cost on the shop domain's reads (bench/shop-settings.json),
 * without sockets: the GET loads of `deno task bench` (GET customer, by email, page of 25,
 * `where` age > 50, GET order with its customer embedded), each a plain Request handed to
 * `service.fetch` as the HTTP server makes it (wrk's fields, no Accept-Encoding), `--concurrency`
 * at once (32, as the bench's connections), each answer's body read. The data is seeded as
 * `deno task bench` seeds it (1,000 customers, 100 products, 1,000 orders). Rounds interleave
 * the loads, so a busy machine slows all of them alike; prints the fastest and median round of
 * the process's CPU time per request, in microseconds, and the median round's heap allocated
 * per request (garbage included: V8's count of bytes allocated, which machine load does not
 * change, so two versions compare exactly; what a read allocates is what the garbage
 * collector later pays for).
 *
 * ```sh
 * deno run -A bench/in_process_reads.ts                 # every read
 * deno run -A bench/in_process_reads.ts --only=page     # reads whose name holds "page"
 * deno run -A bench/in_process_reads.ts --verbose       # each round's CPU time too
 * deno run -A bench/in_process_reads.ts --only=page --heap-prof=/tmp/page.heapprofile
 * deno run -A --cpu-prof --cpu-prof-dir=/tmp/prof bench/in_process_reads.ts --only=where
 * ```
 *
 * `--heap-prof=FILE` writes a sampling profile of what the measured rounds allocate (a
 * DevTools `.heapprofile`); `--scale=F` runs F times as many requests a round.
 */
import { parseArgs } from "node:util";
import process from "node:process";
import v8 from "node:v8";
import { createService } from "../src/mod.ts";
import { customer } from "./shop_data.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    only: { type: "string" },
    rounds: { type: "string", default: "10" },
    concurrency: { type: "string", default: "32" },
    scale: { type: "string", default: "1" },
    "heap-prof": { type: "string" },
    verbose: { type: "boolean" },
  },
});
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
const SCALE = Number(values.scale);

const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const origin = "http://127.0.0.1:8000";

const dir = await Deno.makeTempDir({ prefix: "restsvc-in-process-reads-" });
const settings = JSON.parse(
  await Deno.readTextFile(new URL("shop-settings.json", import.meta.url)),
);
const service = await createService(
  { ...settings, STORE: "embedded", DATA_DIR: dir },
  { env: false },
);
const wrkFields = { host: "127.0.0.1:8000" };

async function call(method: string, path: string, body?: unknown) {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = text === undefined
    ? wrkFields
    : { ...wrkFields, "content-type": "application/json" };
  const res = await service.fetch(
    new Request(origin + path, { method, headers, body: text }),
    info,
  );
  const answer = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${answer}`);
  return answer;
}

async function seed(path: string, docs: unknown[]) {
  return (JSON.parse(await call("POST", path, docs))._items) as Array<{ _id: string }>;
}
const customers = await seed("/customers", Array.from({ length: 1000 }, (_, n) => customer(n)));
const products = await seed(
  "/products",
  Array.from({ length: 100 }, (_, n) => ({
    sku: `SKU-${n}`,
    title: `Product ${n}`,
    category: ["books", "music", "games", "tools", "garden"][n % 5],
    price: 5 + n % 50,
    stock: 100,
  })),
);
const orders = await seed(
  "/orders",
  Array.from({ length: 1000 }, (_, n) => ({
    customer: customers[n % 1000]._id,
    items: [{ product: products[n % 100]._id, quantity: 1 + n % 3, price: 10 }],
    total: 10 * (1 + n % 3),
    status: ["new", "paid", "shipped", "cancelled"][n % 4],
  })),
);
const where = encodeURIComponent(JSON.stringify({ age: { $gt: 50 } }));
const embedded = encodeURIComponent(JSON.stringify({ customer: 1 }));

const OPS: Array<[name: string, per: number, path: (i: number) => string]> = [
  ["GET customer", 4000, (i) => `/customers/${customers[i % 1000]._id}`],
  ["GET customer by email", 4000, (i) => `/customers/c${i % 1000}@shop.example.org`],
  ["GET page of 25", 1000, (i) => `/customers?page=${1 + i % 40}`],
  ["where age > 50, 25", 1000, (i) => `/customers?where=${where}&page=${1 + i % 10}`],
  ["GET order, embedded", 2000, (i) => `/orders/${orders[i % 1000]._id}?embedded=${embedded}`],
];
const chosen = OPS.filter(([name]) => !values.only || name.includes(values.only));
const results = chosen.map(() => ({
  wall: [] as number[],
  cpu: [] as number[],
  bytes: [] as number[],
}));
// V8 reports it; Node's type of the statistics does not list it yet.
const allocated = () =>
  (v8.getHeapStatistics() as unknown as { total_allocated_bytes: number }).total_allocated_bytes;
let counter = 0;
const heapProfile = values["heap-prof"] ? await startHeapSampling() : undefined;
for (let r = 0; r < ROUNDS; r++) {
  for (const [k, [, base, path]] of chosen.entries()) {
    const per = Math.round(base * SCALE);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const bytes = allocated();
    let left = per;
    const worker = async () => {
      while (left-- > 0) await call("GET", path(counter++));
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    results[k].bytes.push((allocated() - bytes) / per);
    results[k].wall.push((performance.now() - started) * 1000 / per);
    const used = process.cpuUsage(cpu);
    results[k].cpu.push((used.user + used.system) / per);
    if (values.verbose) {
      console.log(
        `${chosen[k][0]} round ${r}: CPU ${((used.user + used.system) / per).toFixed(1)}`,
      );
    }
  }
}
if (heapProfile) {
  await Deno.writeTextFile(values["heap-prof"]!, JSON.stringify(await heapProfile()));
}
const mid = ROUNDS >> 1;
console.log("shop domain reads, embedded store, in process (us per request)");
for (const [k, [name]] of chosen.entries()) {
  const { wall, cpu, bytes } = results[k];
  for (const xs of [wall, cpu, bytes]) xs.sort((a, b) => a - b);
  console.log(
    `  ${name.padEnd(24)} wall: fastest ${wall[0].toFixed(1)}, median ${
      wall[mid].toFixed(1)
    }; CPU: fastest ${cpu[0].toFixed(1)}, median ${cpu[mid].toFixed(1)}; heap allocated ${
      (bytes[mid] / 1024).toFixed(1)
    } KiB`,
  );
}
await service.close();
await Deno.remove(dir, { recursive: true });

/** Starts V8's sampling heap profiler; the function returned stops it and gives the profile. */
async function startHeapSampling(): Promise<() => Promise<unknown>> {
  const { Session } = await import("node:inspector");
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params ?? {}, (err, result) => err ? reject(err) : resolve(result))
    );
  await post("HeapProfiler.enable");
  await post("HeapProfiler.startSampling", {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return async () => ((await post("HeapProfiler.stopSampling")) as { profile: unknown }).profile;
}
