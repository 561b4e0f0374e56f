/**
 * @module
 * The commands the service sends to MongoDB for one request of each kind, next to what the
 * raw driver (`bench/raw_driver.ts`) sends for the same reads: GET item, a page of 25 and a
 * POST on the `people` domain of `deno task bench`, and GET customer, a page of 25 and POST
 * customer on the shop domain (bench/shop-settings.json). Every client the process makes is
 * monitored (`monitorCommands`); run against jongodb, or a server named by `MONGO_URI`.
 *
 * ```sh
 * deno run -A bench/mongo_commands.ts
 * ```
 */
import { type CommandStartedEvent, MongoClient, ObjectId } from "mongodb";
import { createService } from "../src/mod.ts";
import { startJongodb } from "../tests/support/jongodb.ts";
import { customer } from "./shop_data.ts";
import { settings as peopleSettings } from "./bench.ts";

const seen: string[] = [];
let recording = false;
const connect = MongoClient.prototype.connect;
MongoClient.prototype.connect = function (this: MongoClient) {
  this.on("commandStarted", (e: CommandStartedEvent) => {
    if (!recording) return;
    const cmd = e.command as Record<string, unknown>;
    const brief: Record<string, unknown> = {};
    for (const key of ["filter", "limit", "skip", "sort", "projection", "query", "pipeline"]) {
      if (cmd[key] !== undefined) brief[key] = cmd[key];
    }
    if (Deno.env.get("FULL")) {
      for (const [k, v] of Object.entries(cmd)) if (!(k in brief)) brief[k] = v;
      delete brief.documents;
      delete brief.updates;
    }
    if (Array.isArray(cmd.documents)) brief.documents = cmd.documents.length;
    if (cmd.lsid) brief.session = true;
    if (cmd.txnNumber !== undefined) brief.txn = true;
    seen.push(`${e.commandName} ${String(cmd[e.commandName])} ${JSON.stringify(brief)}`);
  });
  return connect.call(this);
} as typeof connect;

const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;
const origin = "http://127.0.0.1:8000";
const headers = { "content-type": "application/json", host: "127.0.0.1:8000" };

const given = Deno.env.get("MONGO_URI");
const server = given ? null : await startJongodb();
const base = new URL(given ?? server!.uri);

async function traced(name: string, call: () => Promise<Response | unknown>) {
  seen.length = 0;
  recording = true;
  const res = await call();
  if (res instanceof Response) {
    await res.arrayBuffer();
    if (res.status >= 300) throw new Error(`${name}: ${res.status}`);
  }
  recording = false;
  console.log(`\n${name}: ${seen.length} command(s)`);
  for (const line of seen) console.log(`  ${line}`);
}

type Service = Awaited<ReturnType<typeof createService>>;
const fetchOf = (service: Service) => (method: string, path: string, body?: unknown) =>
  service.fetch(
    new Request(origin + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    info,
  );

function uri(db: string): string {
  const url = new URL(base);
  url.pathname = `/${db}${Date.now()}`;
  return url.href;
}

try {
  // people, as `deno task bench --mongo` runs it
  const people = uri("cmdpeople");
  const service = await createService(
    peopleSettings({ STORE: "mongo", MONGO_URI: people, MONGO_OPTIONS: { monitorCommands: true } }),
    { env: false },
  );
  const call = fetchOf(service);
  const batch = Array.from({ length: 60 }, (_, n) => ({ name: `P${n}`, email: `p${n}@x`, age: n }));
  const posted = await call("POST", "/people", batch);
  const ids = (await posted.json())._items.map((i: { _id: string }) => i._id);
  if (Deno.env.get("IDLE")) {
    await traced("people: idle 3 s", () => new Promise((r) => setTimeout(r, 3000)));
  }
  await traced("people: GET item", () => call("GET", `/people/${ids[3]}`));
  await traced("people: GET page 2 of 25", () => call("GET", "/people?page=2"));
  await traced("people: GET item again", () => call("GET", `/people/${ids[4]}`));
  await traced("people: POST one", () => call("POST", "/people", { name: "x", email: "x@x" }));
  await traced("people: PATCH one", () => call("PATCH", `/people/${ids[5]}`, { age: 7 }));

  const raw = new MongoClient(people, { monitorCommands: true });
  await raw.connect();
  const coll = raw.db().collection("people");
  await traced("raw: GET item", () => coll.findOne({ _id: new ObjectId(ids[3]) }));
  await traced(
    "raw: GET page 2 of 25",
    () => Promise.all([coll.find({}).skip(25).limit(25).toArray(), coll.countDocuments({})]),
  );
  await raw.close();
  await service.close();

  // the shop domain
  const settings = JSON.parse(
    await Deno.readTextFile(new URL("shop-settings.json", import.meta.url)),
  );
  const shop = await createService(
    {
      ...settings,
      STORE: "mongo",
      MONGO_URI: uri("cmdshop"),
      MONGO_OPTIONS: { monitorCommands: true },
    },
    { env: false },
  );
  const shopCall = fetchOf(shop);
  const cs = await shopCall(
    "POST",
    "/customers",
    Array.from({ length: 60 }, (_, n) => customer(n)),
  );
  const cids = (await cs.json())._items.map((i: { _id: string }) => i._id);
  const ps = await shopCall("POST", "/products", { sku: "SKU-1", title: "P", price: 5 });
  const pid = (await ps.json())._id;
  await traced("shop: GET customer", () => shopCall("GET", `/customers/${cids[3]}`));
  await traced(
    "shop: GET customer by email",
    () => shopCall("GET", `/customers/${customer(4).email}`),
  );
  await traced("shop: GET page 2 of 25", () => shopCall("GET", "/customers?page=2"));
  await traced("shop: POST customer", () => shopCall("POST", "/customers", customer(1000)));
  await traced("shop: POST order", () =>
    shopCall("POST", "/orders", {
      customer: cids[1],
      items: [{ product: pid, quantity: 1, price: 5 }],
      total: 5,
    }));
  await shop.close();
} finally {
  await server?.stop();
}
