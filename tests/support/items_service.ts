/**
 * @module
 * What the probe programs (bulk_load_probe.ts, idle_probe.ts) share: a service on the embedded
 * store with one resource, `items` (`name`, `n`, `tags`), answering plain Requests in process.
 */
import { createService } from "../../src/mod.ts";

type Service = Awaited<ReturnType<typeof createService>>;

const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const origin = "http://127.0.0.1:8000";

/** The service over the data directory `dir`, with `handle(path, init)` answering requests. */
export async function itemsService(dir: string) {
  const service: Service = await createService({
    STORE: "embedded",
    DATA_DIR: dir,
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      items: {
        schema: { name: { type: "string" }, n: { type: "integer" }, tags: { type: "list" } },
      },
    },
  }, { env: false });
  const handle = (path: string, init?: RequestInit) =>
    service.fetch(new Request(`${origin}${path}`, init), info);
  return {
    handle,
    /** Stores `docs` with one bulk POST; the created items (throws unless answered 201). */
    async post(docs: unknown[]): Promise<Array<{ _id: string }>> {
      const res = await handle("/items", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(docs),
      });
      const body = await res.json();
      if (res.status !== 201) throw new Error(`POST: ${res.status} ${JSON.stringify(body)}`);
      return body._items;
    },
    close: () => service.close(),
  };
}
