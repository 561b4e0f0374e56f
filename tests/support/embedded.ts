/**
 * Temporary directories and embedded stores for store-level tests.
 *
 * ```ts
 * Deno.test("...", () => withStore(async (store) => { ... }));
 * ```
 */
import { openEmbeddedStore } from "../../src/store/embedded/mod.ts";
import type { Store } from "../../src/store/store.ts";

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "embedded_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Runs `fn` with a store open in a fresh temporary directory, closed and removed afterwards. */
export function withStore(fn: (store: Store, dir: string) => Promise<void>): Promise<void> {
  return inTempDir(async (dir) => {
    const store = await openEmbeddedStore(dir);
    try {
      await fn(store, dir);
    } finally {
      await store.close();
    }
  });
}
