/**
 * Hypermedia links (HATEOAS). Every href is relative to the API entry point.
 */
import type { Domain } from "../domain/build.ts";
import type { DataRelation, Resource } from "../domain/types.ts";
import type { Doc } from "../store/store.ts";
import { idToString } from "./meta.ts";
import { relationOf } from "./embed.ts";
import { flatConcat } from "../util/strings.ts";
import { DBRef } from "../doc/bson.ts";

export interface Link {
  href: string;
  title: string;
}

/**
 * Where links point from: a resource and the endpoint path it was requested at (a
 * `RequestContext` is one, so a request's context is passed as it is).
 */
export interface LinkBase {
  resource: Resource;
  /** The resource endpoint path, relative to the API entry point. */
  resourcePath: string;
}

/** The link of `doc`, one item of `at.resource` at `at.resourcePath`. */
export function itemLink(at: LinkBase, doc: Doc): Link {
  const { resource } = at;
  const id = doc[resource.itemLookupField] ?? doc[resource.idField];
  return { href: flatConcat([at.resourcePath, "/", idToString(id)]), title: resource.itemTitle };
}

export function collectionLink(resource: Resource, resourcePath: string): Link {
  return { href: resourcePath, title: resource.resourceTitle };
}

export const HOME_LINK: Link = { href: "/", title: "home" };

/** `_links` of `doc`, an item of `at.resource`: self, parent (home) and collection. */
export function itemLinks(at: LinkBase, doc: Doc) {
  return {
    self: itemLink(at, doc),
    parent: HOME_LINK,
    collection: collectionLink(at.resource, at.resourcePath),
  };
}

/** Options of {@link relatedLinks}: the same for every document of a request. */
export interface RelatedLinksOptions {
  /** The resources references point to. */
  domain: Domain;
  /** The VERSION field of versioned references (`?version=<n>` in their links). */
  versionField: string;
}

/**
 * `related` links of `doc`, a stored document of `resource`: for every top-level
 * data_relation field (or list of them) holding references, a link to each referenced
 * document (looked up in `options.domain`), a list for list fields. Computed from the
 * references before embedding replaces them, so an unresolved reference still names what it
 * points to. Undefined when there is none.
 */
export function relatedLinks(
  resource: Resource,
  doc: Doc,
  options: RelatedLinksOptions,
): Record<string, Link | Link[]> | undefined {
  const { domain, versionField } = options;
  const fields = relationFields(resource);
  if (fields.length === 0) return undefined;
  const related: Record<string, Link | Link[]> = {};
  for (const [field, relation] of fields) {
    const value = doc[field];
    if (value === null || value === undefined) continue;
    const target = domain.get(relation.resource);
    // A sub-resource target has no single address for its items.
    if (!target || target.internal || target.urlParts.some((p) => typeof p !== "string")) continue;
    const link = (ref: unknown): Link | null => {
      // A DBRef links to the document it names.
      let id = ref instanceof DBRef ? ref.oid : ref;
      let suffix = "";
      if (relation.version && ref !== null && typeof ref === "object" && !Array.isArray(ref)) {
        const versioned = ref as Doc;
        id = versioned[relation.field ?? target.idField];
        if (versioned[versionField] !== undefined) suffix = `?version=${versioned[versionField]}`;
      }
      if (id === null || id === undefined) return null;
      return {
        href: flatConcat([target.url, "/", idToString(id), suffix]),
        title: target.itemTitle,
      };
    };
    if (Array.isArray(value)) {
      const links = value.map(link).filter((l): l is Link => l !== null);
      if (links.length) related[field] = links;
    } else {
      const single = link(value);
      if (single) related[field] = single;
    }
  }
  return Object.keys(related).length ? related : undefined;
}

/** Whether documents of `resource` can have `related` links (it has a top-level relation). */
export function hasRelations(resource: Resource): boolean {
  return relationFields(resource).length > 0;
}

const relationFieldsOf = new WeakMap<Resource, Array<[string, DataRelation]>>();

/** The top-level fields of `resource` holding references, worked out once per resource. */
function relationFields(resource: Resource): Array<[string, DataRelation]> {
  let fields = relationFieldsOf.get(resource);
  if (!fields) {
    fields = [];
    for (const [field, rules] of resource.schemaModel.root.fields) {
      const relation = relationOf(rules);
      if (relation) fields.push([field, relation]);
    }
    relationFieldsOf.set(resource, fields);
  }
  return fields;
}

/** Options of {@link collectionLinks}. */
export interface CollectionLinksOptions {
  /** The request's query parameters, kept in the page links. */
  query: URLSearchParams;
  /** Whether the request found documents (`self` keeps the query only then); default true. */
  found?: boolean;
  /**
   * The page shown (`page`, `maxResults`), the `total` when counted, else whether there are
   * `more`, and the page parameter's name; without it, no page links.
   */
  paging?: {
    page: number;
    maxResults: number;
    total?: number;
    more?: boolean;
    pageParam: string;
  };
}

/**
 * A query string for links, encoded as little as a link needs: `%`, `&`, `#`, `+`, `=` in
 * names and control characters only, so `where=role == agent` reads in the link as the
 * client wrote it (as in Eve) while every parameter still parses back to what was sent.
 */
export function linkQuery(params: URLSearchParams): string {
  return encodedQuery(encodedPairs(params));
}

/** The parameters of `params`, each name and value encoded for a link (see {@link linkQuery}). */
function encodedPairs(params: URLSearchParams): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const [name, value] of params) {
    pairs.push([encodeLinkPart(name, true), encodeLinkPart(value, false)]);
  }
  return pairs;
}

/** The query string of encoded pairs. */
function encodedQuery(pairs: Array<[string, string]>): string {
  const parts: string[] = [];
  for (let i = 0; i < pairs.length; i++) parts.push(pairs[i][0], "=", pairs[i][1], "&");
  parts.pop();
  return parts.join("");
}

/**
 * The query string of encoded `pairs` with parameter `name` (encoded) set to `value` (which
 * needs no encoding), as `URLSearchParams.set` sets it: the first one with that name takes
 * the value and the others are removed, or the parameter is appended.
 */
function encodedQueryWith(pairs: Array<[string, string]>, name: string, value: string): string {
  const parts: string[] = [];
  let set = false;
  for (let i = 0; i < pairs.length; i++) {
    if (pairs[i][0] !== name) parts.push(pairs[i][0], "=", pairs[i][1], "&");
    else if (!set) {
      parts.push(name, "=", value, "&");
      set = true;
    }
  }
  if (!set) parts.push(name, "=", value, "&");
  parts.pop();
  return parts.join("");
}

/** `text` with what would change how a link's query parses percent-encoded. */
function encodeLinkPart(text: string, isName: boolean): string {
  let out = "";
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const c = text[i];
    const special = code < 0x20 || code === 0x7f || c === "%" || c === "&" || c === "#" ||
      c === "+" || (isName && (c === "=" || c === " "));
    if (!special) continue;
    out += text.slice(start, i) + `%${code.toString(16).toUpperCase().padStart(2, "0")}`;
    start = i + 1;
  }
  return start === 0 ? text : out + text.slice(start);
}

/**
 * Collection `_links` of `resource` at `resourcePath`, with next / previous / last only when
 * they apply. As in Eve, `self` keeps the request's query when documents were found, and
 * `last` is given only where there is a next page.
 */
export function collectionLinks(
  resource: Resource,
  resourcePath: string,
  options: CollectionLinksOptions,
) {
  const { query, paging } = options;
  const links: Record<string, Link> = {
    parent: HOME_LINK,
    self: collectionLink(resource, resourcePath),
  };
  // The query's parameters, read and encoded once for every link.
  let pairs: Array<[string, string]> | undefined;
  if (options.found !== false && query.size > 0) {
    pairs = encodedPairs(query);
    links.self = {
      href: flatConcat([resourcePath, "?", encodedQuery(pairs)]),
      title: resource.resourceTitle,
    };
  }
  if (!paging) return links;
  // Each page link is the query with the page parameter set (where it is, or appended).
  const pageName = encodeLinkPart(paging.pageParam, true);
  const hrefFor = (page: number) => {
    pairs ??= encodedPairs(query);
    return flatConcat([resourcePath, "?", encodedQueryWith(pairs, pageName, String(page))]);
  };
  const { page, maxResults, total } = paging;
  const last = total === undefined ? undefined : Math.max(1, Math.ceil(total / maxResults));
  const hasNext = last !== undefined ? page < last : !!paging.more;
  if (hasNext) links.next = { href: hrefFor(page + 1), title: "next page" };
  if (page > 1) links.prev = { href: hrefFor(page - 1), title: "previous page" };
  if (hasNext && last !== undefined) links.last = { href: hrefFor(last), title: "last page" };
  return links;
}

/**
 * The `_meta` of a page, its keys named as the query parameters are (QUERY_PAGE,
 * QUERY_MAX_RESULTS), as in Eve; `total` when counted.
 */
export function pageMeta(
  names: { page: string; maxResults: string },
  paging: { page: number; maxResults: number; total?: number },
): Doc {
  const meta: Doc = { [names.page]: paging.page, [names.maxResults]: paging.maxResults };
  if (paging.total !== undefined) meta.total = paging.total;
  return meta;
}
