/**
 * The API description (OPENAPI_PATH, default `/openapi.json`) and the docs page (DOCS_PATH,
 * default `/docs`, its files below it), under the API prefix. The description is built once,
 * here, at start-up; both answer GET, HEAD and OPTIONS, with ETags and 304s.
 */
import { HttpError } from "../http/errors.ts";
import type { Runtime } from "../services/runtime.ts";
import { publicBase } from "../services/links.ts";
import type { OpenApiConfig } from "../openapi/config.ts";
import { describeApi } from "../openapi/document.ts";
import { type Asset, docsAsset, docsPage, docsPolicy, etagOf } from "../openapi/docs.ts";

const ALLOW = "GET, HEAD, OPTIONS";

/** The description's and docs page's endpoints of one service. */
export interface OpenApiEndpoints {
  /** The answer for `path` (API prefix removed), or null when the path is not one of ours. */
  answer(path: string, request: Request, method: string): Promise<Response> | null;
  /** Whether `path` is the description (authorised as the home endpoint is). */
  isDocument(path: string): boolean;
  /** Links for the home endpoint: RFC 8631's `service-desc` and `service-doc`. */
  homeLinks: Record<string, { href: string; title: string }>;
}

/** Builds the description (once) and the endpoints serving it. */
export function openApiEndpoints(
  rt: Runtime,
  options: { config: OpenApiConfig; rateLimited: boolean },
): OpenApiEndpoints {
  const { config } = options;
  const bytes = new TextEncoder().encode(JSON.stringify(describeApi(rt, options)));
  const document: Asset = { body: bytes, type: "application/json", etag: etagOf(bytes) };
  const s = rt.settings;
  const base = publicBase(rt);
  const prefix = [s.URL_PREFIX, s.API_VERSION].filter(Boolean).map((p) => `/${p}`).join("");
  const docs = config.docsPath;
  const page = docs === null ? null : docsPage({
    assets: `${base}${prefix}/${docs}`,
    document: `${base}${prefix}/${config.documentPath}`,
  });
  const policy = docsPolicy(base ? new URL(base).origin : null);
  const homeLinks: OpenApiEndpoints["homeLinks"] = {
    "service-desc": { href: config.documentPath, title: "OpenAPI description" },
  };
  if (docs !== null) homeLinks["service-doc"] = { href: docs, title: "API docs" };

  return {
    homeLinks,
    isDocument: (path) => path === config.documentPath,
    answer(path, request, method) {
      if (path === config.documentPath) {
        // Revalidated on every use: it changes whenever the settings do.
        return Promise.resolve(serve(document, { request, method, cache: "no-cache" }));
      }
      if (docs === null || page === null) return null;
      if (path === docs) {
        const headers = { "content-security-policy": policy, "x-content-type-options": "nosniff" };
        return Promise.resolve(serve(page, { request, method, cache: "no-cache", headers }));
      }
      if (!path.startsWith(docs + "/")) return null;
      const found = docsAsset(path.slice(docs.length + 1));
      if (!found) return null;
      return found.then((asset) =>
        serve(asset, {
          request,
          method,
          cache: "public, max-age=86400",
          headers: { "x-content-type-options": "nosniff" },
        })
      );
    },
  };
}

/** Whether an If-None-Match header names `etag` (weak forms too, as compression makes). */
function matches(header: string | null, etag: string): boolean {
  if (header === null) return false;
  return header.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t.replace(/^W\//, "") === etag;
  });
}

/** A static answer with its validators; 304 when the client holds it, 405 for writes. */
function serve(
  asset: Asset,
  options: { request: Request; method: string; cache: string; headers?: Record<string, string> },
): Response {
  const { request, method } = options;
  if (method === "OPTIONS") return new Response(null, { status: 200, headers: { allow: ALLOW } });
  if (method !== "GET" && method !== "HEAD") {
    throw new HttpError(405, "The method is not allowed for the requested URL.", {
      headers: { allow: ALLOW },
    });
  }
  const headers = new Headers(options.headers);
  headers.set("etag", asset.etag);
  headers.set("cache-control", options.cache);
  if (matches(request.headers.get("if-none-match"), asset.etag)) {
    return new Response(null, { status: 304, headers });
  }
  headers.set("content-type", asset.type);
  headers.set("content-length", String(asset.body.byteLength));
  return new Response(method === "HEAD" ? null : asset.body, { status: 200, headers });
}
