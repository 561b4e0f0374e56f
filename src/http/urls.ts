/**
 * The service's URLs, built in one place: the API prefix (URL_PREFIX / API_VERSION) that
 * requests are matched under, and the public URLs answers carry (`Location`, media URLs),
 * absolute under PUBLIC_BASE_URL or else path-absolute, never from the request's `Host`.
 */
import type { Settings } from "../settings/check.ts";
import type { UrlBuilder } from "../services/runtime.ts";

/** Prefixes already worked out, per (frozen) settings object: every request asks. */
const prefixes = new WeakMap<Settings, string>();

/** The API prefix without slashes (`api/v1`), "" when there is none. */
export function apiPrefix(settings: Settings): string {
  let prefix = prefixes.get(settings);
  if (prefix === undefined) {
    prefix = [settings.URL_PREFIX, settings.API_VERSION]
      .map((part) => part.replace(/^\/+|\/+$/g, ""))
      .filter(Boolean)
      .join("/");
    prefixes.set(settings, prefix);
  }
  return prefix;
}

/**
 * The query parameters of a request URL, or null when it has no query: cheaper than parsing
 * the whole URL, which most requests never need.
 */
export function queryOf(url: string): URLSearchParams | null {
  const start = url.indexOf("?");
  if (start === -1) return null;
  const end = url.indexOf("#", start);
  return new URLSearchParams(end === -1 ? url.slice(start + 1) : url.slice(start + 1, end));
}

/**
 * The API path of a request path: without slashes around it and without the API prefix
 * ("" for the home endpoint); null when the path is not under the prefix.
 */
export function apiPath(settings: Settings, pathname: string): string | null {
  const prefix = apiPrefix(settings);
  // Most paths have one leading slash and none trailing: no regex for them.
  let path = pathname.length > 1 && pathname[1] !== "/" && !pathname.endsWith("/")
    ? pathname.slice(1)
    : pathname.replace(/^\/+|\/+$/g, "");
  if (prefix) {
    if (path !== prefix && !path.startsWith(prefix + "/")) return null;
    path = path.slice(prefix.length).replace(/^\/+/, "");
  }
  return path;
}

/** The public URL builder of `settings`, for services (see `UrlBuilder`). */
export function publicUrls(settings: Settings): UrlBuilder {
  const base = settings.PUBLIC_BASE_URL?.replace(/\/+$/, "") ?? "";
  const prefix = apiPrefix(settings);
  const api = (path: string) => `${base}/${prefix ? prefix + "/" : ""}${path}`;
  const mediaBase = settings.MEDIA_BASE_URL?.replace(/\/?$/, "/");
  return {
    api,
    apiRoot: () => `${base}/${prefix}`,
    media(id: string) {
      const path = `${settings.MEDIA_ENDPOINT}/${id}`;
      return mediaBase === undefined ? api(path) : `${mediaBase}${path}`;
    },
  };
}
