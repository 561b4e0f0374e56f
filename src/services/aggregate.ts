/**
 * Aggregation endpoints: a resource with `datasource.aggregation.pipeline`. `$<name>`
 * strings in stages are replaced by values from the `aggregate` query parameter; a value
 * of `{}` drops that key, and a stage left empty is skipped.
 */
import { HttpError } from "../http/errors.ts";
import { isPlainObject } from "../settings/check.ts";
import { requestPaging } from "./paging.ts";
import type { Doc } from "../store/store.ts";
import type { Reply, RequestContext, Runtime } from "./runtime.ts";
import { andFilters } from "./filters.ts";
import { collectionLinks } from "./links.ts";

const DROP = Symbol("drop");

function substitute(node: unknown, values: Doc): unknown {
  if (typeof node === "string" && node.startsWith("$") && Object.hasOwn(values, node)) {
    const value = values[node];
    return isPlainObject(value) && Object.keys(value).length === 0 ? DROP : value;
  }
  if (Array.isArray(node)) return node.map((v) => substitute(v, values)).filter((v) => v !== DROP);
  if (isPlainObject(node)) {
    const out: Doc = {};
    for (const [key, value] of Object.entries(node)) {
      const replaced = substitute(value, values);
      if (replaced !== DROP) out[key] = replaced;
    }
    return out;
  }
  return node;
}

function parseValues(raw: string | null): Doc {
  if (raw === null || raw === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'aggregate: must be a JSON object of {"$name": value}');
  }
  if (!isPlainObject(parsed) || !Object.keys(parsed).every((k) => k.startsWith("$"))) {
    throw new HttpError(400, 'aggregate: must be a JSON object of {"$name": value}');
  }
  return parsed;
}

/** Runs the endpoint's pipeline with the client's values, paginated after the pipeline. */
export async function runAggregation(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  const s = rt.settings;
  const { resource, query } = ctx;
  if (query.get(s.QUERY_SORT)) {
    // As in Eve: client sorting is unsupported here and the parameter is ignored.
    rt.log.log("debug", "sort ignored on an aggregation endpoint", { resource: resource.name });
  }
  const values = parseValues(query.get(s.QUERY_AGGREGATION));
  const stages = (substitute(resource.aggregation!.pipeline, values) as Doc[])
    .filter((stage) => Object.keys(stage).length > 0 && !Object.values(stage).every(isEmpty));
  const base = andFilters(resource.filter, ctx.urlValues);
  const pipeline: Doc[] = Object.keys(base).length ? [{ $match: base }, ...stages] : [...stages];
  await rt.events.emitFor("before_aggregation", resource.name, pipeline);
  const body: Doc = {};
  if (resource.pagination) {
    const paging = requestPaging(rt, ctx);
    const skip = (paging.page - 1) * paging.maxResults;
    const collection = rt.store.collection(resource.source);
    const [documents, counted] = await Promise.all([
      collection.aggregate([...pipeline, { $skip: skip }, { $limit: paging.maxResults }]),
      collection.aggregate([...pipeline, { $count: "n" }]),
    ]);
    const total = (counted[0]?.n ?? 0) as number;
    await rt.events.emitFor("after_aggregation", resource.name, documents);
    body[s.ITEMS] = documents;
    body[s.META] = { page: paging.page, max_results: paging.maxResults, total };
    if (resource.hateoas) {
      body[s.LINKS] = collectionLinks(resource, ctx.resourcePath, query, {
        ...paging,
        total,
        pageParam: s.QUERY_PAGE,
      });
    }
  } else {
    const documents = await rt.store.collection(resource.source).aggregate(pipeline);
    await rt.events.emitFor("after_aggregation", resource.name, documents);
    body[s.ITEMS] = documents;
    if (resource.hateoas) body[s.LINKS] = collectionLinks(resource, ctx.resourcePath, query);
  }
  return { status: 200, body };
}

function isEmpty(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).length === 0;
}
