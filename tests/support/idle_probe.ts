/**
 * @module
 * A program for tests/util/idle_gc_test.ts: a service on the embedded store in a fresh data
 * directory takes 1,000 documents in a bulk POST and answers single-item GETs, 32 at a time,
 * for `LOAD_MS` (1,500 by default); it prints `idle` and the V8 heap's size, then, with nothing
 * else to do, prints the heap's size every half second (`heap N`) until its standard input
 * closes (at most 120 s), prints `done` and ends.
 */
import { itemsService } from "./items_service.ts";

const LOAD_MS = Number(Deno.env.get("LOAD_MS") ?? 1500);
const dir = await Deno.makeTempDir({ prefix: "restsvc-idle-probe-" });
try {
  const service = await itemsService(dir);
  const items = await service.post(
    Array.from({ length: 1000 }, (_, n) => ({ name: `item ${n}`, n })),
  );
  const start = performance.now();
  for (let round = 0; performance.now() - start < LOAD_MS; round++) {
    await Promise.all(
      Array.from({ length: 32 }, async (_, i) => {
        const { _id } = items[(round * 32 + i) % items.length];
        const answer = await service.handle(`/items/${_id}`);
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
