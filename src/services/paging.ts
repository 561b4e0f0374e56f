/** The page a request asks for, from the configured query parameters. */
import { type Paging, parsePaging } from "../query/paging.ts";
import type { RequestContext, Runtime } from "./runtime.ts";

export function requestPaging(rt: Runtime, ctx: RequestContext): Paging {
  const settings = rt.settings;
  return parsePaging(
    {
      page: ctx.query.get(settings.QUERY_PAGE) ?? undefined,
      max_results: ctx.query.get(settings.QUERY_MAX_RESULTS) ?? undefined,
    },
    { default: ctx.resource.paginationDefault, limit: ctx.resource.paginationLimit },
  );
}
