/**
 * The CPU time of a restart on a data directory the `people` domain filled: opening the
 * service and its first read (a page of one), the first indexed reads (which come before the
 * collection's indexes are built and search the stored texts), the background warming until
 * the process is idle (building the indexes from the rows, then decoding every document),
 * an indexed read then, the first sorted page on an indexed field (which builds its sorted
 * view) and pages sorted on an unindexed field, in one process (CPU time of the process is
 * steadier than wall-clock time on a shared machine). `<dir>` holds `settings.json` and the
 * data directory `data` (what `deno task bench --scale` and bench/scale_memory.ts leave
 * behind while they run):
 *
 *   deno run -A --v8-flags=--expose-gc bench/restart_cost.ts <dir>
 */
import process from "node:process";
import { createService } from "../src/mod.ts";
const dir = Deno.args[0];
const settings = JSON.parse(await Deno.readTextFile(`${dir}/settings.json`));
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const o = "http://127.0.0.1:8000";
const out: string[] = [];
let service: Awaited<ReturnType<typeof createService>>;
const step = async (label: string, fn: () => Promise<unknown>) => {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await fn();
  const u = process.cpuUsage(cpu);
  out.push(
    `${label} cpu ${((u.user + u.system) / 1000).toFixed(0)} ms (wall ${
      (performance.now() - t).toFixed(0)
    })`,
  );
};
const get = async (path: string) => {
  const r = await service.fetch(new Request(o + path), info);
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(path);
};
await step("create+first read", async () => {
  service = await createService({ ...settings, STORE: "embedded", DATA_DIR: `${dir}/data` }, {
    env: false,
  });
  await get("/people?max_results=1");
});
const rss = () => (Deno.memoryUsage().rss / 1048576).toFixed(0);
out.push(`rss ${rss()}`);
await step(
  "first email where",
  () => get(`/people?where=${encodeURIComponent('{"email":"p77@example.org"}')}`),
);
await step("warming until idle", async () => {
  // Idle: the process used under a twentieth of the last half second.
  for (let last = process.cpuUsage();; last = process.cpuUsage()) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const used = process.cpuUsage(last);
    if (used.user + used.system < 25_000) break;
  }
});
out.push(`rss ${rss()}`);
await step(
  "email where",
  () => get(`/people?where=${encodeURIComponent('{"email":"p78@example.org"}')}`),
);
await step("first sort=-age", () => get(`/people?sort=-age`));
await step("sort=name", () => get(`/people?sort=name`));
await step("sort=name p3", () => get(`/people?sort=name&page=3`));
(globalThis as { gc?: () => void }).gc?.();
out.push(`rss ${rss()} heap ${(Deno.memoryUsage().heapUsed / 1048576).toFixed(0)}`);
console.log(out.join("; "));
await service!.close();
