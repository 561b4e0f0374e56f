/**
 * @module
 * A program for tests/store/embedded_gc_test.ts: loads `DOCS` documents (21,000 by default)
 * through the API of a service on the embedded store in a fresh data directory, 1,000 a bulk
 * POST, then prints `loaded N`. Run it with V8's `--trace-gc` to see the collections the load
 * caused.
 */
import { itemsService } from "./items_service.ts";

const DOCS = Number(Deno.env.get("DOCS") ?? 21_000);
const dir = await Deno.makeTempDir({ prefix: "restsvc-bulk-probe-" });
try {
  const service = await itemsService(dir);
  let loaded = 0;
  for (let start = 0; start < DOCS; start += 1000) {
    const batch = [];
    for (let n = start; n < Math.min(DOCS, start + 1000); n++) {
      batch.push({ name: `item ${n} ${"x".repeat(40)}`, n, tags: ["a", "b", String(n)] });
    }
    loaded += (await service.post(batch)).length;
  }
  await service.close();
  console.log(`loaded ${loaded}`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
