/**
 * Temporary directories, embedded stores and a small service on one, for tests below the
 * scenario harness.
 *
 * ```ts
 * Deno.test("...", () => withStore(async (store) => { ... }));
 * ```
 */
import { openEmbeddedStore } from "../../src/store/embedded/mod.ts";
import type { Store } from "../../src/store/store.ts";
import { createService, type Service } from "../../src/mod.ts";
import type { Logger } from "../../src/log.ts";

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

/**
 * Runs `fn` with a service of one resource (`people`: a `name`; GET and POST) on an embedded
 * store in a fresh temporary directory, logging to `logger`; closed and removed afterwards.
 */
export function withPeopleService(
  logger: Logger,
  fn: (service: Service) => Promise<void>,
): Promise<void> {
  return inTempDir(async (dir) => {
    const service = await createService({
      STORE: "embedded",
      DATA_DIR: dir,
      RESOURCE_METHODS: ["GET", "POST"],
      DOMAIN: { people: { schema: { name: { type: "string" } } } },
    }, { env: false, logger });
    try {
      await fn(service);
    } finally {
      await service.close();
    }
  });
}
