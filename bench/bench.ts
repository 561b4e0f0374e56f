/**
 * `deno task bench`: throughput of the service against a Hono hello-world ceiling, and cost
 * as the collection grows. Not part of the test suite.
 *
 *   deno task bench                      # throughput table of the shop domain
 *                                        # (bench/shop-settings.json, 1,000 customers and orders)
 *   deno task bench --domain=people      # the same for a domain of one resource
 *   deno task bench --scale              # scale runs at 1,000 and 100,000 documents
 *   deno task bench --scale --sizes=1000,1000000 # chosen sizes (heap per document: bench/heap.ts)
 *   BENCH_ROUNDS=3 BENCH_SECONDS=2 BENCH_CONNECTIONS=32 deno task bench   # rounds per load, s each
 *   BENCH_ONLY=POST BENCH_PROFILE=/tmp/prof deno task bench   # chosen loads, CPU profile of the service
 *   deno task bench --mongo              # MongoDB path against the raw driver (jongodb or MONGO_URI)
 *   deno task bench --mongo --stub       # the same on bench/wire_stub.ts: the client side's cost
 *
 * Every service runs in its own process on the embedded store in a temporary data directory
 * (`--mongo`: on the MongoDB server, a fresh database per run), served by `Deno.serve` as the
 * hello world is.
 */
import { parseArgs } from "node:util";
import { startJongodb } from "../tests/support/jongodb.ts";
import type { HeapCost } from "./heap.ts";
import { customer, order as shopOrder, product } from "./shop_data.ts";
import { v8FlagsArgument } from "../src/util/v8_flags.ts";
import { PADDING_FIELD } from "../src/http/write_buffer.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
/** The throughput table's rounds per load, and seconds per round (BENCH_SECONDS sets both). */
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
const ROUND_SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? 3);
const CONNECTIONS = Number(Deno.env.get("BENCH_CONNECTIONS") ?? 32);
const THREADS = Number(Deno.env.get("BENCH_THREADS") ?? 2);

/** The benchmarked resource: ~300-byte documents, a unique field and a declared index. */
export function settings(extra: Record<string, unknown> = {}) {
  return {
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    // wrk cannot follow changing ETags; conditional writes are covered by the tests.
    IF_MATCH: false,
    DOMAIN: {
      people: {
        schema: {
          name: { type: "string", maxlength: 100 },
          email: { type: "string", unique: true },
          age: { type: "integer", min: 0, max: 150 },
          city: { type: "string" },
          tags: { type: "list", schema: { type: "string" } },
          bio: { type: "string" },
        },
        mongo_indexes: { age_1: [["age", 1]] },
      },
    },
    ...extra,
  };
}

const CITIES = ["Lyon", "Oslo", "Lima", "Pune", "Kyiv", "Cork", "Rome", "Graz"];
const BIO = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor " +
  "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud.";

/** The `n`th document of the `people` resource (`prefix` makes its unique email). */
export function person(n: number, prefix = "p") {
  return {
    name: `Person ${n}`,
    email: `${prefix}${n}@example.org`,
    age: (n * 37) % 100,
    city: CITIES[n % CITIES.length],
    tags: ["a", `t${n % 10}`],
    bio: BIO,
  };
}

/** A loopback TCP port free right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

export interface Server {
  process: Deno.ChildProcess;
  base: string;
  stop(): Promise<void>;
}

/** Starts a Deno program and waits until it says "serving" on stderr. */
export async function startProcess(
  args: string[],
  env: Record<string, string>,
  port: number,
  cwd = ROOT,
) {
  const process = new Deno.Command(Deno.execPath(), {
    // With the V8 flags `deno task start` passes (src/util/v8_flags.ts).
    args: ["run", "-A", v8FlagsArgument(), ...args],
    env,
    cwd,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = process.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = Date.now() + 60_000;
  while (!seen.includes("serving")) {
    const { value, done } = await reader.read();
    if (done || Date.now() > deadline) throw new Error(`did not start: ${seen}`);
    seen += value;
  }
  // Keep draining stderr so the child never blocks on a full pipe; the tail is kept for
  // reporting a crash.
  let tail = "";
  (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        tail = (tail + value).slice(-4000);
      }
    } catch { /* closed */ }
  })();
  process.status.then((status) => {
    if (!stopping) console.error(`process exited (${status.code}); stderr ends with:\n${tail}`);
  });
  let stopping = false;
  const server: Server = {
    process,
    base: `http://127.0.0.1:${port}`,
    async stop() {
      stopping = true;
      try {
        process.kill("SIGTERM");
      } catch { /* gone */ }
      await process.status;
    },
  };
  return server;
}

/** Deno flags writing a V8 CPU profile of the process to BENCH_PROFILE, when set. */
function profileFlags(): string[] {
  const profile = Deno.env.get("BENCH_PROFILE");
  return profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [];
}

async function startService(
  dir: string,
  extra: Record<string, unknown> = {},
  env: Record<string, string> = { STORE: "embedded" },
  whole: Record<string, unknown> = settings(extra),
): Promise<Server> {
  const file = `${dir}/settings.json`;
  await Deno.writeTextFile(file, JSON.stringify(whole));
  const port = freePort();
  return await startProcess([...profileFlags(), "src/main.ts", "--settings", file], {
    DATA_DIR: `${dir}/data`,
    PORT: String(port),
    HOST: "127.0.0.1",
    ...env,
  }, port);
}

/** The hello-world ceiling; with `answer`, one answering every request with that file's answer. */
async function startHello(answer?: string): Promise<Server> {
  const port = freePort();
  const args = ["bench/hello.ts", String(port), ...(answer ? [`--answer=${answer}`] : [])];
  return await startProcess(args, {}, port);
}

/**
 * Writes GET customer's answer as the service gives it (body and fields, but for the `Date`
 * and `Content-Length` Deno adds and any padding) to `file`, for `bench/hello.ts --answer`.
 */
async function writeCustomerAnswer(base: string, file: string): Promise<void> {
  const page = await (await fetch(`${base}/customers?max_results=1`)).json();
  const res = await fetch(`${base}/customers/${page._items[0]._id}`);
  const headers: Record<string, string> = {};
  for (const [name, value] of res.headers) {
    // The hello world pads its connections' second answers itself, as the service does.
    if (name !== "date" && name !== "content-length" && name !== PADDING_FIELD) {
      headers[name] = value;
    }
  }
  await Deno.writeTextFile(file, JSON.stringify({ body: await res.text(), headers }));
}

/** Inserts `count` documents with bulk POSTs of up to 1,000; returns the ids. */
async function seed(base: string, count: number, onBatch?: (ms: number) => void) {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 1000) {
    const batch = [];
    for (let n = start; n < Math.min(count, start + 1000); n++) batch.push(person(n));
    const t0 = performance.now();
    const res = await fetch(`${base}/people`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(batch),
    });
    const body = await res.json();
    onBatch?.(performance.now() - t0);
    if (res.status !== 201) throw new Error(`seed failed: ${res.status} ${JSON.stringify(body)}`);
    for (const item of body._items) ids.push(item._id);
  }
  return ids;
}

interface WrkResult {
  /** Requests answered in the run. */
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === "us" ? v / 1000 : m[2] === "ms" ? v : m[2] === "s" ? v * 1000 : v * 60_000;
}

/**
 * Runs wrk with a Lua script against `url`: the bench's load by default; one connection
 * (`{ connections: 1, threads: 1 }`) measures sequential requests, each sent once the
 * previous answer is in.
 */
export async function wrk(
  url: string,
  lua: string,
  options: { connections?: number; threads?: number; seconds?: number; timeout?: number } = {},
): Promise<WrkResult> {
  const { connections = CONNECTIONS, threads = THREADS, seconds = SECONDS } = options;
  const timeout = options.timeout ? [`--timeout`, `${options.timeout}s`] : [];
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(script, lua);
  try {
    const out = await new Deno.Command("wrk", {
      args: [
        `-t${Math.min(threads, connections)}`,
        `-c${connections}`,
        `-d${seconds}s`,
        ...timeout,
        "--latency",
        "-s",
        script,
        url,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
    const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
    const p50 = toMs(/\n\s+50%\s+(\S+)/.exec(text)?.[1] ?? "");
    const p99 = toMs(/\n\s+99%\s+(\S+)/.exec(text)?.[1] ?? "");
    const errors = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0) +
      Number(/Socket errors:.*timeout (\d+)/.exec(text)?.[1] ?? 0);
    return { requests, rps, p50, p99, errors };
  } finally {
    await Deno.remove(script);
  }
}

const LUA_THREADS = `
local n = 0
function setup(thread) thread:set("tid", n); n = n + 1 end
`;

function luaIds(ids: string[]): string {
  return `ids = {${ids.map((id) => `"${id}"`).join(",")}}\n`;
}

function luaGetItem(ids: string[]): string {
  return luaIds(ids) +
    `request = function() return wrk.format("GET", "/people/" .. ids[math.random(#ids)]) end\n`;
}

function luaGet(paths: string[]): string {
  return `paths = {${paths.map((p) => JSON.stringify(p)).join(",")}}\n` +
    `request = function() return wrk.format("GET", paths[math.random(#paths)]) end\n`;
}

function luaPost(run: string): string {
  return LUA_THREADS + `
local i = 0
request = function()
  i = i + 1
  local body = string.format('{"name":"W %d","email":"${run}-%d-%d@example.org","age":%d,"city":"Oslo","tags":["a","b"],"bio":"${BIO}"}', i, tid, i, i % 100)
  return wrk.format("POST", "/people", {["Content-Type"] = "application/json"}, body)
end
`;
}

function luaPatch(ids: string[]): string {
  return luaIds(ids) + `
local i = 0
request = function()
  i = i + 1
  return wrk.format("PATCH", "/people/" .. ids[math.random(#ids)],
    {["Content-Type"] = "application/json"}, string.format('{"age":%d}', i % 100))
end
`;
}

function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "-";
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    "| " + cells.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
  return [line(header), "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|"]
    .concat(rows.map(line)).join("\n");
}

/**
 * One throughput load: a name, and the wrk script of each of its rounds, run against the
 * service's root (a write's unique values, and its If-Match ETags, are made anew per round).
 */
export type Load = [name: string, script: (round: number) => string | Promise<string>];

/** The throughput table's row of the hello world answering GET customer's answer. */
const ANSWER_LOAD = "hello, GET customer's answer";

/** A load whose script is the same in every round. */
const same = (lua: string) => () => lua;

/** The one-resource domain's loads over the seeded service at `base`. */
async function peopleLoads(base: string): Promise<Load[]> {
  const ids = await seed(base, 1000);
  const pages = Array.from({ length: 40 }, (_, i) => `/people?page=${i + 1}`);
  const where = encodeURIComponent(JSON.stringify({ age: { $gt: 50 } }));
  const wheres = Array.from({ length: 10 }, (_, i) => `/people?where=${where}&page=${i + 1}`);
  const run = `r${Date.now()}${Math.random().toString(36).slice(2, 6)}`;
  return [
    ["GET item", same(luaGetItem(ids))],
    ["GET page of 25", same(luaGet(pages))],
    ["where age > 50, 25", same(luaGet(wheres))],
    ["POST one document", (round) => luaPost(`${run}-${round}`)],
    ["PATCH one field", same(luaPatch(ids))],
  ];
}

/** The shop domain (bench/shop-settings.json): settings as shipped there. */
async function shopSettings(): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(new URL("shop-settings.json", import.meta.url)));
}

/** POSTs `docs` to `base/path` in batches of up to 1,000; returns the created items. */
export async function seedShop(base: string, path: string, docs: unknown[]) {
  const items: Array<{ _id: string; _etag: string }> = [];
  for (let start = 0; start < docs.length; start += 1000) {
    const res = await fetch(`${base}/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(docs.slice(start, start + 1000)),
    });
    const body = await res.json();
    if (res.status !== 201) {
      throw new Error(`seeding ${path}: ${res.status} ${JSON.stringify(body)}`);
    }
    items.push(...(Array.isArray(body._items) ? body._items : [body]));
  }
  return items;
}

/**
 * PATCH of one field with the If-Match of the document's previous answer. Each wrk thread
 * takes its own share of the documents, in turn, so no two requests in flight race on one
 * document; every answer's `_etag` is kept for the next PATCH of its document.
 */
function luaPatchIfMatch(path: string, items: Array<{ _id: string; _etag: string }>): string {
  return LUA_THREADS + `
ids = {${items.map((i) => `"${i._id}"`).join(",")}}
etags = {${items.map((i) => `["${i._id}"]="${i._etag}"`).join(",")}}
local i = 0
request = function()
  i = i + 1
  local id = ids[((i * 2 + tid) % #ids) + 1]
  return wrk.format("PATCH", "/${path}/" .. id,
    {["Content-Type"] = "application/json", ["If-Match"] = etags[id]},
    string.format('{"age":%d}', 18 + i % 70))
end
response = function(status, headers, body)
  local id = string.match(body, '"_id":%s*"(%x+)"')
  local etag = string.match(body, '"_etag":%s*"(%x+)"')
  if id and etag then etags[id] = etag end
end
`;
}

/** The current `_id` and `_etag` of the customers `items` (GETs, 50 at a time). */
async function current(base: string, items: Array<{ _id: string }>) {
  const fresh: Array<{ _id: string; _etag: string }> = [];
  for (let start = 0; start < items.length; start += 50) {
    fresh.push(
      ...await Promise.all(
        items.slice(start, start + 50).map(async ({ _id }) => {
          const res = await fetch(`${base}/customers/${_id}`);
          if (res.status !== 200) throw new Error(`GET customer failed: ${res.status}`);
          return await res.json() as { _id: string; _etag: string };
        }),
      ),
    );
  }
  return fresh;
}

/** The shop domain's loads over the seeded service at `base`. */
export async function shopLoads(base: string): Promise<Load[]> {
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
  const order = (n: number) => shopOrder(n, { customers, products });
  const orders = await seedShop(base, "orders", Array.from({ length: 1000 }, (_, n) => order(n)));
  const emails = Array.from({ length: 1000 }, (_, n) => `/customers/c${n}@shop.example.org`);
  const pages = Array.from({ length: 40 }, (_, i) => `/customers?page=${i + 1}`);
  const where = encodeURIComponent(JSON.stringify({ age: { $gt: 50 } }));
  const wheres = Array.from({ length: 10 }, (_, i) => `/customers?where=${where}&page=${i + 1}`);
  const embedded = encodeURIComponent(JSON.stringify({ customer: 1 }));
  const aggregate = encodeURIComponent(JSON.stringify({ $min_total: 15 }));
  const run = `r${Date.now()}${Math.random().toString(36).slice(2, 6)}`;
  const postCustomer = (round: number) =>
    LUA_THREADS + `
local i = 0
request = function()
  i = i + 1
  local body = string.format('{"name":"W %d","email":"${run}-${round}-%d-%d@shop.example.org","age":%d,"country":"FR","tags":["a","b"],"address":{"street":"1 Quay","city":"Oslo","zip":"0150"}}', i, tid, i, 18 + i % 70)
  return wrk.format("POST", "/customers", {["Content-Type"] = "application/json"}, body)
end
`;
  const postOrder = `
customers = {${customers.map((c) => `"${c._id}"`).join(",")}}
products = {${products.map((p) => `"${p._id}"`).join(",")}}
local i = 0
request = function()
  i = i + 1
  local body = string.format('{"customer":"%s","items":[{"product":"%s","quantity":2,"price":12.5}],"total":25,"note":"bench"}', customers[math.random(#customers)], products[math.random(#products)])
  return wrk.format("POST", "/orders", {["Content-Type"] = "application/json"}, body)
end
`;
  return [
    ["GET customer", same(luaGet(customers.map((c) => `/customers/${c._id}`)))],
    ["GET customer by email", same(luaGet(emails))],
    ["GET page of 25", same(luaGet(pages))],
    ["where age > 50, 25", same(luaGet(wheres))],
    ["POST customer", postCustomer],
    [
      "PATCH customer, If-Match",
      // The first round starts from the seeded ETags; later ones read the current ETags.
      async (round) =>
        luaPatchIfMatch("customers", round === 0 ? customers : await current(base, customers)),
    ],
    ["POST order (2 relations)", same(postOrder)],
    [
      "GET order, embedded customer",
      same(luaGet(orders.map((o) => `/orders/${o._id}?embedded=${embedded}`))),
    ],
    ["aggregation endpoint", same(luaGet([`/sales_by_status?aggregate=${aggregate}`]))],
  ];
}

/** CPU time (user + system) a process has used so far, in microseconds. */
async function cpuMicros(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  // Fields after the command name (which may hold spaces): utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** The machine's CPU time counters (`/proc/stat`): all of it, and what the host took (steal). */
async function machineTicks(): Promise<{ total: number; steal: number }> {
  const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0];
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return { total, steal: ticks[7] ?? 0 };
}

/** A wrk run with the CPU time the serving process spent per answered request. */
async function measured(
  server: Server,
  lua: string,
  seconds = SECONDS,
): Promise<WrkResult & { cpu: number }> {
  const before = await cpuMicros(server.process.pid);
  const result = await wrk(server.base + "/", lua, { seconds });
  const used = await cpuMicros(server.process.pid) - before;
  return { ...result, cpu: used / (result.rps * seconds) };
}

/**
 * The throughput table of one domain (`shop`, the default, or `people`): each load against the
 * service on `Deno.serve`, with the hello-world ceiling on `Deno.serve` measured right before
 * and after it; a load's ratio is to the mean of those two, so a machine whose load drifts
 * during the run skews every row alike. Beside it, the CPU time the serving process spent per
 * request, and its ratio to the hello world's: steadier than throughput on a shared machine.
 */
async function throughput(domain: string): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-bench-" });
  const hello = await startHello();
  const service = domain === "people"
    ? await startService(dir)
    : await startService(dir, {}, { STORE: "embedded" }, await shopSettings());
  // The shop domain's table also measures a hello world answering GET customer's very answer:
  // what Deno charges for an answer of that size and those fields, with no work behind it.
  let answerHello: Server | undefined;
  try {
    const loads = domain === "people"
      ? await peopleLoads(service.base)
      : await shopLoads(service.base);
    const only = Deno.env.get("BENCH_ONLY");
    const chosen = loads.filter(([name]) => !only || name.includes(only));
    if (domain !== "people") {
      await writeCustomerAnswer(service.base, `${dir}/answer.json`);
      answerHello = await startHello(`${dir}/answer.json`);
      chosen.unshift([ANSWER_LOAD, same("")]);
    }
    const serverOf = (name: string) => name === ANSWER_LOAD ? answerHello! : service;
    // Warm-up (JIT) for every process.
    await wrk(hello.base + "/", "", { seconds: ROUND_SECONDS });
    for (const [name, script] of chosen) {
      if (name.startsWith("GET") || name === ANSWER_LOAD) {
        await wrk(serverOf(name).base + "/", await script(0), { seconds: ROUND_SECONDS });
      }
    }
    const ticksBefore = await machineTicks();
    const hellos = [await measured(hello, "", ROUND_SECONDS)];
    type Round = WrkResult & { cpu: number; ratio: number; cpuRatio: number };
    const results: Array<[string, Round[]]> = [];
    for (const [name, script] of chosen) {
      const rounds: Round[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const lua = await script(round);
        // A read's first round follows a second of itself, untimed: the code it shares with
        // the loads before it (shaped by their documents) is compiled again for its own
        // within that second. (A write's script cannot run twice: its unique values and
        // If-Match ETags would clash.)
        if (round === 0 && !/^(POST|PATCH)/.test(name)) {
          await wrk(serverOf(name).base + "/", lua, { seconds: 1 });
        }
        const result = await measured(serverOf(name), lua, ROUND_SECONDS);
        const before = hellos[hellos.length - 1];
        const after = await measured(hello, "", ROUND_SECONDS);
        hellos.push(after);
        rounds.push({
          ...result,
          ratio: result.rps / ((before.rps + after.rps) / 2),
          cpuRatio: (before.cpu + after.cpu) / 2 / result.cpu,
        });
      }
      results.push([name, rounds]);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const mid = (rounds: Round[], key: "rps" | "p50" | "p99" | "cpu" | "ratio" | "cpuRatio") =>
      median(rounds.map((r) => r[key]));
    const rows = [
      [
        "hello (ceiling)",
        `${fmt(Math.min(...hellos.map((h) => h.rps)), 0)}-${
          fmt(Math.max(...hellos.map((h) => h.rps)), 0)
        }`,
        fmt(hellos[0].p50),
        fmt(hellos[0].p99),
        "1.000",
        fmt(mean(hellos.map((h) => h.cpu)), 1),
        "1.000",
        "0",
      ],
      ...results.map(([name, rounds]) => [
        name,
        fmt(mid(rounds, "rps"), 0),
        fmt(mid(rounds, "p50")),
        fmt(mid(rounds, "p99")),
        fmt(mid(rounds, "ratio"), 3),
        fmt(mid(rounds, "cpu"), 1),
        fmt(mid(rounds, "cpuRatio"), 3),
        String(rounds.reduce((sum, r) => sum + r.errors, 0)),
      ]),
    ];
    const ticksAfter = await machineTicks();
    const stolen = (ticksAfter.steal - ticksBefore.steal) / (ticksAfter.total - ticksBefore.total);
    const fsync = await fsyncMs(dir);
    console.log(
      `\n${domain} domain, embedded store, Deno.serve; ${THREADS} threads, ${CONNECTIONS} ` +
        `connections, ${ROUNDS} rounds of ${ROUND_SECONDS}s per load (medians; each round between ` +
        `two hello world runs); fdatasync p50 ${fmt(fsync)} ms in the data ` +
        `directory after the run; ${fmt(100 * stolen, 1)}% of the machine's CPU time taken by ` +
        `its host (steal) during the timed loads\n`,
    );
    console.log(table([
      "operation",
      "req/s",
      "p50 ms",
      "p99 ms",
      "ratio",
      "CPU us/req",
      "CPU ratio",
      "errors",
    ], rows));
    if (ROUNDS > 1) {
      console.log(`\nEach round (the medians above come from these):\n`);
      console.log(table(
        ["operation", "req/s", "ratio", "CPU us/req"],
        results.map(([name, rounds]) => [
          name,
          rounds.map((r) => fmt(r.rps, 0)).join(", "),
          rounds.map((r) => fmt(r.ratio, 3)).join(", "),
          rounds.map((r) => fmt(r.cpu, 1)).join(", "),
        ]),
      ));
    }
  } finally {
    await service.stop();
    await hello.stop();
    await answerHello?.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Median time of a 4 KiB write's fdatasync in `dir`: what bounds acknowledged writes, which
 * wait for theirs (one sync serves every write that arrived during the previous one). Each
 * write goes over a block the file already has, as the embedded store's WAL writes between
 * checkpoints (a sync of writes that grow a file also records its new size and blocks).
 */
async function fsyncMs(dir: string): Promise<number> {
  const path = `${dir}/fsync-probe`;
  const file = await Deno.open(path, { write: true, create: true });
  const samples: number[] = [];
  const block = new Uint8Array(4096);
  try {
    for (let i = 0; i < 21; i++) await file.write(block);
    await file.syncData();
    for (let i = 0; i < 21; i++) {
      await file.seek(i * block.length, Deno.SeekMode.Start);
      await file.write(block.fill(i + 1));
      const t0 = performance.now();
      await file.syncData();
      samples.push(performance.now() - t0);
    }
  } finally {
    file.close();
    await Deno.remove(path);
  }
  return median(samples);
}

/** The pid of the process listening on loopback `port` started from `binary` (else null). */
function pidListening(port: string, binary: string): number | null {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      if (cmd.includes(binary) && cmd.includes(`--port=${port}`)) return Number(entry.name);
    } catch { /* gone */ }
  }
  return null;
}

/** One side of the MongoDB comparison: a serving process and its figures per round. */
interface MongoSide {
  name: string;
  server: Server;
  rounds: Array<{ rps: number; cpu: number; db: number; errors: number; oneMs: number }>;
}

/**
 * The MongoDB path against the raw driver: GET item and GET page of 25 through the service and
 * through `bench/raw_driver.ts` (same server, same documents), in alternating rounds
 * (`BENCH_ROUNDS`, 5): per round and side a wrk run, the CPU time per request of the serving
 * process and of the MongoDB server (the jongodb or stub started here; not a MONGO_URI's), then the median
 * latency of sequential requests from one client. `BENCH_MONGO_BASELINE=<checkout>` adds the
 * service as that checkout has it (its dependencies installed: `deno install` there), as a
 * third side in the same rounds (before/after).
 */
async function mongoComparison(stub: boolean): Promise<void> {
  const given = stub ? undefined : Deno.env.get("MONGO_URI");
  const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 5);
  const baseline = Deno.env.get("BENCH_MONGO_BASELINE");
  let server: { uri: string; stop(): Promise<void> } | null = null;
  let dbPid: number | null = null;
  if (stub) {
    const port = freePort();
    const running = await startProcess(["bench/wire_stub.ts", String(port)], {}, port);
    server = { uri: `mongodb://127.0.0.1:${port}/?directConnection=true`, stop: running.stop };
    dbPid = running.process.pid;
  } else if (!given) {
    server = await startJongodb();
    dbPid = pidListening(new URL(server.uri).port, "jongodb");
  }
  const base = given ?? server!.uri;
  const url = new URL(base);
  url.pathname = `/bench${Date.now()}`;
  const uri = url.href;
  const dir = await Deno.makeTempDir({ prefix: "restsvc-mongo-" });
  const env = { STORE: "mongo", MONGO_URI: uri };
  const sides: MongoSide[] = [];
  let sameAnswer: number | undefined;
  try {
    sides.push({ name: "service", server: await startService(dir, {}, env), rounds: [] });
    const rawPort = freePort();
    sides.push({
      name: "raw driver",
      server: await startProcess(
        [...profileFlags(), "bench/raw_driver.ts", String(rawPort), uri],
        {},
        rawPort,
      ),
      rounds: [],
    });
    const samePort = freePort();
    const sameSide: MongoSide = {
      name: "raw, same answer",
      server: await startProcess(
        [...profileFlags(), "bench/raw_driver.ts", String(samePort), uri, "--same-answer"],
        {},
        samePort,
      ),
      rounds: [],
    };
    sides.push(sameSide);
    if (baseline) {
      const port = freePort();
      const file = `${dir}/settings.json`;
      // Run from the checkout, with its own deno.json and dependencies.
      const before = await startProcess(
        [...profileFlags(), "src/main.ts", "--settings", file],
        { ...env, PORT: String(port), HOST: "127.0.0.1" },
        port,
        baseline,
      );
      sides.push({ name: "baseline", server: before, rounds: [] });
    }
    const ids = await seed(sides[0].server.base, 1000);
    // All must read the same documents: a miss would make one side measure 404s.
    for (const side of sides) {
      const res = await fetch(`${side.server.base}/people/${ids[0]}`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${side.name} does not see the seeded documents`);
    }
    const pages = Array.from({ length: 40 }, (_, i) => `/people?page=${i + 1}`);
    const loads: Array<[string, string, string[]]> = [
      ["GET item", luaGetItem(ids), ids.map((id) => `/people/${id}`)],
      ["GET page of 25", luaGet(pages), pages],
    ];
    const only = Deno.env.get("BENCH_ONLY");
    if (only) loads.splice(0, loads.length, ...loads.filter(([name]) => name.includes(only)));
    for (const [, lua] of loads) for (const side of sides) await wrk(side.server.base + "/", lua);
    const dbCpu = () => dbPid ? cpuMicros(dbPid) : Promise.resolve(NaN);
    const rows: string[][] = [];
    for (const [name, lua, paths] of loads) {
      // The same-answer side differs from the raw driver on items only.
      const active = name === "GET item" ? sides : sides.filter((side) => side !== sameSide);
      for (const side of active) side.rounds = [];
      for (let round = 0; round < rounds; round++) {
        // Each round starts with a different side, so neither always follows the other.
        const order = active.map((_, i) => active[(i + round) % active.length]);
        for (const side of order) {
          const pid = side.server.process.pid;
          const [cpu0, db0] = [await cpuMicros(pid), await dbCpu()];
          const result = await wrk(side.server.base + "/", lua);
          const [cpu1, db1] = [await cpuMicros(pid), await dbCpu()];
          const answered = result.rps * SECONDS;
          const oneMs = await latency(
            name === "GET item" ? 200 : 40,
            // As wrk asks: without Accept-Encoding (fetch would ask for compressed answers).
            (i) =>
              fetch(side.server.base + paths[(i * 7919 + round) % paths.length], {
                headers: { "accept-encoding": "identity" },
              }),
          );
          side.rounds.push({
            rps: result.rps,
            cpu: (cpu1 - cpu0) / answered,
            db: (db1 - db0) / answered,
            errors: result.errors,
            oneMs,
          });
        }
      }
      const [ours, raw] = sides;
      const med = (side: MongoSide, key: "rps" | "cpu" | "db" | "oneMs") =>
        median(side.rounds.map((r) => r[key]));
      // The ratio of each round (the sides measured back to back), then their median.
      const ratio = (side: MongoSide, key: "rps" | "oneMs") =>
        median(side.rounds.map((r, i) => r[key] / raw.rounds[i][key]));
      for (const side of active) {
        rows.push([
          side === ours ? name : "",
          side.name,
          fmt(med(side, "rps"), 0),
          side === raw ? "1.000" : fmt(ratio(side, "rps"), 3),
          fmt(med(side, "cpu"), 0),
          fmt(med(side, "db"), 0),
          fmt(med(side, "oneMs")),
          side === raw ? "1.000" : fmt(1 / ratio(side, "oneMs"), 3),
          String(side.rounds.reduce((n, r) => n + r.errors, 0)),
        ]);
      }
      if (name === "GET item") {
        sameAnswer = median(ours.rounds.map((r, i) => r.rps / sameSide.rounds[i].rps));
      }
    }
    console.log(
      `\nMongoDB path (${
        stub ? "wire stub" : given ? "MONGO_URI" : "jongodb emulator"
      }), ${THREADS} threads, ` +
        `${CONNECTIONS} connections, ${SECONDS}s per load, medians of ${rounds} alternating ` +
        `rounds (ratios: median of the rounds' ratios to the raw driver; 1 client: raw ms / ms)\n`,
    );
    console.log(table([
      "operation",
      "side",
      "req/s",
      "ratio",
      "CPU us/req",
      "MongoDB CPU us/req",
      "1 client ms",
      "1 client ratio",
      "errors",
    ], rows));
    if (sameAnswer !== undefined) {
      console.log(
        `\nGET item, service / raw driver answering the same bytes (dates as the service ` +
          `writes them, \`_links\`): ${fmt(sameAnswer, 3)} (median of the rounds' ratios)`,
      );
    }
  } finally {
    for (const side of sides) await side.server.stop();
    await server?.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Median latency of `times` sequential calls of `fn`. */
/** Seconds of each sequential-latency measurement of the scale runs. */
const SEQUENTIAL_SECONDS = 3;

/**
 * The median latency of sequential requests (wrk, one connection, each request sent once
 * the previous answer is in), in ms. wrk's own cost per request is some microseconds (a
 * hello world answers in 0.03-0.05 ms this way); a client such as the runtime's `fetch`
 * adds 0.1-0.6 ms to every request on this machine, as much as the service's own time of
 * most of them.
 */
async function sequentialMs(
  base: string,
  lua: string,
  what: string,
  warmUp?: string,
): Promise<number> {
  // A first request that builds what the others reuse (a sorted view) is not timed.
  if (warmUp) await (await fetch(`${base}${warmUp}`)).arrayBuffer();
  const result = await wrk(`${base}/`, lua, {
    connections: 1,
    threads: 1,
    seconds: SEQUENTIAL_SECONDS,
    timeout: 30,
  });
  if (result.errors > 0 || !Number.isFinite(result.p50)) {
    throw new Error(`sequential ${what} failed: ${result.errors} errors`);
  }
  console.error(`${what}: p50 ${fmt(result.p50, 3)} ms, p99 ${fmt(result.p99, 3)} ms`);
  return result.p50;
}

async function latency(times: number, fn: (i: number) => Promise<Response>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    const res = await fn(i);
    await res.arrayBuffer();
    samples.push(performance.now() - t0);
    if (res.status >= 400) throw new Error(`request failed: ${res.status}`);
  }
  return median(samples);
}

async function rssMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

/** The heap a loaded collection holds (bench/heap.ts in its own process, GC exposed). */
async function heapCost(dataDir: string): Promise<HeapCost> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--v8-flags=--expose-gc", "bench/heap.ts", dataDir],
    cwd: ROOT,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error("bench/heap.ts failed");
  return JSON.parse(new TextDecoder().decode(out.stdout)) as HeapCost;
}

async function scale(sizes: number[]): Promise<void> {
  const rows: string[][] = [];
  // The floor of every sequential latency: a hello world through the same client.
  const hello = await startHello();
  try {
    for (const size of sizes) rows.push(await scaleRow(size, hello));
  } finally {
    await hello.stop();
  }
  console.log("\nscale (embedded store; latencies are medians of sequential requests, in ms)\n");
  console.log(table([
    "documents",
    "hello p50",
    "POST p50",
    "fdatasync p50",
    "bulk POST 1,000",
    "load s",
    "GET item",
    "where email =",
    "sort=-age page",
    "sort=name page",
    "restart + first read s",
    "first where after restart",
    "count-free page",
    "RSS after load MiB",
    "RSS after the reads MiB",
    "RSS after restart MiB",
    "heap B/doc",
    "heap/JSON",
  ], rows));
}

/** One row of the scale table: `size` documents loaded, then measured. */
async function scaleRow(size: number, hello: Server): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-scale-" });
  let service = await startService(dir);
  try {
    const t0 = performance.now();
    const ids = await seed(service.base, size);
    const load = (performance.now() - t0) / 1000;
    const seededRss = await rssMiB(service.process.pid);
    const fsync = await fsyncMs(dir);
    const floor = await sequentialMs(hello.base, "", "hello");
    const base = service.base;
    const json = { "content-type": "application/json" };
    // The POSTs of the load above were bulk ones: single POSTs first run untimed, as long as
    // a timed run, so the timed one measures a warmed path rather than its first compilation.
    await wrk(`${base}/`, luaPost("warm"), {
      connections: 1,
      threads: 1,
      seconds: SEQUENTIAL_SECONDS,
      timeout: 30,
    });
    const post = await sequentialMs(base, luaPost("single"), "POST");
    const bulks: number[] = [];
    for (let b = 0; b < 3; b++) {
      const batch = Array.from({ length: 1000 }, (_, i) => person(i, `bulk${b}-`));
      const t = performance.now();
      const res = await fetch(`${base}/people`, {
        method: "POST",
        headers: json,
        body: JSON.stringify(batch),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`bulk failed: ${res.status}`);
      bulks.push(performance.now() - t);
    }
    const spread = (make: (n: number) => string) =>
      Array.from({ length: 1000 }, (_, i) => make((i * 7919) % size));
    const item = await sequentialMs(base, luaGet(spread((n) => `/people/${ids[n]}`)), "GET item");
    const eq = await sequentialMs(
      base,
      luaGet(
        spread((n) =>
          `/people?where=${encodeURIComponent(JSON.stringify({ email: `p${n}@example.org` }))}`
        ),
      ),
      "where email =",
    );
    const pages = [1, 2, 3, 4];
    const sorted = await sequentialMs(
      base,
      luaGet(pages.map((p) => `/people?sort=-age&page=${p}`)),
      "sort=-age page",
      "/people?sort=-age",
    );
    // A sort no index serves: every matching document is sorted per request.
    const unindexed = await latency(5, (i) => fetch(`${base}/people?sort=name&page=${1 + i}`));
    const rss = await rssMiB(service.process.pid);
    await service.stop();
    const t1 = performance.now();
    // Restarted count-free: OPTIMIZE_PAGINATION_FOR_SPEED pages should not depend on size.
    service = await startService(dir, { OPTIMIZE_PAGINATION_FOR_SPEED: true });
    const first = await fetch(`${service.base}/people?max_results=1`);
    await first.arrayBuffer();
    const start = (performance.now() - t1) / 1000;
    const restartedRss = await rssMiB(service.process.pid);
    // The first indexed read after a restart builds the collection's indexes.
    const t2 = performance.now();
    const firstWhere = await fetch(
      `${service.base}/people?where=${
        encodeURIComponent(JSON.stringify({ email: "p7@example.org" }))
      }`,
    );
    await firstWhere.arrayBuffer();
    const firstWhereMs = performance.now() - t2;
    const countFree = await sequentialMs(
      service.base,
      luaGet(pages.map((p) => `/people?page=${p}`)),
      "count-free page",
    );
    await service.stop();
    const heap = await heapCost(`${dir}/data`);
    console.error(`done: ${size}`);
    return [
      size.toLocaleString("en"),
      fmt(floor, 3),
      fmt(post),
      fmt(fsync),
      fmt(median(bulks), 0),
      fmt(load, 1),
      fmt(item),
      fmt(eq),
      fmt(sorted),
      fmt(unindexed, 0),
      fmt(start, 2),
      fmt(firstWhereMs, 0),
      fmt(countFree),
      fmt(seededRss, 0),
      fmt(rss, 0),
      fmt(restartedRss, 0),
      fmt(heap.heapBytes / heap.docs, 0),
      fmt(heap.heapBytes / heap.jsonBytes, 2),
    ];
  } finally {
    await service.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      scale: { type: "boolean" },
      sizes: { type: "string" },
      mongo: { type: "boolean" },
      stub: { type: "boolean" },
      domain: { type: "string", default: "shop" },
    },
  });
  if (values.domain !== "shop" && values.domain !== "people") {
    throw new Error(`--domain: shop (the default) or people, not ${values.domain}`);
  }
  if (values.mongo) {
    await mongoComparison(!!values.stub);
  } else if (values.scale) {
    const sizes = values.sizes ? values.sizes.split(",").map(Number) : [1000, 100_000];
    await scale(sizes);
  } else {
    await throughput(values.domain);
  }
}
