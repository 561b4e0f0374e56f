/**
 * Glue between resource services and the validation engine: the store-backed checks
 * (uniqueness, data relations) and the validation-error response.
 */
import { ServiceError } from "./errors.ts";
import type { Issues } from "../validation/types.ts";
import type { DataRelation, Resource } from "../domain/types.ts";
import { singleType } from "../domain/schema.ts";
import { DBRef, parseObjectId } from "../doc/bson.ts";
import type { Doc } from "../store/store.ts";
import { andFilters } from "./filters.ts";
import { softDeleteOf } from "./soft-delete.ts";
import { versionExists, versionRef } from "./versions.ts";
import type { RequestContext, Runtime } from "./runtime.ts";
import { showValue, type ValidationContext } from "../validation/mod.ts";
import { getOwn, setOwn } from "../domain/keys.ts";
import { isFormRequest } from "./forms.ts";

/** Options of {@link validationContext}. */
export interface ValidationContextOptions {
  /** What the document is validated for: a create, a replacement or a patch. */
  mode: ValidationContext["mode"];
  /** The stored document a replacement or patch edits. */
  original?: Doc;
}

/** A validation context for one document of `ctx`'s resource. */
export function validationContext(
  rt: Runtime,
  ctx: RequestContext,
  options: ValidationContextOptions,
): ValidationContext {
  const { mode, original } = options;
  const { resource } = ctx;
  return {
    mode,
    original,
    mergeNested: resource.mergeNestedDocuments,
    normalizeDotted: resource.normalizeDotted,
    form: isFormRequest(ctx),
    async isDuplicate(field, value, excludeId, options = {}) {
      // unique_to_user: among the requester's documents (in-process calls: all of them).
      const owner = options.owned && !ctx.internal
        ? rt.auth?.ownerFilter(resource, ctx.account)
        : undefined;
      const filter = andFilters(
        resource.filter,
        owner,
        { [field]: value },
        excludeId === undefined ? undefined : { [resource.idField]: { $ne: excludeId } },
        softDeleteOf(rt, resource).liveOnly,
      );
      return (await rt.store.collection(resource.source).count(filter, { limit: 1 })) > 0;
    },
    async relationExists(relation: DataRelation, value) {
      const target = rt.domain.get(relation.resource);
      if (!target) return false;
      const field = relation.field ?? target.idField;
      const live = softDeleteOf(rt, target).liveOnly;
      // A versioned reference is an object naming the id and the version.
      if (relation.version && typeof value === "object" && value !== null) {
        const ref = versionRef(rt, { field, ref: value });
        return !!ref && await versionExists(rt, target, { field, ref, filter: live });
      }
      const query = andFilters(target.filter, { [field]: referenced(target, field, value) }, live);
      return (await rt.store.collection(target.source).count(query, { limit: 1 })) > 0;
    },
  };
}

/**
 * What a reference `value` to `target`'s `field` matches. A DBRef names the document by its
 * id. As in Eve, an id string in an untyped field (a list with no member type) names an
 * ObjectId when the referenced field is an ObjectId.
 */
function referenced(target: Resource, field: string, value: unknown): unknown {
  if (value instanceof DBRef) return value.oid;
  if (typeof value !== "string" || !/^[0-9a-fA-F]{24}$/.test(value)) return value;
  if (singleType(target.schemaModel.fieldAt(field)) !== "objectid") return value;
  return { $in: [value, parseObjectId(value)] };
}

/** VALIDATION_ERROR_AS_LIST: every message becomes a list of messages, nested fields nested. */
function asLists(issues: Issues): Doc {
  const out: Doc = {};
  for (const [field, value] of Object.entries(issues)) {
    out[field] = typeof value === "string" ? [value] : asLists(value);
  }
  return out;
}

/**
 * The validation error for `results` (each document's issues, null when it has none):
 * `_issues` of one document, or `_items` of a bulk request (`options.bulk`).
 */
export function validationError(
  rt: Runtime,
  results: Array<Issues | null>,
  options: { bulk: boolean },
): ServiceError {
  const { bulk } = options;
  const settings = rt.settings;
  const failed = results.filter(Boolean).length;
  const message = `Insertion failure: ${failed} document(s) contain(s) error(s)`;
  const shown = (issues: Issues) => settings.VALIDATION_ERROR_AS_LIST ? asLists(issues) : issues;
  if (!bulk) {
    // `_issues` is null when a document is refused without field issues.
    if (!results[0]) {
      return new ServiceError("validation", message, { body: { [settings.ISSUES]: null } });
    }
    return new ServiceError("validation", message, { issues: shown(results[0]) });
  }
  const items = results.map((issues) =>
    issues
      ? { [settings.STATUS]: settings.STATUS_ERR, [settings.ISSUES]: shown(issues) }
      : { [settings.STATUS]: settings.STATUS_OK }
  );
  return new ServiceError("validation", message, { body: { [settings.ITEMS]: items } });
}

/**
 * Issues for a store-level unique violation on `fields` (dotted paths) of `options.doc`,
 * worded as the validator words them (with the value `options.doc` holds, if any), nested
 * fields nested.
 */
export function duplicateIssues(rt: Runtime, fields: string[], options: { doc?: Doc }): Issues {
  const { doc } = options;
  const issues: Issues = {};
  for (const field of fields.length ? fields : ["_id"]) {
    const path = field.split(".");
    const value = getPath(doc, path);
    const shown = value === undefined ? "" : ` '${showValue(value, rt.settings.DATE_FORMAT)}'`;
    addIssue(issues, { path, message: `value${shown} is not unique` });
  }
  return issues;
}

function getPath(doc: unknown, path: string[]): unknown {
  let cur = doc;
  for (const segment of path) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = getOwn(cur, segment);
  }
  return cur;
}

/** Sets `options.message` at `options.path` in `issues` (nested fields nested). */
function addIssue(issues: Issues, options: { path: string[]; message: string }) {
  const { path, message } = options;
  let cur = issues;
  for (const segment of path.slice(0, -1)) {
    let next = getOwn(cur, segment);
    if (typeof next === "string") return;
    if (next === undefined) setOwn(cur, segment, next = {});
    cur = next as Issues;
  }
  setOwn(cur, path[path.length - 1], message);
}
