/**
 * @module
 * A program for tests/store/embedded_gc_test.ts: loads `DOCS` documents (21,000 by default)
 * through the API of a service on the embedded store in a fresh data directory, 1,000 a bulk
 * POST, then prints `loaded N`. Run it with V8's `--trace-gc` to see the collections the load
 * caused.
 */
import { createService } from "../../src/mod.ts";

const DOCS = Number(Deno.env.get("DOCS") ?? 21_000);
const dir = await Deno.makeTempDir({ prefix: "restsvc-bulk-probe-" });
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
try {
  const service = await createService({
    STORE: "embedded",
    DATA_DIR: dir,
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      items: {
        schema: { name: { type: "string" }, n: { type: "integer" }, tags: { type: "list" } },
      },
    },
  }, { env: false });
  let loaded = 0;
  for (let start = 0; start < DOCS; start += 1000) {
    const batch = [];
    for (let n = start; n < Math.min(DOCS, start + 1000); n++) {
      batch.push({ name: `item ${n} ${"x".repeat(40)}`, n, tags: ["a", "b", String(n)] });
    }
    const res = await service.fetch(
      new Request("http://127.0.0.1:8000/items", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(batch),
      }),
      info,
    );
    const body = await res.json();
    if (res.status !== 201) throw new Error(`load: ${res.status} ${JSON.stringify(body)}`);
    loaded += batch.length;
  }
  await service.close();
  console.log(`loaded ${loaded}`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
