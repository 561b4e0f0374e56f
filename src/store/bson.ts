/**
 * The BSON value types used everywhere in the service.
 *
 * They are re-exported from the MongoDB driver so that one class identity exists in the
 * process: the driver loads its own copy of `bson`, and values it returns must pass the
 * same `instanceof` checks as values the service creates.
 */
import { BSON, ObjectId } from "mongodb";

export { Binary, DBRef, Decimal128, ObjectId } from "mongodb";
/** Extended JSON (canonical mode keeps BSON types through text). */
export const EJSON = BSON.EJSON;

/** Renders an id for URLs, `Location` headers and messages: an ObjectId as its hex. */
export function idToString(id: unknown): string {
  return id instanceof ObjectId ? id.toHexString() : String(id);
}
