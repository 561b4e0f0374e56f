/**
 * Heap cost of a loaded collection of the embedded store: opens a data directory (not in
 * use by a running service), loads one collection the way the service does (documents,
 * then every index built), decodes every document, and prints the V8 heap it holds
 * after a full garbage collection, per document and against the size of the documents as
 * JSON. Run by
 * `deno task bench --scale` after each size; alone:
 *
 *   deno run -A --v8-flags=--expose-gc bench/heap.ts <data dir> [collection]
 *
 * The JSON size of a document is `JSON.stringify` of it (ids as hex, dates as ISO text),
 * about what the API sends without `_links`.
 */
import { openEmbeddedStore } from "../src/store/embedded/mod.ts";

const gc = (globalThis as { gc?: () => void }).gc;

/** The numbers of one load: documents, heap bytes held, JSON bytes of the documents. */
export interface HeapCost {
  docs: number;
  heapBytes: number;
  jsonBytes: number;
  loadMs: number;
}

async function measure(dir: string, name: string): Promise<HeapCost> {
  if (!gc) throw new Error("run with --v8-flags=--expose-gc");
  const store = await openEmbeddedStore(dir);
  try {
    const collection = store.collection(name);
    gc();
    const before = Deno.memoryUsage().heapUsed;
    const t0 = performance.now();
    // A count loads the documents' keys; a write asks for every index, built then; a count
    // with a filter no index serves reads every document, which decodes them all.
    const docs = await collection.count({});
    await collection.count({ _id: "" });
    await collection.updateMany({ _id: { $in: [] } }, { $set: { x: 1 } });
    await collection.count({ _id: { $exists: true } });
    const loadMs = performance.now() - t0;
    gc();
    const heapBytes = Deno.memoryUsage().heapUsed - before;
    let jsonBytes = 0;
    for (const doc of await collection.find({})) jsonBytes += JSON.stringify(doc).length;
    return { docs, heapBytes, jsonBytes, loadMs };
  } finally {
    await store.close();
  }
}

if (import.meta.main) {
  const [dir, name = "people"] = Deno.args;
  const cost = await measure(dir, name);
  console.log(JSON.stringify(cost));
}
