/**
 * The store conformance suite on the embedded store, each case in a fresh temp directory,
 * removed when the case closes its store.
 */
import { openEmbeddedStore } from "../../src/store/embedded/mod.ts";
import { storeConformance } from "./conformance.ts";

storeConformance("embedded", async () => {
  const dir = await Deno.makeTempDir({ prefix: "eve_embedded_conf_" });
  const store = await openEmbeddedStore(dir);
  const close = store.close.bind(store);
  store.close = async () => {
    try {
      await close();
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  };
  return store;
});
