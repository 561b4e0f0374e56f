/**
 * Memory of the embedded store while the `people` collection is loaded through the API in
 * one process: V8 heap, external memory and RSS every `--every` documents, after loading,
 * after a forced garbage collection, and again after the store is reopened and read.
 *
 *   deno run -A --v8-flags=--expose-gc,--heap-growing-percent=100,--no-memory-reducer bench/scale_memory.ts \
 *     [--docs=100000] [--every=N]
 *
 * (the service's V8 flags, src/util/v8_flags.ts; `--expose-gc` at least).
 *
 * `NUDGE=<documents>` forces a full garbage collection every so many documents loaded (V8
 * runs it in one piece: the process stops for it), to see how much of the heap's growth during
 * a load is garbage V8 has not yet collected (the RSS never shrinks back once the heap has
 * grown).
 */
import { parseArgs } from "node:util";
import { createService } from "../src/mod.ts";
import { person, settings as peopleSettings } from "./bench.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { docs: { type: "string", default: "100000" }, every: { type: "string" } },
});
const DOCS = Number(values.docs);
const EVERY = Number(values.every ?? Math.max(1000, DOCS / 10));
const NUDGE = Number(Deno.env.get("NUDGE") ?? 0);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");

const settings = (dir: string) => peopleSettings({ STORE: "embedded", DATA_DIR: dir });
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const origin = "http://127.0.0.1:8000";

const MiB = (n: number) => (n / 1048576).toFixed(0).padStart(5);
function report(label: string): void {
  const m = Deno.memoryUsage();
  console.log(
    `${label.padEnd(28)} rss ${MiB(m.rss)} MiB  heap used ${MiB(m.heapUsed)} / total ${
      MiB(m.heapTotal)
    }  external ${MiB(m.external)}`,
  );
}

const dir = await Deno.makeTempDir({ prefix: "restsvc-scale-memory-" });
try {
  report("start");
  let service = await createService(settings(dir), { env: false });
  const t0 = performance.now();
  for (let start = 0; start < DOCS; start += 1000) {
    const batch = [];
    for (let n = start; n < Math.min(DOCS, start + 1000); n++) batch.push(person(n));
    const res = await service.fetch(
      new Request(`${origin}/people`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(batch),
      }),
      info,
    );
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`load: ${res.status}`);
    if (NUDGE && (start + 1000) % NUDGE === 0) {
      (gc as unknown as (o: unknown) => void)({ type: "major", execution: "async" });
    }
    if ((start + 1000) % EVERY === 0) report(`loaded ${start + 1000}`);
  }
  console.log(`load ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  report("after load");
  gc();
  report("after gc");
  await new Promise((r) => setTimeout(r, 2000));
  gc();
  report("after 2 s and gc");
  await service.close();
  gc();
  report("store closed, gc");
  const t1 = performance.now();
  service = await createService(settings(dir), { env: false });
  const res = await service.fetch(new Request(`${origin}/people?max_results=1`), info);
  await res.arrayBuffer();
  console.log(`reopen + first read ${((performance.now() - t1) / 1000).toFixed(2)} s`);
  report("reopened, first read");
  const t2 = performance.now();
  const where = await service.fetch(
    new Request(`${origin}/people?where=${encodeURIComponent('{"email":"p77@example.org"}')}`),
    info,
  );
  await where.arrayBuffer();
  console.log(`first indexed where ${(performance.now() - t2).toFixed(0)} ms`);
  gc();
  report("reopened, indexes, gc");
  await service.close();
} finally {
  await Deno.remove(dir, { recursive: true });
}
