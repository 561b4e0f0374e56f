/**
 * BSON values for the embedded store.
 *
 * `src/store/bson.ts` re-exports `EJSON` by name from "mongodb", which Deno's CommonJS
 * export analysis does not see (the module fails to load). The classes here are the very
 * same objects the driver exports, so `instanceof` checks agree with the rest of the
 * service; `EJSON` is taken from the driver's `BSON` namespace instead.
 */
import { BSON } from "mongodb";

export { Binary, Decimal128, ObjectId } from "mongodb";

/** Extended JSON codec of the driver's bson copy. */
export const EJSON: typeof BSON.EJSON = BSON.EJSON;
