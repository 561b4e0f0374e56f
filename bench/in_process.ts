/**
 * @module
 * The service's own per-request cost, without sockets: plain Requests handed to `service.fetch`
 * in a loop, on the embedded store, with the bench's document shape. Three domains run side by
 * side in one process, their rounds interleaved so a busy machine slows all of them alike:
 *
 * - `alone`: the `people` resource alone;
 * - `30 resources`: the same with 29 unrelated resources on their own collections;
 * - `5 sharing`: the same with 5 more resources on the `people` collection (views with a
 *   `datasource.filter` and projection, an aggregation endpoint).
 *
 * Prints each domain's fastest and median round in microseconds per request, wall-clock and
 * CPU time of the process (the steadier of the two on a shared machine), and the two ratios
 * to `alone` (a request's cost should depend on what it reads, not on how many resources
 * exist or share its collection: both within 10%), of the fastest rounds, of the median
 * rounds, and the median of the rounds' own ratios (each round's domains ran one after the
 * other, so a change in the machine's load between rounds cancels out; each round starts with
 * a different domain), and the heap each request allocated (V8's count, garbage included:
 * machine load does not change it). With `--cpu-prof` it is the
 * profile to read before changing anything on the read path.
 *
 * ```sh
 * deno run -A bench/in_process.ts            # GET of one item
 * deno run -A bench/in_process.ts --page     # GET of a page of 25 (of 100 documents)
 * deno run -A bench/in_process.ts --only=5   # one domain (alone, 30, 5), e.g. to profile it
 * deno run -A --cpu-prof --cpu-prof-dir=/tmp/prof bench/in_process.ts --only=5
 * ```
 */
import { parseArgs } from "node:util";
import process from "node:process";
import v8 from "node:v8";
import { createService } from "../src/mod.ts";

const ROUNDS = 12;
const PER_ROUND = Deno.args.includes("--page") ? 2_000 : 20_000;
const BIO = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor " +
  "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud.";

const { values } = parseArgs({
  args: Deno.args,
  options: { page: { type: "boolean" }, only: { type: "string" } },
});

const PEOPLE = {
  schema: {
    name: { type: "string" },
    email: { type: "string", unique: true },
    age: { type: "integer" },
    city: { type: "string" },
    tags: { type: "list", schema: { type: "string" } },
    bio: { type: "string" },
  },
};

/** `people` plus `unrelated` resources on their own collections and `sharing` on its own. */
function domain({ unrelated, sharing }: { unrelated: number; sharing: number }) {
  const out: Record<string, unknown> = { people: PEOPLE };
  for (let i = 0; i < unrelated; i++) {
    out[`things${i}`] = { schema: { label: { type: "string" }, n: { type: "integer" } } };
  }
  for (let i = 0; i < sharing; i++) {
    out[`people_view${i}`] = i === sharing - 1
      ? {
        datasource: {
          source: "people",
          aggregation: { pipeline: [{ $group: { _id: "$city", n: { $sum: 1 } } }] },
        },
      }
      : {
        datasource: { source: "people", filter: { age: { $gte: 10 * i } } },
        schema: { name: { type: "string" }, age: { type: "integer" }, city: { type: "string" } },
      };
  }
  return out;
}

const DOMAINS = [
  { key: "alone", label: "alone (1 resource)", unrelated: 0, sharing: 0 },
  { key: "30", label: "30 resources", unrelated: 29, sharing: 0 },
  { key: "5", label: "5 sharing the collection", unrelated: 0, sharing: 5 },
].filter((d) => values.only === undefined || values.only === d.key);
if (DOMAINS.length === 0) throw new Error(`--only: one of alone, 30, 5`);

const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const origin = "http://127.0.0.1:8000";
const people = Array.from({ length: 100 }, (_, n) => ({
  name: `Person ${n}`,
  email: `p${n}@example.org`,
  age: (n * 37) % 100,
  city: "Lyon",
  tags: ["a", `t${n % 10}`],
  bio: BIO,
}));

/** One service per domain, loaded with the same 100 documents, and the URL it is asked. */
async function start(d: (typeof DOMAINS)[number]) {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-in-process-" });
  const service = await createService({
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    IF_MATCH: false,
    STORE: "embedded",
    DATA_DIR: dir,
    DOMAIN: domain(d),
  }, { env: false });
  const created = await service.fetch(
    new Request(`${origin}/people`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(people),
    }),
    info,
  );
  const { _items: items } = await created.json() as { _items: { _id: string }[] };
  const url = values.page ? `${origin}/people?page=2` : `${origin}/people/${items[0]._id}`;
  return {
    ...d,
    dir,
    service,
    url,
    rounds: [] as number[],
    cpu: [] as number[],
    bytes: [] as number[],
  };
}

type Run = Awaited<ReturnType<typeof start>>;
const runs: Run[] = [];
for (const d of DOMAINS) runs.push(await start(d));

/** One request, its answer's body read. */
async function once(run: Run): Promise<void> {
  const request = new Request(run.url, {
    headers: [["host", "127.0.0.1:8000"], ["user-agent", "wrk"]],
  });
  const response = await run.service.fetch(request, info);
  if (response.status !== 200) throw new Error(`${run.label}: answered ${response.status}`);
  await response.arrayBuffer();
}

/** V8's count of bytes allocated so far (garbage included; machine load does not change it). */
const allocated = () =>
  (v8.getHeapStatistics() as unknown as { total_allocated_bytes: number }).total_allocated_bytes;

for (let r = 0; r < ROUNDS; r++) {
  // Each round starts with a different domain, so none always follows another.
  const order = runs.map((_, i) => runs[(i + r) % runs.length]);
  for (const run of order) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const bytes = allocated();
    for (let i = 0; i < PER_ROUND; i++) await once(run);
    run.bytes.push((allocated() - bytes) / PER_ROUND);
    run.rounds.push((performance.now() - started) * 1000 / PER_ROUND);
    const used = process.cpuUsage(cpu);
    run.cpu.push((used.user + used.system) / PER_ROUND);
  }
}
console.log(values.page ? "GET page of 25 (of 100 documents)" : "GET item");
const mid = ROUNDS >> 1;
/** The median of one domain's CPU time over `alone`'s, round by round (same moment, same load). */
function pairedRatio(run: Run, alone: Run): number {
  const ratios = run.cpu.map((cpu, r) => cpu / alone.cpu[r]).sort((a, b) => a - b);
  return ratios[mid];
}
const alone = runs.find((r) => r.key === "alone");
const paired = new Map(alone ? runs.map((run) => [run, pairedRatio(run, alone)]) : []);
for (const run of runs) {
  run.rounds.sort((a, b) => a - b);
  run.cpu.sort((a, b) => a - b);
  run.bytes.sort((a, b) => a - b);
  console.log(
    `  ${run.label.padEnd(26)} wall: fastest round ${run.rounds[0].toFixed(2)} us, median ${
      run.rounds[mid].toFixed(2)
    } us; CPU: fastest ${run.cpu[0].toFixed(2)} us, median ${
      run.cpu[mid].toFixed(2)
    } us; heap allocated ${(run.bytes[mid] / 1024).toFixed(1)} KiB`,
  );
}
if (alone) {
  for (const run of runs) {
    if (run === alone) continue;
    const ratio = (a: number, b: number) => (a / b).toFixed(3);
    console.log(
      `  ${run.label} / alone: wall ${ratio(run.rounds[0], alone.rounds[0])} (fastest), ${
        ratio(run.rounds[mid], alone.rounds[mid])
      } (median); CPU ${ratio(run.cpu[0], alone.cpu[0])} (fastest), ${
        ratio(run.cpu[mid], alone.cpu[mid])
      } (median), ${paired.get(run)!.toFixed(3)} (median of the rounds' ratios); heap ${
        ratio(run.bytes[mid], alone.bytes[mid])
      }`,
    );
  }
}
for (const run of runs) {
  await run.service.close();
  await Deno.remove(run.dir, { recursive: true });
}
