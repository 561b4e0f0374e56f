/**
 * Builds the filter every database query of an endpoint starts from: the predefined
 * filter, the sub-resource URL variables, hook lookups, the requester's documents only
 * (AUTH_FIELD) and the soft-delete condition.
 */
import type { Filter } from "../store/store.ts";
import type { RequestContext, Runtime } from "./runtime.ts";
import { softDeleteOf } from "./soft-delete.ts";

/** Combines filters with `$and`, skipping empty ones. */
export function andFilters(...filters: Array<Filter | undefined>): Filter {
  const parts = filters.filter((f): f is Filter => !!f && Object.keys(f).length > 0);
  if (parts.length === 0) return {};
  if (parts.length === 1) return parts[0];
  return { $and: parts };
}

/**
 * The endpoint's base filter. `includeDeleted` keeps soft-deleted documents (needed to
 * answer 404 with the document, to restore one, and for `show_deleted`).
 */
export function endpointFilter(
  rt: Runtime,
  ctx: RequestContext,
  options: { includeDeleted?: boolean } = {},
): Filter {
  const { resource } = ctx;
  if (!ctx.internal) rt.auth?.assertOwnRequest(ctx, [ctx.lookup, ctx.urlValues]);
  return andFilters(
    resource.filter,
    ctx.urlValues,
    ctx.lookup,
    // AUTH_FIELD: only the requester's documents (in-process calls see every document).
    ctx.internal ? undefined : rt.auth?.ownerFilter(resource, ctx.account),
    options.includeDeleted ? undefined : softDeleteOf(rt, resource).liveOnly,
  );
}
