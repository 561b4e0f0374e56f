/**
 * Creates the indexes the domain needs at start-up: one unique index per `unique` field
 * (the store's last word in a race between two writers) and the `mongo_indexes` of each
 * resource, plus plain indexes on the additional lookup field, the AUTH_FIELD and the first
 * default_sort field (the embedded store uses them for equality, `$in` and sorted pages).
 *
 * A unique index that cannot be built because stored documents already share a value
 * stops start-up, naming the values: serving without it would let new duplicates in. Any
 * other index that fails is logged (the service answers the same without it, slower).
 */
import type { Runtime } from "./runtime.ts";
import { type Collection, DuplicateKeyError, type IndexSpec } from "../store/store.ts";
import { softDeleteOf } from "./soft-delete.ts";
import { showValue } from "../validation/mod.ts";

/** How many duplicate values an {@link IndexBuildError} names at most. */
const SHOWN_DUPLICATES = 5;

/** Thrown at start-up when a unique index cannot be built over the stored documents. */
export class IndexBuildError extends Error {
  constructor(
    message: string,
    /** The duplicated values found (at most a few), each as shown in the message. */
    readonly duplicates: string[],
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "IndexBuildError";
  }
}

/**
 * Values of `spec`'s keys that several documents share (a few of them, most repeated
 * first), as shown to people; empty when the store cannot group them.
 */
async function duplicateValues(
  rt: Runtime,
  index: { collection: Collection; spec: IndexSpec },
): Promise<string[]> {
  const { collection, spec } = index;
  const fields = Object.keys(spec.keys);
  const key = fields.length === 1
    ? `$${fields[0]}`
    : Object.fromEntries(fields.map((f, i) => [`k${i}`, `$${f}`]));
  try {
    const groups = await collection.aggregate([
      { $match: spec.partialFilterExpression ?? {} },
      { $group: { _id: key, count: { $sum: 1 } } },
      { $match: { count: { $gt: 1 } } },
      { $sort: { count: -1 } },
      { $limit: SHOWN_DUPLICATES },
    ]);
    return groups.map((g) => `'${showValue(g._id, rt.settings.DATE_FORMAT)}' (${g.count} times)`);
  } catch {
    return []; // The error below still names the index and the fields.
  }
}

export async function ensureIndexes(rt: Runtime): Promise<void> {
  for (const resource of rt.domain.values()) {
    const schema = rt.schemas.get(resource.name);
    const collection = rt.store.collection(resource.source);
    // Several endpoints may share a collection through predefined filters; uniqueness
    // is then per endpoint and checked by query only.
    const shared = [...rt.domain.values()].some((r) =>
      r !== resource && r.source === resource.source
    );
    const specs: IndexSpec[] = [];
    if (!shared && Object.keys(resource.filter).length === 0) {
      for (const field of schema?.uniqueFields ?? []) {
        specs.push({
          keys: { [field]: 1 },
          unique: true,
          name: `unique_${field}`,
          // Documents without the field never collide (the schema check treats them as
          // absent), and soft-deleted documents are ignored by the uniqueness check.
          partialFilterExpression: {
            [field]: { $exists: true },
            ...softDeleteOf(rt, resource).uniqueIndexCondition,
          },
        });
      }
    }
    for (const index of resource.indexes) {
      const { unique, sparse, expireAfterSeconds, partialFilterExpression, ...options } =
        index.options;
      specs.push({
        keys: index.keys,
        name: index.name,
        unique: unique === true,
        ...(sparse === true ? { sparse: true } : {}),
        ...(typeof expireAfterSeconds === "number" ? { expireAfterSeconds } : {}),
        ...(partialFilterExpression
          ? {
            partialFilterExpression:
              partialFilterExpression as IndexSpec["partialFilterExpression"],
          }
          : {}),
        ...(Object.keys(options).length > 0 ? { options } : {}),
      });
    }
    // Automatic plain indexes for the fields requests look up and sort on.
    const automatic: Array<[string, 1 | -1]> = [];
    const lookup = resource.additionalLookup?.field;
    if (lookup && lookup !== "_id") automatic.push([lookup, 1]);
    const owner = rt.auth?.ownerField(resource);
    if (owner && owner !== "_id") automatic.push([owner, 1]);
    const [sortField, sortDir] = Object.entries(resource.defaultSort ?? {})[0] ?? [];
    if (sortField && sortField !== "_id") automatic.push([sortField, sortDir === -1 ? -1 : 1]);
    for (const [field, dir] of automatic) {
      const covered = specs.some((s) => Object.keys(s.keys)[0] === field);
      if (!covered) specs.push({ keys: { [field]: dir }, name: `auto_${field}` });
    }
    for (const spec of specs) {
      try {
        await collection.createIndex(spec);
      } catch (error) {
        if (spec.unique && error instanceof DuplicateKeyError) {
          const duplicates = await duplicateValues(rt, { collection, spec });
          const fields = Object.keys(spec.keys).join(", ");
          const found = duplicates.length ? `: ${duplicates.join(", ")}` : "";
          throw new IndexBuildError(
            `DOMAIN.${resource.name}: the unique index ${spec.name} on ${fields} cannot be ` +
              `built, stored documents of "${resource.source}" share values${found}. ` +
              "Remove the duplicates, or drop `unique` from the schema.",
            duplicates,
            { cause: error },
          );
        }
        rt.log.log(
          spec.unique ? "error" : "warn",
          `could not create index ${spec.name} on ${resource.source}`,
          {
            error: (error as Error).message,
          },
        );
      }
    }
  }
}
