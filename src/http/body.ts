/**
 * Reads request bodies: JSON, form-encoded fields and multipart/form-data, bounded by
 * MAX_BODY_SIZE. Client mistakes become 400, 413 or 415, never a 500.
 */
import { ClientAbortError, HttpError } from "./errors.ts";
import { type BodyBudget, checkPairs, checkParts, scanJson } from "./budget.ts";
import { setOwn } from "../domain/keys.ts";

/** An uploaded file, as services and the validator see it. */
export interface UploadedFile {
  filename: string;
  contentType: string;
  data: Uint8Array;
}

/** Reads at most `limit` bytes of the body; 413 beyond that. */
async function readLimited(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) throw new HttpError(413, `the request body exceeds ${limit} bytes`);
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  try {
    for (;;) {
      let step: ReadableStreamReadResult<Uint8Array>;
      try {
        step = await reader.read();
      } catch {
        throw new ClientAbortError(); // the stream failed: the client went away mid-body
      }
      if (step.done) break;
      size += step.value.byteLength;
      if (size > limit) throw new HttpError(413, `the request body exceeds ${limit} bytes`);
      chunks.push(step.value);
    }
  } finally {
    reader.releaseLock();
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** The body budget of the MAX_* settings. */
export function bodyBudget(settings: Record<string, any>): BodyBudget {
  return {
    maxFields: settings.MAX_DOCUMENT_FIELDS,
    maxBodyFields: settings.MAX_BODY_FIELDS,
    maxListLength: settings.MAX_LIST_LENGTH,
    maxDepth: settings.MAX_DOCUMENT_DEPTH,
    maxDocuments: settings.BULK_MAX_DOCUMENTS,
    maxParts: settings.MAX_MULTIPART_PARTS,
  };
}

/**
 * Adds a form field; own properties only, whatever the key. A repeated key becomes a list
 * with AUTO_COLLAPSE_MULTI_KEYS (`collapse`); otherwise, as in Eve, its first value is kept.
 */
function addField(
  target: Record<string, unknown>,
  field: { key: string; value: unknown; collapse: boolean },
) {
  const { key, value } = field;
  if (!Object.hasOwn(target, key)) setOwn(target, key, value);
  else if (!field.collapse) return;
  else if (Array.isArray(target[key])) (target[key] as unknown[]).push(value);
  else setOwn(target, key, [target[key], value]);
}

/** Parses JSON text after the budget scan; 400 when it is not JSON. */
function parseJson(bytes: Uint8Array, budget: BodyBudget, field?: string): unknown {
  scanJson(bytes, budget, { field: field !== undefined });
  const what = field ?? "the request body";
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new HttpError(400, `${what} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Parses the body by its content type. Form fields arrive as strings (repeated keys as
 * lists); multipart files as UploadedFile objects. `asJson` parses every non-file field
 * of a multipart body as JSON (MULTIPART_FORM_FIELDS_AS_JSON).
 */
export async function readBody(
  request: Request,
  options: {
    limit: number;
    multipartFieldsAsJson: boolean;
    budget: BodyBudget;
    /** AUTO_COLLAPSE_MULTI_KEYS: repeated form keys become lists (else the first is kept). */
    collapseMultiKeys: boolean;
    /** Largest file in a multipart body, in bytes (MAX_FILE_SIZE); null: MAX_BODY_SIZE only. */
    maxFileSize: number | null;
  },
): Promise<unknown> {
  const collapse = options.collapseMultiKeys;
  const { budget } = options;
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const bytes = await readLimited(request, options.limit);
  if (bytes.byteLength === 0) throw new HttpError(400, "the request body is empty");
  if (type === "application/json" || type.endsWith("+json") || type === "") {
    return parseJson(bytes, budget);
  }
  if (type === "application/x-www-form-urlencoded") {
    checkPairs(bytes, budget.maxFields);
    const out: Record<string, unknown> = {};
    for (const [key, value] of new URLSearchParams(new TextDecoder().decode(bytes))) {
      addField(out, { key, value, collapse });
    }
    return out;
  }
  if (type === "multipart/form-data") {
    const boundary = /boundary="?([^";]+)"?/i.exec(request.headers.get("content-type")!)?.[1];
    if (!boundary) throw new HttpError(400, "the multipart body has no boundary");
    checkParts(bytes, boundary, budget.maxParts);
    let form: FormData;
    try {
      form = await new Request(request.url, {
        method: "POST",
        headers: { "content-type": request.headers.get("content-type")! },
        body: bytes,
      }).formData();
    } catch {
      throw new HttpError(400, "the multipart body is malformed");
    }
    const out: Record<string, unknown> = {};
    for (const [key, value] of form) {
      if (typeof value === "string") {
        const field = options.multipartFieldsAsJson
          ? parseJson(
            new TextEncoder().encode(value),
            budget,
            `multipart field "${key}" (MULTIPART_FORM_FIELDS_AS_JSON)`,
          )
          : value;
        addField(out, { key, value: field, collapse });
      } else {
        if (options.maxFileSize !== null && value.size > options.maxFileSize) {
          throw new HttpError(
            413,
            `the file "${key}" is larger than MAX_FILE_SIZE (${options.maxFileSize} bytes)`,
          );
        }
        const file: UploadedFile = {
          filename: value.name,
          contentType: value.type || "application/octet-stream",
          data: new Uint8Array(await value.arrayBuffer()),
        };
        addField(out, { key, value: file, collapse });
      }
    }
    return out;
  }
  throw new HttpError(415, `unsupported content type "${type}"`);
}
