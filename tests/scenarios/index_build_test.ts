/**
 * A unique index that cannot be built stops start-up: documents stored before `unique` was
 * declared share a value, and the error names the values (both stores).
 */
import assert from "node:assert/strict";
import { createService } from "../../src/mod.ts";
import { IndexBuildError } from "../../src/services/indexes.ts";
import { createLogger } from "../../src/log.ts";
import { SANITIZED, STORES, storeSettings } from "../support/harness.ts";

const settingsWith = (unique: boolean) => ({
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { people: { schema: { email: { type: "string", unique } } } },
});

for (const kind of STORES) {
  Deno.test({
    name: `[${kind}] a unique index over stored duplicates stops start-up, naming them`,
    sanitizeOps: SANITIZED[kind],
    sanitizeResources: SANITIZED[kind],
    async fn() {
      const store = await storeSettings(kind);
      const options = { env: false, logger: createLogger(() => {}) };
      try {
        const before = await createService({ ...settingsWith(false), ...store }, options);
        try {
          for (const email of ["a@x.org", "a@x.org", "b@x.org", "c@x.org", "c@x.org"]) {
            await before.data.post("people", { email });
          }
        } finally {
          await before.close();
        }
        const error = await createService({ ...settingsWith(true), ...store }, options)
          .then(() => null, (e: unknown) => e);
        assert.ok(error instanceof IndexBuildError, String(error));
        assert.match(error.message, /DOMAIN\.people: the unique index unique_email on email/);
        assert.match(error.message, /'a@x\.org' \(2 times\), 'c@x\.org' \(2 times\)\./);
        assert.match(error.message, /c@x\.org/);
        assert.doesNotMatch(error.message, /b@x\.org/);
        assert.equal(error.duplicates.length, 2);
        // Without the duplicates, the same settings start.
        const fixed = await createService({ ...settingsWith(false), ...store }, options);
        await fixed.data.delete("people");
        await fixed.close();
        const after = await createService({ ...settingsWith(true), ...store }, options);
        await after.close();
      } finally {
        if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
      }
    },
  });
}
