/**
 * @module
 * The service's own per-request cost on the shop domain (bench/shop-settings.json), without
 * sockets: plain Requests handed to `service.fetch` in a loop, on the embedded store, each
 * answer's body read. One row per operation of `deno task bench`'s write path and pages:
 * GET customer, GET page of 25, POST customer, PATCH customer with the If-Match of its previous
 * answer, POST order (two relation checks), and the aggregation endpoint over the orders
 * (`--orders` of them POSTed one by one, 32 at a time, before the rounds, as the POST order
 * load writes them; the POST order rows of each round add more). Rounds interleave the
 * operations, so a busy
 * machine slows all of them alike; prints the fastest and median round, wall-clock and CPU
 * time of the process (and its system part: SQLite's WAL writes, the syncs), in microseconds
 * per request, and the median round's heap allocated per request (V8's count of bytes
 * allocated, garbage included: machine load does not change it, so two versions compare
 * by it exactly). `--concurrency` requests are in flight at once (32, as `deno task bench`'s
 * connections), so writes share group commits and syncs as they do when served; each waits
 * for its fsync.
 *
 * `--against=<checkout>` loads the service of another checkout of the project (its
 * `src/mod.ts`) into the same process beside this one, each on its own data directory, and
 * alternates their rounds (ABBA), so both see the same load from the rest of the machine:
 * the comparison a shared machine allows. Each side then gets its row, and the ratio of the
 * medians (this checkout over the other) follows. The two services share one heap (garbage
 * one side leaves, the other's collections pay for too: a change in what a write allocates or
 * keeps shows less here than in a process of its own), and the order they were loaded in is
 * not neutral: identical code has shown up to 15% more CPU on the side loaded first on a busy
 * machine. Run it again from the other checkout (the sides swapped) and take both ratios.
 *
 * `--pollute=BYTES` writes to every cache line of a buffer of that size before each request
 * (its time taken out of the figures): the processor's caches then start each request cold,
 * as they do when served, where the HTTP server's and the kernel's work runs between two
 * requests' JavaScript. With `--concurrency=1`, its figures against those without it show how
 * much of a request's cost is the reloading of its code and data.
 *
 * ```sh
 * deno run -A bench/in_process_shop.ts                  # every operation
 * deno run -A bench/in_process_shop.ts --only=POST      # operations whose name holds POST
 * deno run -A bench/in_process_shop.ts --concurrency=1  # one request at a time
 * deno run -A bench/in_process_shop.ts --concurrency=1 --pollute=4000000 --only=GET
 * deno run -A bench/in_process_shop.ts --against=/tmp/before --only=POST --rounds=16
 * deno run -A bench/in_process_shop.ts --only=aggregation --orders=14000
 * deno run -A --cpu-prof --cpu-prof-dir=/tmp/prof bench/in_process_shop.ts --only=PATCH
 * ```
 */
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import process from "node:process";
import v8 from "node:v8";
import { customer } from "./shop_data.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    only: { type: "string" },
    rounds: { type: "string", default: "8" },
    concurrency: { type: "string", default: "32" },
    against: { type: "string" },
    orders: { type: "string", default: "0" },
    pollute: { type: "string", default: "0" },
  },
});
/** Cache lines written before each request (`--pollute`), and the time that took. */
const junk = new Uint8Array(Number(values.pollute));
let pollutedMs = 0;

/** Writes every cache line of the `--pollute` buffer (see the module doc). */
function pollute(): void {
  if (junk.length === 0) return;
  const started = performance.now();
  for (let i = 0; i < junk.length; i += 64) junk[i]++;
  pollutedMs += performance.now() - started;
}
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);

const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const origin = "http://127.0.0.1:8000";
const encoder = new TextEncoder();
const json = { "content-type": "application/json", host: "127.0.0.1:8000", "user-agent": "wrk" };
const settings = JSON.parse(
  await Deno.readTextFile(new URL("shop-settings.json", import.meta.url)),
);

type Service = {
  fetch(request: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>): Promise<Response>;
  close(): Promise<void>;
};
type Op = [name: string, per: number, run: (i: number) => Promise<unknown>];

/** One service (of this checkout or another), seeded, with the operations on it. */
async function side(label: string, modUrl: string) {
  const { createService } = await import(modUrl);
  const dir = await Deno.makeTempDir({ prefix: "restsvc-in-process-shop-" });
  const service: Service = await createService(
    { ...settings, STORE: "embedded", DATA_DIR: dir },
    { env: false },
  );
  async function call(method: string, path: string, body?: unknown, headers = {}) {
    const text = body === undefined ? undefined : JSON.stringify(body);
    // As a client sends it: with its length.
    const length: Record<string, string> = text === undefined
      ? {}
      : { "content-length": String(encoder.encode(text).length) };
    const res = await service.fetch(
      new Request(origin + path, {
        method,
        headers: { ...json, ...length, ...headers },
        body: text,
      }),
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
  const ops: Op[] = [
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
  const chosen = ops.filter(([name]) => !values.only || name.includes(values.only));
  const results = chosen.map(() => ({
    wall: [] as number[],
    cpu: [] as number[],
    sys: [] as number[],
    heap: [] as number[],
  }));
  const close = async () => {
    await service.close();
    await Deno.remove(dir, { recursive: true });
  };
  return { label, chosen, results, close };
}

const sides = [await side("this checkout", new URL("../src/mod.ts", import.meta.url).href)];
if (values.against) {
  const other = pathToFileURL(resolve(values.against, "src", "mod.ts")).href;
  sides.push(await side(values.against, other));
}

/** V8's count of bytes allocated so far (garbage included): machine load does not change it. */
const allocated = () =>
  (v8.getHeapStatistics() as unknown as { total_allocated_bytes: number }).total_allocated_bytes;

let counter = 0;
for (let r = 0; r < ROUNDS; r++) {
  // ABBA: each side goes first in every other round.
  const order = r % 2 === 0 ? sides : [...sides].reverse();
  for (let k = 0; k < sides[0].chosen.length; k++) {
    for (const s of order) {
      const [, per, run] = s.chosen[k];
      const started = performance.now();
      const cpu = process.cpuUsage();
      const bytes = allocated();
      let left = per;
      pollutedMs = 0;
      const worker = async () => {
        while (left-- > 0) {
          pollute();
          await run(counter++);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      s.results[k].heap.push((allocated() - bytes) / per);
      // The pollution's own time is the main thread's, user time: taken out of both.
      s.results[k].wall.push((performance.now() - started - pollutedMs) * 1000 / per);
      const used = process.cpuUsage(cpu);
      s.results[k].cpu.push((used.user + used.system - pollutedMs * 1000) / per);
      s.results[k].sys.push(used.system / per);
    }
  }
}

const mid = ROUNDS >> 1;
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
console.log("shop domain, embedded store, in process (us per request)");
for (const s of sides) {
  if (sides.length > 1) console.log(s.label);
  for (const [k, [name]] of s.chosen.entries()) {
    const wall = sorted(s.results[k].wall);
    const cpu = sorted(s.results[k].cpu);
    const sys = sorted(s.results[k].sys);
    const heap = sorted(s.results[k].heap);
    console.log(
      `  ${name.padEnd(26)} wall: fastest ${wall[0].toFixed(1)}, median ${
        wall[mid].toFixed(1)
      }; CPU: fastest ${cpu[0].toFixed(1)}, median ${cpu[mid].toFixed(1)} (system ${
        sys[mid].toFixed(1)
      }); heap allocated ${(heap[mid] / 1024).toFixed(1)} KiB`,
    );
  }
}
if (sides.length > 1) {
  console.log(
    "this checkout / the other: CPU (median rounds; rounds won), heap allocated (median rounds)",
  );
  for (const [k, [name]] of sides[0].chosen.entries()) {
    const [a, b] = sides.map((s) => s.results[k].cpu);
    const [ha, hb] = sides.map((s) => sorted(s.results[k].heap));
    const won = a.filter((x, i) => x < b[i]).length;
    console.log(
      `  ${name.padEnd(26)} ${
        (sorted(a)[mid] / sorted(b)[mid]).toFixed(3)
      } (${won} of ${ROUNDS}), ${(ha[mid] / hb[mid]).toFixed(3)}`,
    );
  }
}
for (const s of sides) await s.close();
