/**
 * @module
 * The MongoDB path's own cost per request, without the HTTP server: plain Requests handed
 * to the service on the MongoDB store and to the raw driver's Hono app (`bench/raw_driver.ts`),
 * both reading from `bench/wire_stub.ts` (a wire-protocol stand-in that answers at once, in a
 * process of its own), with 32 requests in flight as `deno task bench --mongo` sends them.
 * The process's CPU time per request then holds what each side does (the driver's work
 * included) and nothing of the server's; the heap each request allocated is V8's count
 * (machine load does not change it). Rounds alternate which side goes first; the ratio is
 * the median of the rounds' own ratios (raw driver's CPU time over the service's, as the
 * served comparison gives throughput).
 *
 * ```sh
 * deno run -A bench/in_process_mongo.ts              # GET item
 * deno run -A bench/in_process_mongo.ts --page       # GET page of 25 (of 100 documents)
 * deno run -A bench/in_process_mongo.ts --only=service --cpu-prof   # with a V8 profile
 * ```
 */
import { parseArgs } from "node:util";
import process from "node:process";
import v8 from "node:v8";
import { MongoClient } from "mongodb";
import { createService } from "../src/mod.ts";
import { freePort, person, settings, startProcess } from "./bench.ts";
import { rawApp } from "./raw_driver.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    page: { type: "boolean" },
    only: { type: "string" },
    rounds: { type: "string", default: "8" },
  },
});
const ROUNDS = Number(values.rounds);
const PER_ROUND = values.page ? 1_000 : 6_000;
const IN_FLIGHT = 32;

const port = freePort();
const stub = await startProcess(["bench/wire_stub.ts", String(port)], {}, port);
const uri = `mongodb://127.0.0.1:${port}/bench?directConnection=true`;
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const origin = "http://127.0.0.1:8000";

const service = await createService({
  ...settings(),
  STORE: "mongo",
  MONGO_URI: uri,
}, { env: false });
const created = await service.fetch(
  new Request(`${origin}/people`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(Array.from({ length: 100 }, (_, n) => person(n))),
  }),
  info,
);
const ids = ((await created.json()) as { _items: { _id: string }[] })._items.map((i) => i._id);
const client = new MongoClient(uri);
await client.connect();
const raw = rawApp(client.db().collection("people"));

const sides = [
  { name: "service", fetch: (r: Request) => service.fetch(r, info) },
  { name: "raw driver", fetch: (r: Request) => raw.fetch(r) },
].filter((s) => values.only === undefined || s.name.startsWith(values.only))
  .map((s) => ({ ...s, cpu: [] as number[], bytes: [] as number[] }));
if (sides.length === 0) throw new Error("--only: service or raw");

const path = (i: number) => values.page ? `/people?page=${1 + i % 4}` : `/people/${ids[i % 100]}`;
/** V8's count of bytes allocated so far (garbage included). */
const allocated = () =>
  (v8.getHeapStatistics() as unknown as { total_allocated_bytes: number }).total_allocated_bytes;

/** `PER_ROUND` requests, `IN_FLIGHT` at a time, each answer's body read. */
async function round(side: (typeof sides)[number]): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < PER_ROUND) {
      const request = new Request(origin + path(next++), {
        headers: [["host", "127.0.0.1:8000"], ["user-agent", "wrk"]],
      });
      const response = await side.fetch(request);
      if (response.status !== 200) throw new Error(`${side.name}: answered ${response.status}`);
      await response.arrayBuffer();
    }
  }));
}

for (const side of sides) await round(side); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
    const cpu = process.cpuUsage();
    const bytes = allocated();
    await round(side);
    const used = process.cpuUsage(cpu);
    side.bytes.push((allocated() - bytes) / PER_ROUND);
    side.cpu.push((used.user + used.system) / PER_ROUND);
  }
}
const median = (list: number[]) => [...list].sort((a, b) => a - b)[list.length >> 1];
console.log(
  values.page ? "GET page of 25, MongoDB store (wire stub)" : "GET item, MongoDB store (wire stub)",
);
for (const side of sides) {
  console.log(
    `  ${side.name.padEnd(11)} CPU: median ${median(side.cpu).toFixed(1)} us, fastest ${
      Math.min(...side.cpu).toFixed(1)
    } us; heap allocated ${(median(side.bytes) / 1024).toFixed(1)} KiB`,
  );
}
if (sides.length === 2) {
  const [ours, theirs] = sides;
  const ratio = median(ours.cpu.map((cpu, r) => theirs.cpu[r] / cpu));
  console.log(
    `  raw driver / service, CPU time: ${ratio.toFixed(3)} (median of the rounds' ratios)`,
  );
}
await service.close();
await client.close();
await stub.stop();
