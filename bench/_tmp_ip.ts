import { toRequest } from "../src/http/http1_request.ts";
import { createService } from "../src/mod.ts";
const shared = Number(Deno.args[0] ?? 0);
const page = Deno.args[1] === "page";
const dir = await Deno.makeTempDir();
const DOMAIN: Record<string, unknown> = {
  people: { schema: { name: { type: "string" }, email: { type: "string", unique: true }, age: { type: "integer" } } },
};
for (let i = 0; i < shared; i++) DOMAIN[`v${i}`] = { datasource: { source: "people", filter: { age: { $gt: i } } }, schema: { name: { type: "string" } } };
const service = await createService({ RESOURCE_METHODS: ["GET", "POST"], STORE: "embedded", DATA_DIR: dir, DOMAIN }, { env: false });
const info = { remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 }, completed: Promise.resolve() } as any;
const o = "http://127.0.0.1:8000";
const r = await service.fetch(new Request(`${o}/people`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(Array.from({ length: 100 }, (_, n) => ({ name: `P${n}`, email: `p${n}@x.org`, age: n }))) }), info);
const { _items } = await r.json();
const url = page ? `${o}/people?page=2` : `${o}/people/${_items[0]._id}`;
for (let round = 0; round < 5; round++) {
  const t = performance.now();
  for (let i = 0; i < 20000; i++) {
    const res = await service.fetch(toRequest({ method: "GET", url, fields: [["host", "x"]], body: null }), info);
    if (res.status !== 200) throw new Error(String(res.status));
    await res.arrayBuffer();
  }
  console.log(shared, page, ((performance.now() - t) * 1000 / 20000).toFixed(2), "us");
}
await service.close();
