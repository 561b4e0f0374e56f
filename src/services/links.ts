/**
 * Hypermedia links (HATEOAS). Every href is relative to the API entry point.
 */
import type { Resource } from "../domain/types.ts";
import type { Doc } from "../store/store.ts";
import { idToString } from "./meta.ts";

export interface Link {
  href: string;
  title: string;
}

/** The link of one item of `resource` at `resourcePath`. */
export function itemLink(resource: Resource, resourcePath: string, doc: Doc): Link {
  const id = doc[resource.itemLookupField] ?? doc[resource.idField];
  return { href: `${resourcePath}/${idToString(id)}`, title: resource.itemTitle };
}

export function collectionLink(resource: Resource, resourcePath: string): Link {
  return { href: resourcePath, title: resource.resourceTitle };
}

export const HOME_LINK: Link = { href: "/", title: "home" };

/** `_links` of an item: self, parent (home) and collection. */
export function itemLinks(resource: Resource, resourcePath: string, doc: Doc) {
  return {
    self: itemLink(resource, resourcePath, doc),
    parent: HOME_LINK,
    collection: collectionLink(resource, resourcePath),
  };
}

/** Collection `_links`, with next / previous / last only when they apply. */
export function collectionLinks(
  resource: Resource,
  resourcePath: string,
  query: URLSearchParams,
  paging?: { page: number; maxResults: number; total?: number; more?: boolean; pageParam: string },
) {
  const links: Record<string, Link> = {
    parent: HOME_LINK,
    self: collectionLink(resource, resourcePath),
  };
  if (!paging) return links;
  const hrefFor = (page: number) => {
    const params = new URLSearchParams(query);
    params.set(paging.pageParam, String(page));
    return `${resourcePath}?${params.toString()}`;
  };
  const { page, maxResults, total } = paging;
  const last = total === undefined ? undefined : Math.max(1, Math.ceil(total / maxResults));
  const hasNext = last !== undefined ? page < last : !!paging.more;
  if (hasNext) links.next = { href: hrefFor(page + 1), title: "next page" };
  if (page > 1) links.prev = { href: hrefFor(page - 1), title: "previous page" };
  if (last !== undefined && last > 1) links.last = { href: hrefFor(last), title: "last page" };
  return links;
}
