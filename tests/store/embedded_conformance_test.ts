/**
 * The store conformance suite on the embedded store, each case in a fresh temp directory.
 */
import { openEmbeddedStore } from "../../src/store/embedded/mod.ts";
import { storeConformance } from "./conformance.ts";

const dirs: string[] = [];

storeConformance("embedded", async () => {
  const dir = await Deno.makeTempDir({ prefix: "eve_embedded_conf_" });
  dirs.push(dir);
  return await openEmbeddedStore(dir);
});

Deno.test("embedded store: remove the conformance temp directories", async () => {
  for (const dir of dirs.splice(0)) await Deno.remove(dir, { recursive: true });
});
