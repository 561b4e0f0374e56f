/**
 * Aggregation endpoints: a resource with `datasource.aggregation.pipeline`. `$<name>`
 * strings in stages are replaced by values from the `aggregate` query parameter; a value
 * of `{}` drops that key, objects it leaves empty are dropped as well, and a stage left empty
 * is skipped (Eve's pruning; an empty object written in the pipeline stays).
 */
import { ServiceError } from "./errors.ts";
import { isPlainObject } from "../util/plain.ts";
import { requestPaging } from "./paging.ts";
import type { Doc } from "../store/store.ts";
import type { Reply, RequestContext, Runtime } from "./runtime.ts";
import { andFilters, endpointFilter } from "./filters.ts";
import { parseJsonParam } from "../query/json.ts";
import type { Resource } from "../domain/types.ts";
import { collectionLinks, pageMeta } from "./links.ts";
import { showable } from "./visible.ts";
import { parseObjectId } from "../doc/bson.ts";

const DROP = Symbol("drop");

/** Bounds on the `aggregate` parameter. */
const MAX_VALUE_DEPTH = 8;

/**
 * The placeholders of a pipeline: `$name` strings standing as whole values (never keys),
 * excluding `$$variables`. Computed once per resource.
 */
const placeholderCache = new WeakMap<Resource, ReadonlySet<string>>();
function placeholdersOf(resource: Resource): ReadonlySet<string> {
  let found = placeholderCache.get(resource);
  if (!found) {
    const names = new Set<string>();
    const visit = (node: unknown) => {
      if (typeof node === "string") {
        if (node.startsWith("$") && !node.startsWith("$$")) names.add(node);
      } else if (Array.isArray(node)) node.forEach(visit);
      else if (isPlainObject(node)) Object.values(node).forEach(visit);
    };
    visit(resource.aggregation!.pipeline);
    found = names;
    placeholderCache.set(resource, found);
  }
  return found;
}

function substitute(node: unknown, values: Map<string, unknown>): unknown {
  if (typeof node === "string" && values.has(node)) {
    const value = values.get(node);
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

const SHAPE = 'aggregate: must be a JSON object of {"$name": value}';

/**
 * The client's values for the pipeline's placeholders. Values are plain data: no `$` keys
 * and no `$` strings (which would be operators or field paths to the engine), bounded in
 * depth. Names that are not placeholders of the pipeline are ignored, as in Eve. On a
 * resource with hidden fields, no key of a value may name one (at its own depth or as a
 * top-level name), since a value used as a query or a sort would read it.
 */
function parseValues(
  resource: Resource,
  raw: string | null,
  options: CastOptions,
): Map<string, unknown> {
  const values = new Map<string, unknown>();
  if (raw === null || raw === "") return values;
  const parsed = parseJsonParam("aggregate", raw, { maxDepth: MAX_VALUE_DEPTH + 1 });
  if (!isPlainObject(parsed)) throw new ServiceError("bad-request", SHAPE);
  const placeholders = placeholdersOf(resource);
  for (const [name, value] of Object.entries(parsed)) {
    // As in Eve, names that are not `$name` placeholders are ignored.
    if (!name.startsWith("$")) continue;
    checkPlainData(name, value);
    if (resource.hidden?.length) checkKeys(resource.hidden, { name, value, path: "" });
    if (placeholders.has(name)) values.set(name, cast(value, options));
  }
  return values;
}

/**
 * A client's value as Eve passes it to the engine: a string in DATE_FORMAT becomes a date,
 * a 24-hex string an ObjectId (unless `query_objectid_as_string`), in lists and objects too.
 */
function cast(value: unknown, options: CastOptions): unknown {
  if (typeof value === "string") {
    const date = options.parseDate(value);
    if (date) return date;
    if (!options.objectIdAsString && HEX24.test(value)) return parseObjectId(value) ?? value;
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => cast(v, options));
  if (isPlainObject(value)) {
    const out: Doc = {};
    for (const [key, inner] of Object.entries(value)) out[key] = cast(inner, options);
    return out;
  }
  return value;
}

interface CastOptions {
  parseDate(text: string): Date | null;
  objectIdAsString: boolean;
}

const HEX24 = /^[0-9a-fA-F]{24}$/;

/**
 * Eve's pruning of `node` (a stage after substitution; `written` is the stage as the settings
 * write it): keys whose value became an empty object, because a placeholder in it was given
 * `{}`, are removed, at any depth of objects; a stage left empty is then skipped. An empty
 * object written in the pipeline itself stays, unlike in Eve, which removed those too and so
 * made operators that take `{}` unusable (`$rank: {}`, `$documentNumber: {}`, `$count: {}`).
 */
function prune(node: Doc, written: unknown): Doc {
  const out: Doc = {};
  const before = isPlainObject(written) ? written : {};
  for (const [key, value] of Object.entries(node)) {
    if (isPlainObject(value)) {
      const own = Object.hasOwn(before, key) ? before[key] : undefined;
      const inner = prune(value, own);
      const wasEmpty = isPlainObject(own) && Object.keys(own).length === 0;
      if (Object.keys(inner).length > 0 || wasEmpty) out[key] = inner;
    } else out[key] = value;
  }
  return out;
}

function checkPlainData(name: string, value: unknown): void {
  if (typeof value === "string" && value.startsWith("$")) {
    throw new ServiceError("bad-request", `aggregate: the value of ${name} may not start with "$"`);
  }
  if (Array.isArray(value)) value.forEach((v) => checkPlainData(name, v));
  else if (isPlainObject(value)) {
    for (const [key, inner] of Object.entries(value)) {
      if (key.startsWith("$")) {
        throw new ServiceError(
          "bad-request",
          `aggregate: the value of ${name} may not hold operators ("${key}")`,
        );
      }
      checkPlainData(name, inner);
    }
  }
}

/**
 * Refuses (400, naming the parameter, never the field) a key of `options.value` that names a
 * `hidden` field: as a path from the value's root (`options.path`) or as a name by itself.
 */
function checkKeys(
  hidden: readonly string[],
  options: { name: string; value: unknown; path: string },
): void {
  const { name, value, path } = options;
  const touches = (p: string) =>
    hidden.some((h) => p === h || p.startsWith(h + ".") || h.startsWith(p + "."));
  if (Array.isArray(value)) {
    for (const item of value) checkKeys(hidden, { name, value: item, path: "" });
  } else if (isPlainObject(value)) {
    for (const [key, inner] of Object.entries(value)) {
      const full = path ? `${path}.${key}` : key;
      if (touches(full) || touches(key)) {
        throw new ServiceError(
          "bad-request",
          `aggregate: the value of ${name} names a field that is not readable on this resource`,
        );
      }
      checkKeys(hidden, { name, value: inner, path: full });
    }
  }
}

/**
 * Puts the endpoint's filter first. A `$geoNear` stage must stay first, so it takes it; so
 * does a leading `$match` (one with `$text` must stay first too).
 */
function withBase(stages: Doc[], base: Doc): Doc[] {
  if (Object.keys(base).length === 0) return stages;
  const [first, ...rest] = stages;
  if (first && isPlainObject(first.$geoNear)) {
    const geoNear = first.$geoNear as Doc;
    const query = isPlainObject(geoNear.query) ? andFilters(geoNear.query, base) : base;
    return [{ $geoNear: { ...geoNear, query } }, ...rest];
  }
  if (first && Object.keys(first).length === 1 && isPlainObject(first.$match)) {
    return [{ $match: andFilters(first.$match, base) }, ...rest];
  }
  return [{ $match: base }, ...stages];
}

/** Runs the endpoint's pipeline with the client's values, paginated after the pipeline. */
export async function runAggregation(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  const settings = rt.settings;
  const { resource, query } = ctx;
  if (query.get(settings.QUERY_SORT)) {
    // As in Eve: client sorting is unsupported here and the parameter is ignored.
    rt.log.log("debug", "sort ignored on an aggregation endpoint", { resource: resource.name });
  }
  const values = parseValues(resource, query.get(settings.QUERY_AGGREGATION), {
    parseDate: rt.parseDate,
    objectIdAsString: resource.queryObjectIdAsString,
  });
  const written = resource.aggregation!.pipeline;
  const stages = (substitute(written, values) as Doc[])
    .map((stage, i) => prune(stage, written[i]))
    .filter((stage) => Object.keys(stage).length > 0);
  // The read policy: predefined filter, URL variables and soft delete first; the
  // endpoint's own default projection (if any) last.
  const pipeline = withBase(stages, endpointFilter(rt, ctx));
  if (resource.projection) pipeline.push({ $project: resource.projection });
  if (resource.hidden?.length) {
    pipeline.push({ $project: Object.fromEntries(resource.hidden.map((f) => [f, 0])) });
  }
  await rt.events.emitFor("before_aggregation", resource.name, pipeline);
  const body: Doc = {};
  if (resource.pagination) {
    const paging = requestPaging(rt, ctx);
    const skip = (paging.page - 1) * paging.maxResults;
    // The page and the total from one run of the pipeline: its results go through a final
    // `$facet` taking the page of them and counting them.
    const [faceted] = await rt.store.collection(resource.source).aggregate([...pipeline, {
      $facet: {
        page: [{ $skip: skip }, { $limit: paging.maxResults }],
        total: [{ $count: "n" }],
      },
    }], resource.aggregation!.options);
    const documents = showable(rt, resource, (faceted?.page ?? []) as Doc[]);
    const total = ((faceted?.total as Doc[] | undefined)?.[0]?.n ?? 0) as number;
    await rt.events.emitFor("after_aggregation", resource.name, documents);
    body[settings.ITEMS] = documents;
    body[settings.META] = pageMeta(
      { page: settings.QUERY_PAGE, maxResults: settings.QUERY_MAX_RESULTS },
      { ...paging, total },
    );
    if (resource.hateoas) {
      body[settings.LINKS] = collectionLinks(resource, ctx.resourcePath, {
        query,
        found: total > 0,
        paging: { ...paging, total, pageParam: settings.QUERY_PAGE },
      });
    }
  } else {
    const documents = showable(
      rt,
      resource,
      await rt.store.collection(resource.source).aggregate(pipeline, resource.aggregation!.options),
    );
    await rt.events.emitFor("after_aggregation", resource.name, documents);
    body[settings.ITEMS] = documents;
    if (resource.hateoas) {
      body[settings.LINKS] = collectionLinks(resource, ctx.resourcePath, {
        query,
        found: documents.length > 0,
      });
    }
  }
  return { status: 200, body };
}
