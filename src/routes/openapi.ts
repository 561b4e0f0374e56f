/**
 * The API description (OPENAPI_PATH, default `/openapi.json`) and the docs page (DOCS_PATH,
 * default `/docs`, its files below it), under the API prefix. The description is built once,
 * here, at start-up; both answer GET, HEAD and OPTIONS, with ETags and 304s.
 */
import { methodNotAllowed } from "../services/errors.ts";
import { isRead, READ_ONLY_ALLOW } from "../domain/methods.ts";
import type { Runtime } from "../services/runtime.ts";
import { describeApi, type DescribeOptions } from "../openapi/document.ts";
import {
  type Asset,
  docsAsset,
  docsPage,
  docsPolicy,
  etagOf,
  isDocsAsset,
} from "../openapi/docs.ts";

const ALLOW = READ_ONLY_ALLOW;

/** The description's and docs page's endpoints of one service. */
export interface OpenApiEndpoints {
  /** The answer for `path` (API prefix removed), or null when the path is not one of ours. */
  answer(path: string, request: Request, method: string): Promise<Response> | null;
  /**
   * Whether `path` (API prefix removed) is the description ("document", authorised as the
   * home endpoint is), the docs page or one of its files ("docs"), or neither (null).
   */
  owns(path: string): "document" | "docs" | null;
  /** Links for the home endpoint: RFC 8631's `service-desc` and `service-doc`. */
  homeLinks: Record<string, { href: string; title: string }>;
}

/** Builds the description (once) and the endpoints serving it. */
export function openApiEndpoints(
  rt: Runtime,
  options: DescribeOptions,
): OpenApiEndpoints {
  const { config } = options;
  const bytes = new TextEncoder().encode(JSON.stringify(describeApi(rt, options)));
  const document: Asset = { body: bytes, type: "application/json", etag: etagOf(bytes) };
  const docs = config.docsPath;
  const page = docs === null ? null : docsPage({
    assets: rt.urls.api(docs),
    document: rt.urls.api(config.documentPath),
  });
  const publicBase = rt.settings.PUBLIC_BASE_URL;
  const policy = docsPolicy(publicBase ? new URL(publicBase).origin : null);
  const homeLinks: OpenApiEndpoints["homeLinks"] = {
    "service-desc": { href: config.documentPath, title: "OpenAPI description" },
  };
  if (docs !== null) homeLinks["service-doc"] = { href: docs, title: "API docs" };

  return {
    homeLinks,
    owns(path) {
      if (path === config.documentPath) return "document";
      if (docs === null || page === null) return null;
      if (path === docs) return "docs";
      return path.startsWith(docs + "/") && isDocsAsset(path.slice(docs.length + 1))
        ? "docs"
        : null;
    },
    answer(path, request, method) {
      if (path === config.documentPath) {
        // Revalidated on every use: it changes whenever the settings do.
        return Promise.resolve(answerStatic(document, { request, method, cache: "no-cache" }));
      }
      if (docs === null || page === null) return null;
      if (path === docs) {
        const headers = { "content-security-policy": policy, "x-content-type-options": "nosniff" };
        return Promise.resolve(answerStatic(page, { request, method, cache: "no-cache", headers }));
      }
      if (!path.startsWith(docs + "/")) return null;
      const found = docsAsset(path.slice(docs.length + 1));
      if (!found) return null;
      return found.then((asset) =>
        answerStatic(asset, {
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
function answerStatic(
  asset: Asset,
  options: { request: Request; method: string; cache: string; headers?: Record<string, string> },
): Response {
  const { request, method } = options;
  if (method === "OPTIONS") return new Response(null, { status: 200, headers: { allow: ALLOW } });
  if (!isRead(method)) throw methodNotAllowed(["GET", "HEAD"]);
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
