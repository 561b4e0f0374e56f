/**
 * Reads request bodies: JSON and form-encoded fields, read whole within MAX_BODY_SIZE, and
 * multipart/form-data, read as a stream (`multipart.ts`): its non-file fields are held to
 * MAX_BODY_SIZE together, each file to MAX_FILE_SIZE, and files go to the store as they
 * arrive. Client mistakes become 400, 413 or 415, never a 500.
 */
import { ClientAbortError, HttpError } from "./errors.ts";
import { type BodyBudget, checkPairs, scanJson } from "./budget.ts";
import { type FileSaver, readMultipart } from "./multipart.ts";
import { setOwn } from "../domain/keys.ts";
import type { Settings } from "../settings/check.ts";

/** Reads at most `limit` bytes of the body; 413 beyond that. */
async function readLimited(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) throw new HttpError(413, `the request body exceeds ${limit} bytes`);
  if (!request.body) return new Uint8Array();
  if (Number.isSafeInteger(declared) && declared >= 0) {
    // The framing ends the body at its declared length: read it whole (Deno reads it
    // natively, without a JavaScript stream reader per chunk).
    let whole: Uint8Array<ArrayBuffer>;
    try {
      whole = new Uint8Array(await request.arrayBuffer());
    } catch {
      throw new ClientAbortError(); // the client went away mid-body
    }
    // An in-process Request can carry a length its body does not keep to.
    if (whole.byteLength > limit) {
      throw new HttpError(413, `the request body exceeds ${limit} bytes`);
    }
    return whole;
  }
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
export function bodyBudget(settings: Settings): BodyBudget {
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

/**
 * Parses JSON text after the budget scan; 400 when it is not JSON. `options.field` names the
 * multipart field the text is the value of (scanned as one field's value); absent: the whole
 * request body.
 */
function parseJson(
  bytes: Uint8Array,
  budget: BodyBudget,
  options: { field?: string } = {},
): unknown {
  const { field } = options;
  scanJson(bytes, budget, { field: field !== undefined });
  const what = field ?? "the request body";
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError(400, `${what} is not valid JSON: it is not UTF-8 text`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    // The engine's own wording (which changes between versions) stays out of the answer;
    // the position it names, if any, is kept.
    const at = /at position (\d+)/.exec(String((error as Error)?.message))?.[1];
    throw new HttpError(400, `${what} is not valid JSON${at ? ` (at character ${at})` : ""}`);
  }
}

/**
 * Parses the body by its content type. Form fields arrive as strings (repeated keys as
 * lists); multipart files as what `saveFile` made of them. `multipartFieldsAsJson` parses
 * every non-file field of a multipart body as JSON (MULTIPART_FORM_FIELDS_AS_JSON).
 */
export async function readBody(
  request: Request,
  options: {
    limit: number;
    multipartFieldsAsJson: boolean;
    budget: BodyBudget;
    /** AUTO_COLLAPSE_MULTI_KEYS: repeated form keys become lists (else the first is kept). */
    collapseMultiKeys: boolean;
    /** Largest file in a multipart body, in bytes (MAX_FILE_SIZE); null: MAX_BODY_SIZE. */
    maxFileSize: number | null;
    /** Stores a multipart file part as it streams; without it files are refused. */
    saveFile?: FileSaver;
  },
): Promise<unknown> {
  const collapse = options.collapseMultiKeys;
  const { budget } = options;
  const header = request.headers.get("content-type") ?? "";
  const type = header.split(";")[0].trim().toLowerCase();
  if (type === "multipart/form-data") {
    if (!request.body) throw new HttpError(400, "the request body is empty");
    // Keys holding a value: without AUTO_COLLAPSE_MULTI_KEYS a later file for one is skipped.
    const taken = new Set<string>();
    const entries = await readMultipart(request.body, header, {
      fieldBytes: options.limit,
      fileBytes: options.maxFileSize ?? options.limit,
      parts: budget.maxParts,
      field: (key, value) => {
        taken.add(key);
        if (!options.multipartFieldsAsJson) return value;
        const what = `multipart field "${key}" (MULTIPART_FORM_FIELDS_AS_JSON)`;
        return parseJson(new TextEncoder().encode(value), budget, { field: what });
      },
      wants: (key) => {
        if (!collapse && taken.has(key)) return false;
        taken.add(key);
        return true;
      },
      saveFile: options.saveFile,
    });
    const out: Record<string, unknown> = {};
    for (const { key, value } of entries) addField(out, { key, value, collapse });
    return out;
  }
  const bytes = await readLimited(request, options.limit);
  if (bytes.byteLength === 0) throw new HttpError(400, "the request body is empty");
  if (type === "application/json" || type.endsWith("+json") || type === "") {
    return parseJson(bytes, budget);
  }
  if (type === "application/x-www-form-urlencoded") {
    // `curl -d '{"a": 1}'` sends JSON under curl's default form type: read as a form, the
    // whole document would become one unknown field name. No form starts with `{` or `[`.
    if (/^\s*[[{]/.test(new TextDecoder().decode(bytes.subarray(0, 64)))) {
      throw new HttpError(
        415,
        'the request body is JSON but its Content-Type is "application/x-www-form-urlencoded" ' +
          '(curl\'s default for -d): send "Content-Type: application/json"',
      );
    }
    checkPairs(bytes, budget.maxFields);
    const out: Record<string, unknown> = {};
    for (const [key, value] of new URLSearchParams(new TextDecoder().decode(bytes))) {
      addField(out, { key, value, collapse });
    }
    return out;
  }
  throw new HttpError(415, `unsupported content type "${type}"`);
}

/** Reads a write's body within the limits and budgets the settings give. */
export function readRequestBody(
  settings: Settings,
  request: Request,
  options: { saveFile?: FileSaver } = {},
): Promise<unknown> {
  return readBody(request, {
    saveFile: options.saveFile,
    limit: settings.MAX_BODY_SIZE,
    multipartFieldsAsJson: settings.MULTIPART_FORM_FIELDS_AS_JSON,
    budget: bodyBudget(settings),
    collapseMultiKeys: settings.AUTO_COLLAPSE_MULTI_KEYS,
    maxFileSize: settings.MAX_FILE_SIZE || null,
  });
}
