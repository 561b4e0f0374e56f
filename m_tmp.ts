import { createService } from "./src/mod.ts";
import { createLogger } from "./src/log.ts";
const HASH = "$2b$10$2buBRUdzS.alJuRMgasZZebGDZieCV7PQ8K7hFiJtU/QYDIZxIWqa";
for (const auth of [false, true, false, true]) {
const dir = await Deno.makeTempDir();
const extra = auth ? { AUTH_SCHEMES: ["basic"], AUTH_USERS: [{ username: "root", password: HASH }] } : {};
const service = await createService({ STORE: "embedded", DATA_DIR: dir, ...extra, DOMAIN: { people: {} } }, { env: false, logger: createLogger(() => {}) });
const id = (await service.data.post("people", {})).body._id;
const req = () => new Request(`http://x/people/${id}`, { headers: { authorization: `Basic ${btoa("root:secret")}` } });
await service.fetch(req());
let t = performance.now();
for (let i = 0; i < 5000; i++) await (await service.fetch(req())).arrayBuffer();
console.log(auth, "GET item µs", (performance.now() - t) / 5);
}
