/**
 * @module
 * A program for tests/util/idle_gc_test.ts: a service on the embedded store in a fresh data
 * directory takes 1,000 documents in a bulk POST and answers single-item GETs, 32 at a time,
 * for `LOAD_MS` (1,500 by default); it prints `idle` and the V8 heap's size, then, with nothing
 * else to do, prints the heap's size every half second (`heap N`) until its standard input
 * closes (at most 120 s), prints `done` and ends.
 */
import { createService } from "../../src/mod.ts";

const LOAD_MS = Number(Deno.env.get("LOAD_MS") ?? 1500);
const dir = await Deno.makeTempDir({ prefix: "restsvc-idle-probe-" });
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const origin = "http://127.0.0.1:8000";
try {
  const service = await createService({
    STORE: "embedded",
    DATA_DIR: dir,
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: { items: { schema: { name: { type: "string" }, n: { type: "integer" } } } },
  }, { env: false });
  const batch = Array.from({ length: 1000 }, (_, n) => ({ name: `item ${n}`, n }));
  const res = await service.fetch(
    new Request(`${origin}/items`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(batch),
    }),
    info,
  );
  const body = await res.json();
  if (res.status !== 201) throw new Error(`load: ${res.status} ${JSON.stringify(body)}`);
  const ids: string[] = body._items.map((item: { _id: string }) => item._id);
  const start = performance.now();
  for (let round = 0; performance.now() - start < LOAD_MS; round++) {
    await Promise.all(
      Array.from({ length: 32 }, async (_, i) => {
        const id = ids[(round * 32 + i) % ids.length];
        const answer = await service.fetch(new Request(`${origin}/items/${id}`), info);
        if (answer.status !== 200) throw new Error(`GET: ${answer.status}`);
        await answer.text();
      }),
    );
  }
  // Then nothing runs but a look at the heap's size every half second, printed, until the test
  // closes standard input (or the deadline passes).
  console.log(`idle ${Deno.memoryUsage().heapTotal}`);
  const look = setInterval(() => console.log(`heap ${Deno.memoryUsage().heapTotal}`), 500);
  let deadline: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Deno.stdin.readable.pipeTo(new WritableStream()),
    new Promise((resolve) => deadline = setTimeout(resolve, 120_000)),
  ]);
  clearInterval(look);
  clearTimeout(deadline);
  await service.close();
  console.log("done");
} finally {
  await Deno.remove(dir, { recursive: true });
}
