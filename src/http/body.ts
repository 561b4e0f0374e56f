/**
 * Reads request bodies: JSON, form-encoded fields and multipart/form-data, bounded by
 * MAX_BODY_SIZE. Client mistakes become 400, 413 or 415, never a 500.
 */
import { HttpError } from "./errors.ts";

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
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > limit) throw new HttpError(413, `the request body exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** Adds a repeated form key as a list. */
function addField(target: Record<string, unknown>, key: string, value: unknown) {
  if (!(key in target)) target[key] = value;
  else if (Array.isArray(target[key])) (target[key] as unknown[]).push(value);
  else target[key] = [target[key], value];
}

/**
 * Parses the body by its content type. Form fields arrive as strings (repeated keys as
 * lists); multipart files as UploadedFile objects. `asJson` parses every non-file field
 * of a multipart body as JSON (MULTIPART_FORM_FIELDS_AS_JSON).
 */
export async function readBody(
  request: Request,
  options: { limit: number; multipartFieldsAsJson: boolean },
): Promise<unknown> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const bytes = await readLimited(request, options.limit);
  if (bytes.byteLength === 0) throw new HttpError(400, "the request body is empty");
  if (type === "application/json" || type.endsWith("+json") || type === "") {
    try {
      return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch (error) {
      throw new HttpError(400, `the request body is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (type === "application/x-www-form-urlencoded") {
    const out: Record<string, unknown> = {};
    for (const [key, value] of new URLSearchParams(new TextDecoder().decode(bytes))) {
      addField(out, key, value);
    }
    return out;
  }
  if (type === "multipart/form-data") {
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
        addField(out, key, options.multipartFieldsAsJson ? parseJsonField(key, value) : value);
      } else {
        addField(
          out,
          key,
          {
            filename: value.name,
            contentType: value.type || "application/octet-stream",
            data: new Uint8Array(await value.arrayBuffer()),
          } satisfies UploadedFile,
        );
      }
    }
    return out;
  }
  throw new HttpError(415, `unsupported content type "${type}"`);
}

function parseJsonField(key: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new HttpError(
      400,
      `multipart field "${key}" must hold JSON (MULTIPART_FORM_FIELDS_AS_JSON)`,
    );
  }
}
