/**
 * @module
 * The service's own per-request cost, without sockets: `Request`s handed to `service.fetch` in
 * a loop, on the embedded store, with the bench's document shape. Prints the fastest and the median of 12
 * rounds in microseconds per request. With `--cpu-prof` it is the profile to read before
 * changing anything on the read path.
 *
 * ```sh
 * deno run -A bench/in_process.ts            # GET of one item
 * deno run -A bench/in_process.ts --page     # GET of a page of 25 (of 100 documents)
 * deno run -A --cpu-prof --cpu-prof-dir=/tmp/prof bench/in_process.ts
 * ```
 */
import { parseArgs } from "node:util";
import { createService } from "../src/mod.ts";

const ROUNDS = 12;
const PER_ROUND = 50_000;
const BIO = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor " +
  "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud.";

const { values } = parseArgs({ args: Deno.args, options: { page: { type: "boolean" } } });
const dir = await Deno.makeTempDir({ prefix: "restsvc-in-process-" });
const service = await createService({
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  IF_MATCH: false,
  STORE: "embedded",
  DATA_DIR: dir,
  DOMAIN: {
    people: {
      schema: {
        name: { type: "string" },
        email: { type: "string", unique: true },
        age: { type: "integer" },
        city: { type: "string" },
        tags: { type: "list", schema: { type: "string" } },
        bio: { type: "string" },
      },
    },
  },
}, { env: false });
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
  completed: Promise.resolve(),
} as Deno.ServeHandlerInfo<Deno.NetAddr>;

const origin = "http://127.0.0.1:8000";
const people = Array.from({ length: 100 }, (_, n) => ({
  name: `Person ${n}`,
  email: `p${n}@example.org`,
  age: (n * 37) % 100,
  city: "Lyon",
  tags: ["a", `t${n % 10}`],
  bio: BIO,
}));
const created = await service.fetch(
  new Request(`${origin}/people`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(people),
  }),
  info,
);
const { _items: items } = await created.json() as { _items: { _id: string }[] };
const url = values.page ? `${origin}/people?page=2` : `${origin}/people/${items[0]._id}`;

/** One request, its answer's body read. */
async function once(): Promise<void> {
  const request = new Request(url, {
    headers: [["host", "127.0.0.1:8000"], ["user-agent", "wrk"]],
  });
  const response = await service.fetch(request, info);
  if (response.status !== 200) throw new Error(`answered ${response.status}`);
  await response.arrayBuffer();
}

const rounds: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const started = performance.now();
  for (let i = 0; i < PER_ROUND; i++) await once();
  rounds.push((performance.now() - started) * 1000 / PER_ROUND);
}
rounds.sort((a, b) => a - b);
const label = values.page ? "GET page of 25" : "GET item";
console.log(
  `${label}: fastest round ${rounds[0].toFixed(2)} us, median ${
    rounds[ROUNDS >> 1].toFixed(2)
  } us per request`,
);
await service.close();
await Deno.remove(dir, { recursive: true });
