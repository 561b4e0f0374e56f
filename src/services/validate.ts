/**
 * Glue between resource services and the validation engine: the store-backed checks
 * (uniqueness, data relations) and the validation-error response.
 */
import { ServiceError } from "./errors.ts";
import type { Issues } from "../validation/types.ts";
import type { DataRelation } from "../domain/types.ts";
import type { Doc } from "../store/store.ts";
import { andFilters } from "./filters.ts";
import { softDeleteOf } from "./soft-delete.ts";
import { versionExists, versionRef } from "./versions.ts";
import type { RequestContext, Runtime } from "./runtime.ts";
import { showValue, type ValidationContext } from "../validation/mod.ts";
import { getOwn, setOwn } from "../domain/keys.ts";

/** A validation context for one document of `ctx`'s resource. */
export function validationContext(
  rt: Runtime,
  ctx: RequestContext,
  mode: ValidationContext["mode"],
  original?: Doc,
): ValidationContext {
  const { resource } = ctx;
  return {
    mode,
    original,
    mergeNested: resource.mergeNestedDocuments,
    normalizeDotted: resource.normalizeDotted,
    async isDuplicate(field, value, excludeId) {
      const filter = andFilters(
        resource.filter,
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
      const query = andFilters(target.filter, { [field]: value }, live);
      return (await rt.store.collection(target.source).count(query, { limit: 1 })) > 0;
    },
  };
}

/** VALIDATION_ERROR_AS_LIST: every message becomes a list of messages, nested fields nested. */
function asLists(issues: Issues): Doc {
  const out: Doc = {};
  for (const [field, value] of Object.entries(issues)) {
    out[field] = typeof value === "string" ? [value] : asLists(value);
  }
  return out;
}

/** The validation error: `_issues` of one document, or `_items` of a bulk request. */
export function validationError(
  rt: Runtime,
  results: Array<Issues | null>,
  bulk: boolean,
): ServiceError {
  const s = rt.settings;
  const failed = results.filter(Boolean).length;
  const message = `Insertion failure: ${failed} document(s) contain(s) error(s)`;
  const shown = (issues: Issues) => s.VALIDATION_ERROR_AS_LIST ? asLists(issues) : issues;
  if (!bulk) {
    // `_issues` is null when a document is refused without field issues.
    if (!results[0]) return new ServiceError("validation", message, { body: { [s.ISSUES]: null } });
    return new ServiceError("validation", message, { issues: shown(results[0]) });
  }
  const items = results.map((issues) =>
    issues ? { [s.STATUS]: s.STATUS_ERR, [s.ISSUES]: shown(issues) } : { [s.STATUS]: s.STATUS_OK }
  );
  return new ServiceError("validation", message, { body: { [s.ITEMS]: items } });
}

/**
 * Issues for a store-level unique violation on `fields` (dotted paths) of `doc`, worded as
 * the validator words them, nested fields nested.
 */
export function duplicateIssues(rt: Runtime, fields: string[], doc?: Doc): Issues {
  const issues: Issues = {};
  for (const field of fields.length ? fields : ["_id"]) {
    const path = field.split(".");
    const value = getPath(doc, path);
    const shown = value === undefined ? "" : ` '${showValue(value, rt.settings.DATE_FORMAT)}'`;
    addIssue(issues, path, `value${shown} is not unique`);
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

/** Sets `message` at `path` in `issues` (nested fields nested). */
function addIssue(issues: Issues, path: string[], message: string) {
  let cur = issues;
  for (const segment of path.slice(0, -1)) {
    let next = getOwn(cur, segment);
    if (typeof next === "string") return;
    if (next === undefined) setOwn(cur, segment, next = {});
    cur = next as Issues;
  }
  setOwn(cur, path[path.length - 1], message);
}
