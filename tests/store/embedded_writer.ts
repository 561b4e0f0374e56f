/**
 * Child process of the embedded store durability test: inserts documents one by one into
 * the store at `Deno.args[0]` and prints each acknowledged `_id` on its own line. Each
 * document carries `Deno.args[1]` characters of padding (none by default).
 */
import { openEmbeddedStore } from "../../src/store/embedded/mod.ts";
import { ObjectId } from "../../src/doc/bson.ts";

const store = await openEmbeddedStore(Deno.args[0]);
const coll = store.collection("durable");
const out = Deno.stdout;
const encoder = new TextEncoder();
const padding = "x".repeat(Number(Deno.args[1] ?? 0));
for (let i = 0; i < 100_000; i++) {
  const _id = new ObjectId();
  await coll.insertMany([{ _id, i, at: new Date(), ...(padding ? { padding } : {}) }]);
  out.writeSync(encoder.encode(_id.toHexString() + "\n"));
}
