/**
 * @module
 * The service's own per-request cost on the shop domain's reads (bench/shop-settings.json),
 * without sockets: the GET loads of `deno task bench` (GET customer, by email, page of 25,
 * `where` age > 50, GET order with its customer embedded), and the domain's reads it leaves out
 * (GET order, a page of orders, the `vip_customers` view's item and page, a page of the
 * `open_orders` view, the `customer_orders` sub-resource), each a plain Request handed to
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
 *
 * `--baseline=DIR` also loads the service of another checkout (DIR/src/mod.ts, e.g. a copy of
 * the main branch made with `git archive`) into the same process, seeded alike, and runs each
 * round of each read on both, the first in turn: both versions share the machine's load round
 * by round, which two processes started side by side do not (one finishes first). It prints
 * the median of the rounds' ratios of this checkout to the baseline.
 */
import { parseArgs } from "node:util";
import process from "node:process";
import v8 from "node:v8";
import { createService } from "../src/mod.ts";
import { customer, order, product } from "./shop_data.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    only: { type: "string" },
    rounds: { type: "string", default: "10" },
    concurrency: { type: "string", default: "32" },
    scale: { type: "string", default: "1" },
    "heap-prof": { type: "string" },
    verbose: { type: "boolean" },
    baseline: { type: "string" },
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
const settings = JSON.parse(
  await Deno.readTextFile(new URL("shop-settings.json", import.meta.url)),
);
const wrkFields = { host: "127.0.0.1:8000" };

type Create = typeof createService;
type Op = [name: string, per: number, path: (i: number) => string];

/** A service of `create` on its own seeded store, and the reads to run against it. */
async function side(name: string, create: Create) {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-in-process-reads-" });
  const service = await create({ ...settings, STORE: "embedded", DATA_DIR: dir }, { env: false });
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
  const products = await seed("/products", Array.from({ length: 100 }, (_, n) => product(n)));
  const orders = await seed(
    "/orders",
    Array.from({ length: 1000 }, (_, n) => order(n, { customers, products })),
  );
  const where = encodeURIComponent(JSON.stringify({ age: { $gt: 50 } }));
  const embedded = encodeURIComponent(JSON.stringify({ customer: 1 }));
  const ops: Op[] = [
    ["GET customer", 4000, (i) => `/customers/${customers[i % 1000]._id}`],
    ["GET customer by email", 4000, (i) => `/customers/c${i % 1000}@shop.example.org`],
    ["GET page of 25", 1000, (i) => `/customers?page=${1 + i % 40}`],
    ["where age > 50, 25", 1000, (i) => `/customers?where=${where}&page=${1 + i % 10}`],
    ["GET order, embedded", 2000, (i) => `/orders/${orders[i % 1000]._id}?embedded=${embedded}`],
    // Reads of the domain the served bench leaves out: views, the sub-resource, the orders.
    ["GET order", 4000, (i) => `/orders/${orders[i % 1000]._id}`],
    ["GET page of orders", 1000, (i) => `/orders?page=${1 + i % 40}`],
    // Customer 10n is a VIP: 100 of them, 4 pages.
    ["GET VIP customer (view)", 4000, (i) => `/vip_customers/${customers[(i * 10) % 1000]._id}`],
    ["GET page of VIPs (view)", 1000, (i) => `/vip_customers?page=${1 + i % 4}`],
    ["GET page of open orders (view)", 1000, (i) => `/open_orders?page=${1 + i % 20}`],
    ["GET customer's orders (sub)", 2000, (i) => `/customers/${customers[i % 1000]._id}/orders`],
  ];
  const close = async () => {
    await service.close();
    await Deno.remove(dir, { recursive: true });
  };
  return {
    name,
    call,
    ops: ops.filter(([op]) => !values.only || op.includes(values.only)),
    results: ops.map(() => ({ wall: [] as number[], cpu: [] as number[], bytes: [] as number[] })),
    close,
  };
}

const sides = [await side("this checkout", createService)];
if (values.baseline) {
  const url = new URL(
    "src/mod.ts",
    new URL(values.baseline.replace(/\/?$/, "/"), `file://${Deno.cwd()}/`),
  );
  const other = await import(url.href) as { createService: Create };
  sides.unshift(await side(`baseline ${values.baseline}`, other.createService));
}
// V8 reports it; Node's type of the statistics does not list it yet.
const allocated = () =>
  (v8.getHeapStatistics() as unknown as { total_allocated_bytes: number }).total_allocated_bytes;
let counter = 0;
const heapProfile = values["heap-prof"] ? await startHeapSampling() : undefined;
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < sides[0].ops.length; k++) {
    // With a baseline, each round of a read runs on both, the first one in turn.
    for (const s of r % 2 ? [...sides].reverse() : sides) {
      const [name, base, path] = s.ops[k];
      const per = Math.round(base * SCALE);
      const started = performance.now();
      const cpu = process.cpuUsage();
      const bytes = allocated();
      let left = per;
      const worker = async () => {
        while (left-- > 0) await s.call("GET", path(counter++));
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const results = s.results[k];
      results.bytes.push((allocated() - bytes) / per);
      results.wall.push((performance.now() - started) * 1000 / per);
      const used = process.cpuUsage(cpu);
      results.cpu.push((used.user + used.system) / per);
      if (values.verbose) {
        console.log(`${s.name}: ${name} round ${r}: CPU ${results.cpu.at(-1)!.toFixed(1)}`);
      }
    }
  }
}
if (heapProfile) {
  await Deno.writeTextFile(values["heap-prof"]!, JSON.stringify(await heapProfile()));
}
const mid = ROUNDS >> 1;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[mid];
console.log("shop domain reads, embedded store, in process (us per request)");
for (const s of sides) {
  if (sides.length > 1) console.log(s.name);
  for (const [k, [name]] of s.ops.entries()) {
    const { wall, cpu, bytes } = s.results[k];
    const fastest = (xs: number[]) => Math.min(...xs).toFixed(1);
    console.log(
      `  ${name.padEnd(24)} wall: fastest ${fastest(wall)}, median ${
        median(wall).toFixed(1)
      }; CPU: fastest ${fastest(cpu)}, median ${median(cpu).toFixed(1)}; heap allocated ${
        (median(bytes) / 1024).toFixed(1)
      } KiB`,
    );
  }
}
if (sides.length > 1) {
  console.log("this checkout / baseline, median of the rounds' ratios: CPU, heap allocated");
  for (const [k, [name]] of sides[0].ops.entries()) {
    const ratio = (of: "cpu" | "bytes") =>
      median(sides[1].results[k][of].map((v, i) => v / sides[0].results[k][of][i])).toFixed(3);
    console.log(`  ${name.padEnd(24)} ${ratio("cpu")}, ${ratio("bytes")}`);
  }
}
for (const s of sides) await s.close();

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
