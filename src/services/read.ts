/**
 * Reading: the collection GET (filter, sort, paging, projection, embedding) and the item
 * GET (with conditional requests), plus the fetch events.
 */
import { flatConcat } from "../util/strings.ts";
import { JSON_READY, plainFields } from "../render/convert.ts";
import { HOLDS_RENDERED, jsonText, RenderedJson } from "../render/json.ts";
import { negotiate } from "../render/negotiate.ts";
import { type ItemTextCache, itemTextCache } from "./item_text.ts";
import { ruleMethod } from "../domain/methods.ts";
import { notFound, ServiceError } from "./errors.ts";
import { parseWhere } from "../query/where.ts";
import { cloneValue } from "../doc/clone.ts";
import { parseSort } from "../query/sort.ts";
import { parseProjection } from "../query/projection.ts";
import { requestPaging } from "./paging.ts";
import type { Doc, Filter, FindOptions, Projection } from "../store/store.ts";
import type { Resource } from "../domain/types.ts";
import { etagOf, idToString } from "./meta.ts";
import { andFilters, endpointFilter } from "./filters.ts";
import {
  collectionLink,
  collectionLinks,
  hasRelations,
  HOME_LINK,
  itemLink,
  itemLinks,
  type Link,
  linkQuery,
  pageMeta,
  relatedLinks,
} from "./links.ts";
import type { Reply, RequestContext, Runtime } from "./runtime.ts";
import { embeddingMarks, embedDocuments, requestedFields } from "./embed.ts";
import { conditionalHeaders, notModified } from "./conditional.ts";
import { runAggregation } from "./aggregate.ts";
import { expandMedia } from "./media.ts";
import { assertReadable, keyFieldsOf, readProjection, referenceGuard } from "./policy.ts";
import {
  diffVersions,
  findVersion,
  legacyVersion,
  parseVersionParam,
  versionPage,
  versionStamp,
  withCurrentFields,
} from "./versions.ts";
import { softDeleteOf } from "./soft-delete.ts";
import { showable } from "./visible.ts";

/** True when a flag query parameter is present and not "false"/"0". */
export function flag(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  return value !== null && value !== "false" && value !== "0";
}

/** The projection a request asks for, merged with the resource's default projection. */
export function requestProjection(rt: Runtime, ctx: RequestContext): Projection | undefined {
  const raw = ctx.query.get(rt.settings.QUERY_PROJECTION);
  const client = raw !== null && ctx.resource.projectionEnabled
    ? parseProjection(raw, { keyFields: keyFieldsOf(rt, ctx.resource) })
    : undefined;
  return readProjection(rt, ctx.resource, { client });
}

/** The `related` links of one document each (see {@link relatedLinks}). */
type RelatedLinks = Array<Record<string, Link | Link[]> | undefined>;

/**
 * Links to the documents each of `options.docs` references (by position), taken before
 * embedding replaces them; undefined when the resource has no links.
 */
function relatedOf(
  rt: Runtime,
  ctx: RequestContext,
  options: { docs: Doc[] },
): RelatedLinks | undefined {
  if (!ctx.resource.hateoas || !hasRelations(ctx.resource)) return undefined;
  const links = { domain: rt.domain, versionField: rt.settings.VERSION };
  return options.docs.map((doc) => relatedLinks(ctx.resource, doc, links));
}

/** Options of {@link decorateItems}. */
export interface DecorateOptions {
  /** The returned items, changed in place. */
  docs: Doc[];
  /** Each item's `related` links, by position (see {@link relatedOf}); none when absent. */
  related?: RelatedLinks;
  /**
   * Nothing sees the items between this and rendering (see {@link unobserved}): their links
   * are marked JSON-ready and their ids and creation and update dates turned into what
   * rendering makes of them, so rendering copies neither.
   */
  unobserved?: boolean;
  /**
   * The items are stored versions of this document: each `self` link names the document
   * and its version (`?version=<n>`).
   */
  version?: Doc;
}

/**
 * Adds what every returned item carries: links (with `related` when given), and
 * `_deleted: false` on older documents.
 */
export function decorateItems(rt: Runtime, ctx: RequestContext, options: DecorateOptions): void {
  const { docs, related } = options;
  const settings = rt.settings;
  const { resource } = ctx;
  const softDelete = softDeleteOf(rt, resource);
  const metaFields = options.unobserved ? idAndDatesOf(rt, resource) : [];
  // Nothing reads the items' links before rendering: they share one `collection` link.
  const collection = options.unobserved && resource.hateoas
    ? collectionLink(resource, ctx.resourcePath)
    : undefined;
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i];
    softDelete.setFlag(doc);
    // Before the links: the `self` link then reads the id's hex made here.
    if (options.unobserved) plainFields(doc, metaFields, rt.formatDate);
    // Unset rather than deleted: `delete` would turn every returned document into a slow
    // dictionary object; rendering drops undefined members.
    if (!resource.ifMatch && doc[settings.ETAG] !== undefined) doc[settings.ETAG] = undefined;
    if (resource.hateoas && options.version) {
      const self = itemLink(ctx, options.version);
      self.href = flatConcat([
        self.href,
        "?",
        settings.VERSION_PARAM,
        "=",
        String(doc[settings.VERSION]),
      ]);
      doc[settings.LINKS] = { self };
    } else if (resource.hateoas) {
      const links: Doc = collection
        ? { self: itemLink(ctx, doc), parent: HOME_LINK, collection }
        : itemLinks(ctx, doc);
      const itemRelated = related?.[i];
      if (itemRelated) links.related = itemRelated;
      if (options.unobserved) (links as { [JSON_READY]?: boolean })[JSON_READY] = true;
      doc[settings.LINKS] = links;
    }
  }
}

/**
 * The fields every stored document of `resource` carries as an ObjectId or a date: its id and
 * the creation and update dates (worked out once per resource).
 */
function idAndDatesOf(rt: Runtime, resource: Resource): readonly string[] {
  let fields = ID_AND_DATES.get(resource);
  if (!fields) {
    const settings = rt.settings;
    fields = [...new Set([resource.idField, settings.DATE_CREATED, settings.DATE_UPDATED])];
    ID_AND_DATES.set(resource, fields);
  }
  return fields;
}

const ID_AND_DATES = new WeakMap<Resource, readonly string[]>();

/** The `_meta` keys of a page: the names of the page and max-results parameters. */
export function metaNames(rt: Runtime): { page: string; maxResults: string } {
  return { page: rt.settings.QUERY_PAGE, maxResults: rt.settings.QUERY_MAX_RESULTS };
}

/** The request's `where`, parsed and checked for the resource; undefined when absent. */
export function whereFilter(rt: Runtime, ctx: RequestContext): Filter | undefined {
  const raw = ctx.query.get(rt.settings.QUERY_WHERE);
  if (raw === null || raw === "") return undefined;
  const { resource } = ctx;
  const settings = rt.settings;
  if (resource.allowedFilters.length === 0) {
    // As in Eve, an empty ALLOWED_FILTERS turns filtering off: `where` is ignored.
    rt.log.log("debug", "where ignored: filtering is off", { resource: resource.name });
    return undefined;
  }
  const known = WHERE_FILTERS.get(resource)?.get(raw);
  // A copy: nothing a request does to its filter reaches another request's.
  if (known !== undefined) return cloneValue(known);
  const filter = parseWhere(raw, {
    model: resource.schemaModel,
    dateFormat: settings.DATE_FORMAT,
    parseDate: rt.parseDate,
    allowedFilters: resource.allowedFilters,
    validateFiltering: resource.validateFiltering,
    blacklist: resource.queryBlacklist,
    whitelist: resource.queryWhitelist,
    expressionLimits: {
      maxRange: settings.QUERY_MAX_RANGE,
      maxElements: settings.QUERY_EXPR_MAX_ELEMENTS,
    },
    objectIdAsString: resource.queryObjectIdAsString,
    references: referenceGuard(rt, resource, { param: "where" }),
  });
  if (raw.length <= MAX_WHERE_TEXT) {
    let filters = WHERE_FILTERS.get(resource);
    if (filters === undefined) WHERE_FILTERS.set(resource, filters = new Map());
    if (filters.size >= MAX_WHERE_FILTERS) filters.clear();
    filters.set(raw, cloneValue(filter));
  }
  return filter;
}

/**
 * The `where` texts of each resource parsed and checked lately, and their filters (which
 * follow from the text, the resource and the settings alone): a client repeating its query
 * has it parsed once. Refused texts are not kept. At most {@link MAX_WHERE_FILTERS} a
 * resource (then it starts over), of at most {@link MAX_WHERE_TEXT} characters.
 */
const WHERE_FILTERS = new WeakMap<Resource, Map<string, Filter>>();
const MAX_WHERE_FILTERS = 128;
const MAX_WHERE_TEXT = 1024;

/**
 * Documents written outside the API may lack `_etag`, `_created` and `_updated`. As in Eve,
 * the ETag is computed from the whole stored document (fetched again, in one query, when
 * the read was projected), but as a keyed hash (see etag.ts), and the dates read as the
 * epoch, so such documents can be cached and edited like any other.
 * @param options.docs the documents read, completed in place.
 * @param options.projection the projection they were read with; undefined: whole documents.
 * @returns a promise when an ETag is to be computed; undefined when all was done at once
 * (documents written through the API: nothing to wait for).
 */
function completeMeta(
  rt: Runtime,
  resource: Resource,
  options: { docs: Doc[]; projection: Projection | undefined },
): Promise<void> | undefined {
  const { docs } = options;
  const etag = rt.settings.ETAG;
  if (resource.ifMatch) {
    for (let i = 0; i < docs.length; i++) {
      if (typeof docs[i][etag] !== "string") return completeEtags(rt, resource, options);
    }
  }
  completeDates(rt, docs);
  return undefined;
}

/** {@link completeMeta} when ETags are missing: they are computed before the dates are set. */
async function completeEtags(
  rt: Runtime,
  resource: Resource,
  options: { docs: Doc[]; projection: Projection | undefined },
): Promise<void> {
  const { docs, projection } = options;
  const settings = rt.settings;
  const missing = docs.filter((doc) => typeof doc[settings.ETAG] !== "string");
  let whole = new Map(missing.map((doc) => [idToString(doc[resource.idField]), doc]));
  if (projection) {
    const ids = missing.map((doc) => doc[resource.idField]);
    const found = await rt.store.collection(resource.source).find({
      [resource.idField]: { $in: ids },
    });
    whole = new Map(found.map((doc) => [idToString(doc[resource.idField]), doc]));
  }
  for (const doc of missing) {
    const stored = whole.get(idToString(doc[resource.idField]));
    if (stored) doc[settings.ETAG] = await etagOf(rt, stored);
  }
  completeDates(rt, docs);
}

/** The creation and update dates of `docs` that lack them, set to the epoch. */
function completeDates(rt: Runtime, docs: Doc[]): void {
  const { DATE_CREATED: created, DATE_UPDATED: updated } = rt.settings;
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i];
    doc[created] ??= new Date(0);
    doc[updated] ??= new Date(0);
  }
}

/** GET (and HEAD) on a resource endpoint. */
export async function getCollection(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  const { resource, query } = ctx;
  const settings = rt.settings;
  if (resource.aggregation) return runAggregation(rt, ctx);
  const where = whereFilter(rt, ctx);
  if (!ctx.internal) rt.auth?.assertOwnRequest(ctx, [where]);
  const showDeleted = softDeleteOf(rt, resource).showsDeleted({
    showDeleted: flag(query, settings.SHOW_DELETED_PARAM),
    where,
  });
  const filter = andFilters(endpointFilter(rt, ctx, { includeDeleted: showDeleted }), where);
  let rawSort = query.get(settings.QUERY_SORT);
  if (rawSort !== null && rawSort !== "" && !resource.sorting) {
    // As in Eve, a client sort on a resource with sorting off is ignored.
    rt.log.log("debug", "sort ignored: sorting is off", { resource: resource.name });
    rawSort = null;
  }
  const sort = rawSort ? parseSort(rawSort) : resource.defaultSort;
  assertReadable(rt, resource, { where, sort: rawSort ? sort : undefined });
  const projection = requestProjection(rt, ctx);
  const embedded = requestedFields(rt, ctx);
  const shared = mayShare(rt, ctx, { embedded, hook: "on_fetched_resource" });
  const reuse = textReuse(rt, ctx, { projection, embedded, kind: "page" });
  const stored = reuse?.stored;
  const known = reuse?.known;
  const body: Doc = {};
  let found: Doc[];
  let docs: Doc[];
  if (resource.pagination) {
    const paging = requestPaging(rt, ctx);
    const skip = (paging.page - 1) * paging.maxResults;
    // With OPTIMIZE_PAGINATION_FOR_SPEED the total is skipped: one extra document tells
    // whether a next page exists.
    const limit = resource.optimizePagination ? paging.maxResults + 1 : paging.maxResults;
    let total: number | undefined;
    [found, total] = await Promise.all([
      rt.store.collection(resource.source).find(filter, {
        sort,
        skip,
        limit,
        projection,
        shared,
        stored,
        known,
      }),
      resource.optimizePagination ? undefined : rt.store.collection(resource.source).count(filter),
    ]);
    const more = found.length > paging.maxResults;
    docs = more ? found.slice(0, paging.maxResults) : found;
    body[settings.META] = pageMeta(metaNames(rt), { ...paging, total });
    if (resource.hateoas) {
      body[settings.LINKS] = collectionLinks(resource, ctx.resourcePath, {
        query,
        found: total === undefined ? docs.length > 0 : total > 0,
        paging: { ...paging, total, more, pageParam: settings.QUERY_PAGE },
      });
    }
  } else {
    found = await rt.store.collection(resource.source).find(filter, {
      sort,
      projection,
      shared,
      stored,
      known,
    });
    docs = found;
    if (resource.hateoas) {
      body[settings.LINKS] = collectionLinks(resource, ctx.resourcePath, {
        query,
        found: docs.length > 0,
      });
    }
  }
  // Items the store returned as their cached text are done: the rest (all, without the
  // cache) are made as ever.
  const made = reuse ? docs.filter((doc) => !(doc instanceof RenderedJson)) : docs;
  showable(rt, resource, made);
  const completing = completeMeta(rt, resource, { docs: made, projection });
  if (completing) await completing;
  if (resource.versioning) {
    for (const doc of made) Object.assign(doc, versionStamp(rt, resource, { doc }));
  }
  const related = relatedOf(rt, ctx, { docs: made });
  // Each step below is awaited only when it has something to do.
  if (embedded.length > 0) await embedDocuments(rt, ctx, { docs: made, fields: embedded });
  if (resource.schemaModel.mediaPaths.length > 0) {
    await expandMedia(rt, resource, { docs: made });
  }
  decorateItems(rt, ctx, {
    docs: made,
    related,
    unobserved: unobserved(rt, ctx, { hook: "on_fetched_resource" }),
  });
  const items = reuse ? renderedItems(rt, reuse, docs) : undefined;
  const envelope: Doc = { [settings.ITEMS]: items ?? docs, ...body };
  if (items) (envelope as { [HOLDS_RENDERED]?: boolean })[HOLDS_RENDERED] = true;
  await rt.events.emitFor("on_fetched_resource", resource.name, envelope);
  const headers = cacheHeaders(ctx);
  const total = (body[settings.META] as Doc | undefined)?.total;
  // As in Eve, a collection read (GET or HEAD) tells the total in a header when counted
  // (HEADER_TOTAL_COUNT, `X-Total-Count` by default).
  if (typeof total === "number") headers[settings.HEADER_TOTAL_COUNT.toLowerCase()] = String(total);
  return { status: 200, body: envelope, headers };
}

/** `Cache-Control` and `Expires` from the resource's `cache_control` / `cache_expires`. */
export function cacheHeaders(ctx: RequestContext): Record<string, string> {
  const headers: Record<string, string> = {};
  if (ctx.resource.cacheControl) headers["cache-control"] = ctx.resource.cacheControl;
  if (ctx.resource.cacheExpires) {
    headers["expires"] = expiresText(Date.now() + ctx.resource.cacheExpires * 1000);
  }
  return headers;
}

/** The last `Expires` text made, by the second it names (the header's whole precision). */
let expires = { second: NaN, text: "" };

/** `new Date(time).toUTCString()`, made once per second named. */
function expiresText(time: number): string {
  const second = Math.floor(time / 1000);
  if (second !== expires.second) expires = { second, text: new Date(time).toUTCString() };
  return expires.text;
}

/**
 * Whether a read may ask the store for `shared` documents (see FindOptions.shared): nothing
 * after it changes more than their top level unless they embed through a dotted path
 * (`embedded`: the requested fields; a top-level reference is replaced as a member, and a
 * top-level list of them is copied first, see embed.ts), expand media or meet a listener of
 * `hook`.
 */
function mayShare(
  rt: Runtime,
  ctx: RequestContext,
  { embedded, hook }: { embedded: string[]; hook: "on_fetched_resource" | "on_fetched_item" },
): boolean {
  return topLevelOnly(embedded) && ctx.resource.schemaModel.mediaPaths.length === 0 &&
    !rt.events.has(hook, ctx.resource.name);
}

/** Whether none of `fields` is a dotted path. */
function topLevelOnly(fields: string[]): boolean {
  for (let i = 0; i < fields.length; i++) if (fields[i].includes(".")) return false;
  return true;
}

/**
 * Whether nothing sees a read's items between their decoration and rendering: an HTTP
 * request (an in-process call hands them to its caller) whose fetched event (`hook`) and post
 * event have no listener.
 */
function unobserved(rt: Runtime, ctx: RequestContext, { hook }: { hook: string }): boolean {
  const name = ctx.resource.name;
  return !ctx.internal && !rt.events.has(hook, name) &&
    !rt.events.has(`on_post_${ruleMethod(ctx.method)}`, name);
}

/** What a read needs to answer from, and add to, the cache of its items' texts. */
interface TextReuse {
  cache: ItemTextCache;
  shape: string;
  /** The stored documents behind the items, filled by the store (FindOptions.stored). */
  stored: Doc[];
  /** The cached text of a stored document, as a RenderedJson (FindOptions.known). */
  known: (stored: Doc) => Doc | undefined;
}

/**
 * How a read reuses and caches its items' texts, when their text may be cached (see
 * {@link textShape}) and the store hands out stored documents whose identity stands for
 * their content (Store.storedDocuments); else undefined (MongoDB: nothing more is done).
 */
function textReuse(
  rt: Runtime,
  ctx: RequestContext,
  options: { projection: Projection | undefined; embedded: string[]; kind: "item" | "page" },
): TextReuse | undefined {
  if (rt.store.storedDocuments !== true) return undefined;
  const shape = textShape(rt, ctx, options);
  if (shape === undefined) return undefined;
  const cache = itemTextCache(rt.instance);
  if (cache === undefined) return undefined;
  const known = (doc: Doc) => {
    const text = cache.get(doc, shape);
    return text === undefined ? undefined : new RenderedJson(text) as unknown as Doc;
  };
  return { cache, shape, stored: [], known };
}

/**
 * The items of a read as their texts: those the store returned as their cached text, and the
 * texts of the others (decorated as ever) made and cached now. Undefined when the store did
 * not tell the stored document behind each item (the items are then rendered as ever).
 */
function renderedItems(rt: Runtime, reuse: TextReuse, docs: Doc[]): RenderedJson[] | undefined {
  const { cache, shape, stored } = reuse;
  if (stored.length < docs.length) return undefined;
  const items: RenderedJson[] = new Array(docs.length);
  for (let i = 0; i < docs.length; i++) {
    const doc: unknown = docs[i];
    if (doc instanceof RenderedJson) items[i] = doc;
    else {
      const text = jsonText(doc, rt.formatDate);
      cache.set(stored[i], shape, text);
      items[i] = new RenderedJson(text);
    }
  }
  return items;
}

/**
 * The shape of a read's items for the cache of their texts (item_text.ts): a key naming all
 * their text depends on besides the stored documents and the runtime (its settings and
 * domain) — the resource, the endpoint path its links are made from and the effective
 * projection (the client's, the resource's and the hidden fields'; no account changes it).
 * An item GET and a page make an item alike (same steps, same decoration, a versioned
 * document's version stamped from the document itself; reads of its versions, which differ,
 * are not cached): they share their texts. An item GET embedding documents adds what
 * its embedding depends on (embed.ts, `embeddingMarks`): the fields, and the change marks of
 * the collections embedded from, so a write to one of them changes the shape. Undefined when
 * their text is not to be cached: something may see or change the items before rendering (an
 * in-process call, a fetched or post event listener, embedding on a page or of what
 * `embeddingMarks` refuses, media) or they are not rendered as compact JSON (XML,
 * `pretty`, JSON_SORT_KEYS), or the projection is more than top-level flags.
 */
function textShape(
  rt: Runtime,
  ctx: RequestContext,
  options: { projection: Projection | undefined; embedded: string[]; kind: "item" | "page" },
): string | undefined {
  const { resource } = ctx;
  const settings = rt.settings;
  const hook = options.kind === "item" ? "on_fetched_item" : "on_fetched_resource";
  // An item's embedded documents: only on an item read (a page's MAX_EMBEDDED_DOCUMENTS
  // budget counts the documents of every item it embeds into, cached or not).
  const embeds = options.embedded.length > 0;
  if (
    (embeds && options.kind !== "item") || resource.schemaModel.mediaPaths.length > 0 ||
    settings.JSON_SORT_KEYS ||
    ctx.query.has("pretty") || !unobserved(rt, ctx, { hook })
  ) return undefined;
  // As the response will be rendered (http/respond.ts): compact JSON only.
  const accept = ctx.request.headers.get("accept");
  const format = negotiate(accept, settings.RENDERERS) ?? settings.RENDERERS[0];
  if (format !== "json") return undefined;
  const projection = projectionText(options.projection);
  if (projection === undefined) return undefined;
  const shape = shapeText(resource, ctx.resourcePath, projection);
  if (!embeds) return shape;
  const marks = embeddingMarks(rt, ctx, options.embedded);
  return marks === undefined ? undefined : flatConcat([shape, "\u0000", marks]);
}

/**
 * The shape text of `resource`'s items read at `resourcePath` with `projection` (its text):
 * made once and handed out again (the same string each time, which the cache compares at
 * once), at most {@link MAX_SHAPES} per resource and projection (a sub-resource has a path
 * per parent document).
 */
function shapeText(resource: Resource, resourcePath: string, projection: string): string {
  let byProjection = SHAPES.get(resource);
  if (byProjection === undefined) {
    byProjection = new Map();
    SHAPES.set(resource, byProjection);
  }
  let byPath = byProjection.get(projection);
  if (byPath === undefined) {
    if (byProjection.size >= MAX_SHAPES) byProjection.clear();
    byPath = new Map();
    byProjection.set(projection, byPath);
  }
  let shape = byPath.get(resourcePath);
  if (shape === undefined) {
    shape = flatConcat([resource.name, "\u0000", resourcePath, "\u0000", projection]);
    if (byPath.size >= MAX_SHAPES) byPath.clear();
    byPath.set(resourcePath, shape);
  }
  return shape;
}

const MAX_SHAPES = 256;
const SHAPES = new WeakMap<Resource, Map<string, Map<string, string>>>();

/** A projection of top-level flags as text (frozen ones, the defaults, once); else undefined. */
function projectionText(projection: Projection | undefined): string | undefined {
  if (projection === undefined) return "";
  const known = PROJECTION_TEXTS.get(projection);
  if (known !== undefined) return known;
  for (const key in projection) {
    const flag = projection[key] as unknown;
    if (flag !== 0 && flag !== 1 && flag !== true && flag !== false) return undefined;
  }
  const text = JSON.stringify(projection);
  if (Object.isFrozen(projection)) PROJECTION_TEXTS.set(projection, text);
  return text;
}

const PROJECTION_TEXTS = new WeakMap<Projection, string>();

/**
 * Fetches the item an item endpoint addresses, soft-deleted ones included. Null when none.
 * @param options.projection the projection to read it with; absent: the whole document.
 * @param options.shared the store may share the document's nested values (FindOptions.shared).
 */
export function findItem(
  rt: Runtime,
  ctx: RequestContext,
  options: {
    projection?: Projection;
    shared?: boolean;
    stored?: Doc[];
    known?: (stored: Doc) => Doc | undefined;
  } = {},
): Promise<Doc | null> {
  const { projection, shared, stored, known } = options;
  const find = { projection, shared, stored, known };
  if (softDeleteOf(rt, ctx.resource).enabled) return findLiveFirst(rt, ctx, find);
  const filter = endpointFilter(rt, ctx, { includeDeleted: true });
  return rt.store.collection(ctx.resource.source).findOne(filter, find);
}

/** {@link findItem} on a soft-deleting resource. */
async function findLiveFirst(rt: Runtime, ctx: RequestContext, find: FindOptions) {
  const collection = rt.store.collection(ctx.resource.source);
  // A live document wins over a soft-deleted one sharing the looked-up value.
  const live = await collection.findOne(endpointFilter(rt, ctx), find);
  if (live) return live;
  const filter = endpointFilter(rt, ctx, { includeDeleted: true });
  return collection.findOne(filter, find);
}

/**
 * The cached text of an item GET's stored document, when its answer's fields can be read
 * off the stored document itself (see {@link getItem}); else undefined (the item is made
 * as ever). Those are the fields the copy made for the answer would give: the ETag and the
 * update date are key fields (always projected), the document is live, and it carries both
 * (a document written outside the API gets them computed on its copy).
 */
function cachedItemText(
  rt: Runtime,
  ctx: RequestContext,
  reuse: TextReuse,
): ((stored: Doc) => Doc | undefined) | undefined {
  const { resource } = ctx;
  if (!fieldsFromStored(rt, resource)) return undefined;
  const { ETAG: etag, DATE_UPDATED: updated } = rt.settings;
  const softDelete = softDeleteOf(rt, resource);
  const ifMatch = resource.ifMatch;
  return (stored) =>
    softDelete.isDeleted(stored) || (ifMatch && typeof stored[etag] !== "string") ||
      !(stored[updated] instanceof Date)
      ? undefined
      : reuse.known(stored);
}

/**
 * Whether an item's `ETag`, `Last-Modified` and soft-delete flag are those of its stored
 * document: none of them is hidden (a hidden one is dropped from the copy, which then gets
 * another or none). Worked out once per resource.
 */
function fieldsFromStored(rt: Runtime, resource: Resource): boolean {
  let known = FIELDS_FROM_STORED.get(resource);
  if (known === undefined) {
    const settings = rt.settings;
    const own = [settings.ETAG, settings.DATE_UPDATED, ...softDeleteOf(rt, resource).fields];
    known = !(resource.hidden ?? []).some((path) => own.includes(path.split(".")[0]));
    FIELDS_FROM_STORED.set(resource, known);
  }
  return known;
}

const FIELDS_FROM_STORED = new WeakMap<Resource, boolean>();

/** GET (and HEAD) on an item endpoint. */
export async function getItem(rt: Runtime, ctx: RequestContext): Promise<Reply> {
  const settings = rt.settings;
  const projection = requestProjection(rt, ctx);
  const versionParam = ctx.query.get(settings.VERSION_PARAM);
  const versions = versionParam !== null && versionParam !== "";
  const embedded = requestedFields(rt, ctx);
  const shared = !versions && mayShare(rt, ctx, { embedded, hook: "on_fetched_item" });
  const { resource } = ctx;
  // With the count skipped, the item's links name a page of the request (below): not cached.
  const nextLink = resource.hateoas && resource.pagination && resource.optimizePagination;
  const reuse = versions || nextLink
    ? undefined
    : textReuse(rt, ctx, { projection, embedded, kind: "item" });
  const known = reuse && cachedItemText(rt, ctx, reuse);
  const doc = await findItem(rt, ctx, { projection, shared, stored: reuse?.stored, known });
  if (!doc) throw notFound();
  if (doc instanceof RenderedJson) {
    // The item's cached text: its fields are read off the stored document, not a copy.
    const headers = {
      ...cacheHeaders(ctx),
      ...conditionalHeaders(rt, ctx, { doc: reuse!.stored[0] }),
    };
    if (notModified(ctx.preconditions, headers)) return { status: 304, headers };
    return { status: 200, body: doc, headers };
  }
  const docs = showable(rt, ctx.resource, [doc]);
  const completing = completeMeta(rt, ctx.resource, { docs, projection });
  if (completing) await completing;
  // Stored versions of a soft-deleted document stay readable; only the current item is gone.
  if (versions) {
    return getItemVersions(rt, ctx, { primary: doc, raw: versionParam, projection });
  }
  if (softDeleteOf(rt, ctx.resource).isDeleted(doc)) {
    // As in Eve, the 404 carries the deleted document and its ETag and Last-Modified.
    Object.assign(doc, versionStamp(rt, ctx.resource, { doc }));
    const headers = conditionalHeaders(rt, ctx, { doc });
    // As in Eve, the 404 is cacheable: a client holding its ETag is answered 304.
    if (notModified(ctx.preconditions, headers)) return { status: 304, headers };
    decorateItems(rt, ctx, { docs });
    throw new ServiceError("not-found", "The requested item was deleted.", { body: doc, headers });
  }
  Object.assign(doc, versionStamp(rt, ctx.resource, { doc }));
  const headers = { ...cacheHeaders(ctx), ...conditionalHeaders(rt, ctx, { doc }) };
  if (notModified(ctx.preconditions, headers)) return { status: 304, headers };
  const text = reuse?.stored.length === 1
    ? reuse.cache.get(reuse.stored[0], reuse.shape)
    : undefined;
  if (text !== undefined) return { status: 200, body: new RenderedJson(text), headers };
  const related = relatedOf(rt, ctx, { docs });
  // Each step below is awaited only when it has something to do.
  if (embedded.length > 0) await embedDocuments(rt, ctx, { docs, fields: embedded });
  if (ctx.resource.schemaModel.mediaPaths.length > 0) {
    await expandMedia(rt, ctx.resource, { docs });
  }
  decorateItems(rt, ctx, {
    docs,
    related,
    unobserved: unobserved(rt, ctx, { hook: "on_fetched_item" }),
  });
  const item = reuse && renderedItems(rt, reuse, docs)?.[0];
  if (item) return { status: 200, body: item, headers };
  if (nextLink) {
    // As in Eve: with the count skipped, an item's links name the collection's next page.
    const paging = requestPaging(rt, ctx);
    const params = new URLSearchParams(ctx.query);
    params.set(settings.QUERY_PAGE, String(paging.page + 1));
    (doc[settings.LINKS] as Doc).next = {
      href: flatConcat([ctx.resourcePath, "?", linkQuery(params)]),
      title: "next page",
    };
  }
  await rt.events.emitFor("on_fetched_item", resource.name, doc);
  return { status: 200, body: doc, headers };
}

/**
 * `?version=<n>`, `all` or `diffs` on an item of a versioned resource. Last-Modified is the
 * primary document's; each version keeps the ETag it had when it was current.
 */
async function getItemVersions(
  rt: Runtime,
  ctx: RequestContext,
  options: { primary: Doc; raw: string; projection: Projection | undefined },
): Promise<Reply> {
  const { primary, raw, projection } = options;
  const settings = rt.settings;
  const { resource } = ctx;
  if (!resource.versioning) {
    throw new ServiceError("bad-request", "versioning is not enabled for this resource");
  }
  const wanted = parseVersionParam(raw);
  const id = primary[resource.idField];
  // A document stored before versioning was enabled is its own (only) version 1.
  const legacy = legacyVersion(rt, resource, { original: primary });
  const latest = versionStamp(rt, resource, { doc: primary })[settings.VERSION];
  const lastModified = conditionalHeaders(rt, ctx, { doc: primary })["last-modified"];
  // Versions are read under the same policy as the document: its filter and projection.
  const filter = andFilters(resource.filter, ctx.urlValues);
  if (typeof wanted === "number") {
    const doc = legacy
      ? (wanted === 1 ? { ...legacy } : null)
      : await findVersion(rt, resource, { id, version: wanted, filter, projection });
    if (!doc) throw notFound(`version ${wanted} of this document does not exist`);
    withCurrentFields(rt, resource, doc, { primary });
    showable(rt, resource, [doc]);
    const docs = [doc];
    await completeMeta(rt, resource, { docs, projection: undefined });
    Object.assign(doc, versionStamp(rt, resource, { doc, latest }));
    const headers = { ...cacheHeaders(ctx), ...conditionalHeaders(rt, ctx, { doc }) };
    // As in Eve, the ETag of a version names the latest version number too: a new version
    // changes `_latest_version` in every older one, so a cached copy must not answer 304.
    if (headers.etag) headers.etag = `"${doc[settings.ETAG]}${latest}"`;
    if (lastModified) headers["last-modified"] = lastModified;
    if (notModified(ctx.preconditions, headers)) return { status: 304, headers };
    if (softDeleteOf(rt, resource).isDeleted(doc)) {
      decorateItems(rt, ctx, { docs, version: primary });
      throw new ServiceError("not-found", "The requested item was deleted.", {
        body: doc,
        headers,
      });
    }
    await expandMedia(rt, resource, { docs });
    decorateItems(rt, ctx, { docs, version: primary });
    if (resource.hateoas) {
      const itemPath = itemLink(ctx, primary).href;
      Object.assign(doc[settings.LINKS] as Doc, {
        parent: { href: itemPath, title: resource.itemTitle },
        collection: {
          href: flatConcat([itemPath, "?", settings.VERSION_PARAM, "=all"]),
          title: resource.resourceTitle,
        },
      });
    }
    await rt.events.emitFor("on_fetched_item", resource.name, doc);
    return { status: 200, body: doc, headers };
  }
  const rawSort = ctx.query.get(settings.QUERY_SORT);
  if (wanted === "diffs" && rawSort) {
    throw new ServiceError("bad-request", "sorting is not supported with version=diffs");
  }
  const paging = resource.pagination ? requestPaging(rt, ctx) : undefined;
  const skip = paging ? (paging.page - 1) * paging.maxResults : 0;
  let versions: Doc[];
  let total: number;
  if (legacy) {
    versions = skip === 0 ? [legacy] : [];
    total = 1;
  } else if (wanted === "all") {
    const sort = rawSort && resource.sorting ? parseSort(rawSort) : undefined;
    assertReadable(rt, resource, { sort });
    const limit = paging?.maxResults ?? 0;
    ({ versions, total } = await versionPage(rt, resource, {
      id,
      sort,
      skip,
      limit,
      filter,
      projection,
    }));
    showable(rt, resource, versions);
  } else {
    // A page of diffs after the first needs the version before it to diff against.
    const from = Math.max(0, skip - 1);
    const limit = paging ? paging.maxResults + (skip > 0 ? 1 : 0) : 0;
    const page = await versionPage(rt, resource, { id, skip: from, limit, filter, projection });
    // Each version is whole (with the current unversioned fields) before it is stripped
    // and diffed: a change to a hidden field alone shows no change at all.
    for (const version of page.versions) withCurrentFields(rt, resource, version, { primary });
    const shown = showable(rt, resource, page.versions);
    versions = diffVersions(rt, { versions: shown }).slice(skip > 0 ? 1 : 0);
    total = page.total;
  }
  await expandMedia(rt, resource, { docs: versions });
  if (wanted === "all") {
    await completeMeta(rt, resource, { docs: versions, projection: undefined });
    const current = { primary };
    for (const version of versions) withCurrentFields(rt, resource, version, current);
  }
  versions.forEach((version, i) => {
    // A diff after the first holds only what changed (the latest number does not).
    if (wanted === "diffs" && (i > 0 || skip > 0)) return;
    Object.assign(version, versionStamp(rt, resource, { doc: version, latest }));
  });
  decorateItems(rt, ctx, { docs: versions, version: primary });
  const envelope: Doc = { [settings.ITEMS]: versions };
  if (paging) {
    envelope[settings.META] = pageMeta(metaNames(rt), { ...paging, total });
  }
  if (resource.hateoas) {
    const itemPath = itemLink(ctx, primary).href;
    const links = collectionLinks(resource, itemPath, {
      query: ctx.query,
      paging: paging && { ...paging, total, pageParam: settings.QUERY_PAGE },
    });
    const self = flatConcat([itemPath, "?", settings.VERSION_PARAM, "=", String(wanted)]);
    links.self = { href: self, title: resource.itemTitle };
    // As in Eve: the versions' collection is the document, their parent its resource.
    links.collection = { href: itemPath, title: resource.itemTitle };
    links.parent = collectionLink(resource, ctx.resourcePath);
    envelope[settings.LINKS] = links;
  }
  // As in Eve: `on_fetched_diffs` gets the list of diffs, `on_fetched_item` each version.
  if (wanted === "diffs") await rt.events.emitFor("on_fetched_diffs", resource.name, versions);
  else {
    for (const version of versions) {
      await rt.events.emitFor("on_fetched_item", resource.name, version);
    }
  }
  const headers: Record<string, string> = cacheHeaders(ctx);
  if (lastModified) headers["last-modified"] = lastModified;
  return { status: 200, body: envelope, headers };
}
