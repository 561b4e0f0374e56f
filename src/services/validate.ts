/**
 * Glue between resource services and the validation engine: the store-backed checks
 * (uniqueness, data relations) and the validation-error response.
 */
import { HttpError, type Issues } from "../http/errors.ts";
import type { DataRelation } from "../domain/types.ts";
import type { Doc } from "../store/store.ts";
import { andFilters, notDeleted } from "./filters.ts";
import type { RequestContext, Runtime } from "./runtime.ts";
import type { ValidationContext } from "../validation/mod.ts";

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
    async isDuplicate(field, value, excludeId) {
      const filter = andFilters(
        resource.filter,
        { [field]: value },
        excludeId === undefined ? undefined : { [resource.idField]: { $ne: excludeId } },
        resource.softDelete ? notDeleted(rt) : undefined,
      );
      return (await rt.store.collection(resource.source).count(filter, { limit: 1 })) > 0;
    },
    async relationExists(relation: DataRelation, value) {
      const target = rt.domain.get(relation.resource);
      if (!target) return false;
      const field = relation.field ?? target.idField;
      let filter: Doc = { [field]: value };
      let source = target.source;
      if (relation.version && value && typeof value === "object") {
        const ref = value as Doc;
        const s = rt.settings;
        source = `${target.source}${s.VERSIONS}`;
        filter = { [`${field}${s.VERSION_ID_SUFFIX}`]: ref[field], [s.VERSION]: ref[s.VERSION] };
      }
      const live = target.softDelete ? notDeleted(rt) : undefined;
      const query = andFilters(target.filter, filter, live);
      return (await rt.store.collection(source).count(query, { limit: 1 })) > 0;
    },
  };
}

/** The validation-error exception: `_status` ERR, `_error`, and `_issues` or `_items`. */
export function validationError(
  rt: Runtime,
  results: Array<Issues | null>,
  bulk: boolean,
): HttpError {
  const s = rt.settings;
  const failed = results.filter(Boolean).length;
  const message = `Insertion failure: ${failed} document(s) contain(s) error(s)`;
  const body: Record<string, unknown> = bulk
    ? {
      [s.ITEMS]: results.map((issues) =>
        issues ? { [s.STATUS]: s.STATUS_ERR, [s.ISSUES]: issues } : { [s.STATUS]: s.STATUS_OK }
      ),
    }
    : { [s.ISSUES]: results[0] };
  return new HttpError(s.VALIDATION_ERROR_STATUS, message, { body });
}

/** Issues for a store-level unique violation on `fields` of `doc`. */
export function duplicateIssues(fields: string[], doc?: Doc): Issues {
  const issues: Issues = {};
  for (const field of fields.length ? fields : ["_id"]) {
    const value = doc?.[field];
    issues[field] = value === undefined ? "value is not unique" : `value '${value}' is not unique`;
  }
  return issues;
}
