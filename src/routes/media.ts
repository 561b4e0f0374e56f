/**
 * The media endpoint (`RETURN_MEDIA_AS_URL`): `GET /<MEDIA_ENDPOINT>/<file id>` serves a
 * stored file, streamed from the store chunk by chunk (GridFS download stream, embedded
 * chunk rows), with conditional requests and byte ranges.
 */
import { methodNotAllowed, notFound } from "../services/errors.ts";
import { isRead, READ_ONLY_ALLOW } from "../domain/methods.ts";
import type { Account } from "../auth/types.ts";
import { type ObjectId, parseObjectId } from "../doc/bson.ts";
import { notModified } from "../services/conditional.ts";
import { mayDownload } from "../services/media_access.ts";
import type { Preconditions, Runtime } from "../services/runtime.ts";

const ALLOW = READ_ONLY_ALLOW;

/** The file id a path addresses at the media endpoint, or null when it is not one. */
export function mediaTarget(rt: Runtime, path: string): ObjectId | null {
  const settings = rt.settings;
  if (!settings.RETURN_MEDIA_AS_URL) return null;
  const prefix = `${settings.MEDIA_ENDPOINT}/`;
  if (!path.startsWith(prefix)) return null;
  const id = path.slice(prefix.length);
  return parseObjectId(id);
}

/** A parsed `Range` header: one satisfiable range, "unsatisfiable", or null (whole file). */
type RangeAsk = { start: number; end: number } | "unsatisfiable" | null;

/**
 * Reads `Range: bytes=a-b | a- | -n`. Several ranges, other units and malformed values are
 * answered with the whole file (RFC 9110 lets a server ignore Range).
 */
export function parseRange(header: string | null, length: number): RangeAsk {
  if (header === null) return null;
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || length === 0) return "unsatisfiable";
    return { start: Math.max(0, length - suffix), end: length - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? length - 1 : Math.min(Number(match[2]), length - 1);
  if (match[2] !== "" && Number(match[2]) < start) return null;
  if (start >= length) return "unsatisfiable";
  return { start, end };
}

/** `Content-Disposition` with the stored name: an ASCII fallback and the RFC 5987 form. */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_").slice(0, 200) || "file";
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `inline; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Answers a request at the media endpoint. */
export async function mediaRoute(
  rt: Runtime,
  options: {
    id: ObjectId;
    request: Request;
    method: string;
    account: Account | null;
    /** The request's conditional headers, read by the HTTP layer. */
    preconditions: Preconditions;
  },
): Promise<Response> {
  const { id, request, method } = options;
  if (method === "OPTIONS") return new Response(null, { status: 200, headers: { allow: ALLOW } });
  if (!isRead(method)) {
    throw methodNotAllowed(ALLOW.split(", "));
  }
  const file = await rt.store.files.stat(id);
  // Unknown, unreferenced and unreadable files look the same: not found.
  if (!file || !await mayDownload(rt, id, { account: options.account })) throw notFound();
  const headers: Record<string, string> = {
    "content-type": file.contentType || "application/octet-stream",
    "accept-ranges": "bytes",
    "etag": `"${file.id.toHexString()}-${file.length}"`,
    "last-modified": new Date(Math.floor(file.uploadDate.getTime() / 1000) * 1000).toUTCString(),
    "content-disposition": contentDisposition(file.filename),
    "x-content-type-options": "nosniff",
  };
  if (notModified(options.preconditions, headers)) {
    return new Response(null, { status: 304, headers: { etag: headers.etag } });
  }
  const ask = parseRange(request.headers.get("range"), file.length);
  if (ask === "unsatisfiable") {
    return new Response(null, {
      status: 416,
      headers: { "content-range": `bytes */${file.length}`, "accept-ranges": "bytes" },
    });
  }
  const range = ask ?? { start: 0, end: file.length - 1 };
  const status = ask ? 206 : 200;
  if (ask) headers["content-range"] = `bytes ${range.start}-${range.end}/${file.length}`;
  headers["content-length"] = String(Math.max(0, range.end - range.start + 1));
  const body = method === "HEAD" || file.length === 0
    ? null
    : await rt.store.files.stream(file.id, range);
  // Deleted between stat and read: as if it had never been there.
  if (body === null && method !== "HEAD" && file.length > 0) throw notFound();
  return new Response(body, { status, headers });
}
