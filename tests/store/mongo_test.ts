/**
 * The store conformance suite on the MongoDB store: against `MONGO_URI` when set (no
 * skips), else against a jongodb emulator started for this file (its gaps skipped).
 */
import { openMongoStore } from "../../src/store/mongo/mod.ts";
import { JONGODB_GAPS, mongoTarget } from "../support/jongodb.ts";
import { storeConformance } from "./conformance.ts";

const target = await mongoTarget();
const gaps = target.emulator ? new Set(JONGODB_GAPS.keys()) : new Set<string>();

storeConformance("mongo", () => openMongoStore({ uri: target.uri }), gaps);

Deno.test({
  name: "mongo store: stop the test server",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => target.stop(),
});
