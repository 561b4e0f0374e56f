/**
 * `MONGO_AUTH_MECHANISM` and `MONGO_AUTH_MECHANISM_PROPERTIES` reach the MongoDB driver as
 * Eve passes them (`authMechanism`, `authMechanismProperties`); an unknown mechanism is a
 * problem at start-up.
 */
import assert from "node:assert/strict";
import { prepare, SettingsError } from "../../src/mod.ts";
import { openStore } from "../../src/store/open.ts";

Deno.test("MONGO_AUTH_MECHANISM: an unknown mechanism is refused with the nearest one", () => {
  assert.throws(
    () => prepare({ MONGO_AUTH_MECHANISM: "SCRAM-SHA256", DOMAIN: {} }, { env: false }),
    (error: unknown) =>
      error instanceof SettingsError &&
      error.problems.includes(
        'MONGO_AUTH_MECHANISM: unknown mechanism "SCRAM-SHA256" (did you mean SCRAM-SHA-256?)',
      ),
  );
});

Deno.test("MONGO_AUTH_MECHANISM: the driver gets the mechanism", async () => {
  // No user given: the driver refuses the mechanism before it connects, naming it.
  const { settings } = prepare({
    MONGO_URI: "mongodb://127.0.0.1:1/shop",
    MONGO_AUTH_MECHANISM: "SCRAM-SHA-256",
    DOMAIN: {},
  }, { env: false });
  await assert.rejects(
    openStore(settings, false),
    /Username required for mechanism 'SCRAM-SHA-256'/,
  );
});
