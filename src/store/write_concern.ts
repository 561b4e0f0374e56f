/**
 * Write concerns on a store of one node (the embedded store): a `mongo_write_concern` whose
 * `w` asks more than one node (a number over 1) or a tag set (a name other than "majority")
 * can never be acknowledged there. Such a resource's writes are refused before anything
 * changes, with the error a MongoDB deployment gives for them (`WriteConcernError`, answered
 * 500), and the service warns at start-up.
 *
 * ```ts
 * unsatisfiableOnOneNode({ w: 2 }); // "w: 2 asks 2 nodes to acknowledge every write; ..."
 * const strict = refusingWrites(store.collection("contacts"), reason); // writes throw
 * ```
 */
import { type Collection, WriteConcernError } from "./store.ts";

/** Why `concern` cannot be acknowledged by a single node; null when it can. */
export function unsatisfiableOnOneNode(concern: Record<string, unknown>): string | null {
  const w = concern.w;
  if (typeof w === "number" && w > 1) {
    return `w: ${w} asks ${w} nodes to acknowledge every write; the embedded store is one node`;
  }
  if (typeof w === "string" && w !== "majority") {
    return `w: ${JSON.stringify(w)} names a tag set; the embedded store is one node without tags`;
  }
  return null;
}

/**
 * `collection` with every document write refused (`WriteConcernError` naming `reason`)
 * before it changes anything; reads, indexes and drops pass through.
 */
export function refusingWrites(collection: Collection, reason: string): Collection {
  const refused = () =>
    Promise.reject(
      new WriteConcernError(
        `the write concern of collection ${JSON.stringify(collection.name)} cannot be ` +
          `acknowledged: ${reason}`,
      ),
    );
  return {
    name: collection.name,
    find: (filter, options) => collection.find(filter, options),
    findOne: (filter, options) => collection.findOne(filter, options),
    count: (filter, options) => collection.count(filter, options),
    aggregate: (pipeline, options) => collection.aggregate(pipeline, options),
    distinct: (field, filter) => collection.distinct(field, filter),
    createIndex: (spec) => collection.createIndex(spec),
    drop: () => collection.drop(),
    insertMany: refused,
    replaceOne: refused,
    updateOne: refused,
    updateMany: refused,
    deleteOne: refused,
    deleteMany: refused,
  };
}
