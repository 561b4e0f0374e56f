/**
 * Child process of the embedded store durability test: inserts documents one by one into
 * the store at `Deno.args[0]` and prints each acknowledged `_id` on its own line.
 */
import { openEmbeddedStore } from "../../src/store/embedded/mod.ts";
import { ObjectId } from "../../src/doc/bson.ts";

const store = await openEmbeddedStore(Deno.args[0]);
const coll = store.collection("durable");
const out = Deno.stdout;
const encoder = new TextEncoder();
for (let i = 0; i < 100_000; i++) {
  const _id = new ObjectId();
  await coll.insertMany([{ _id, i, at: new Date() }]);
  out.writeSync(encoder.encode(_id.toHexString() + "\n"));
}
