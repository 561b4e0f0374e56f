/**
 * @module
 * The latency of one client's sequential requests on the `people` resource of bench/bench.ts,
 * in process (plain Requests handed to `service.fetch`, no sockets), on the embedded store:
 * POST of one document (acknowledged after its sync), POST refused by validation (same body
 * reading and validation, no write) and GET item, interleaved one by one so a busy machine
 * slows them alike. `--documents` are loaded first with bulk POSTs of 1,000. Prints, per round,
 * the median wall-clock and CPU time of each, in milliseconds: what a POST costs beyond a
 * refused one is its write, its sync and its rendering.
 *
 * ```sh
 * deno run -A bench/sequential_post.ts                        # 1,000 documents, 3 rounds of 200
 * deno run -A bench/sequential_post.ts --documents=100000 --rounds=5 --per=100
 * ```
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { createService } from "../src/mod.ts";
import { person, settings } from "./bench.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    documents: { type: "string", default: "1000" },
    rounds: { type: "string", default: "3" },
    per: { type: "string", default: "200" },
  },
});
const DOCUMENTS = Number(values.documents);
const ROUNDS = Number(values.rounds);
const PER = Number(values.per);

const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const dir = await Deno.makeTempDir({ prefix: "restsvc-sequential-post-" });
const service = await createService(
  { ...settings(), STORE: "embedded", DATA_DIR: dir },
  { env: false },
);
const encoder = new TextEncoder();

async function call(method: string, path: string, body?: unknown): Promise<[number, string]> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { host: "127.0.0.1:8000" };
  if (text !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = String(encoder.encode(text).length);
  }
  const res = await service.fetch(
    new Request(`http://127.0.0.1:8000${path}`, { method, headers, body: text }),
    info,
  );
  return [res.status, await res.text()];
}

const ids: string[] = [];
for (let start = 0; start < DOCUMENTS; start += 1000) {
  const batch = Array.from(
    { length: Math.min(1000, DOCUMENTS - start) },
    (_, k) => person(start + k),
  );
  const [status, text] = await call("POST", "/people", batch);
  if (status !== 201) throw new Error(`load failed: ${status} ${text}`);
  for (const item of JSON.parse(text)._items) ids.push(item._id);
}

const OPS: Array<
  [name: string, expect: number, run: (i: number, round: number) => Promise<[number, string]>]
> = [
  ["POST", 201, (i, round) => call("POST", "/people", person(i, `seq${round}-`))],
  ["refused POST", 422, (i) => call("POST", "/people", { ...person(i), age: -1 })],
  ["GET item", 200, (i) => call("GET", `/people/${ids[(i * 7919) % ids.length]}`)],
];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`people, ${DOCUMENTS.toLocaleString("en")} documents, in process (ms, medians)`);
for (let round = 0; round < ROUNDS; round++) {
  const wall = OPS.map(() => [] as number[]);
  const cpu = OPS.map(() => [] as number[]);
  for (let i = 0; i < PER; i++) {
    for (const [k, [name, expect, run]] of OPS.entries()) {
      const used = process.cpuUsage();
      const started = performance.now();
      const [status, text] = await run(i, round);
      wall[k].push(performance.now() - started);
      const spent = process.cpuUsage(used);
      cpu[k].push((spent.user + spent.system) / 1000);
      if (status !== expect) throw new Error(`${name}: ${status} ${text}`);
    }
  }
  console.log(
    `  round ${round + 1}: ` +
      OPS.map(([name], k) =>
        `${name} ${median(wall[k]).toFixed(3)} (CPU ${median(cpu[k]).toFixed(3)})`
      ).join(", "),
  );
}
await service.close();
await Deno.remove(dir, { recursive: true });
