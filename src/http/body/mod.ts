/**
 * Request-body reading, the entry of `http/body/` (the app calls {@link readRequestBody}
 * and nothing else here): JSON and form-encoded fields, read whole within MAX_BODY_SIZE,
 * and multipart/form-data, read as a stream (`multipart.ts`): its non-file fields are held
 * to MAX_BODY_SIZE together, each file to MAX_FILE_SIZE, and files go to the store as they
 * arrive. Every body is held to the minimum data rate (MIN_REQUEST_BODY_RATE, 408 under it).
 * Client mistakes become 400, 408, 413 or 415, never a 500.
 *
 * The parts beside it:
 * - `budget.ts`: field-count and depth budgets checked on the raw bytes, before parsing;
 * - `body_chunks.ts`: chunk-by-chunk reading into one reused buffer, at the minimum rate;
 * - `multipart.ts`: the streaming multipart/form-data reader;
 * - `file_pipe.ts`: carries one file part from the parser to its saver.
 */
import { ClientAbortError, HttpError } from "../errors.ts";
import { type BodyBudget, checkPairs, scanJson } from "./budget.ts";
import { type FileSaver, readMultipart } from "./multipart.ts";
import { bodyChunks } from "./body_chunks.ts";
import { type BodyRate, RateWatch, SlowBodyError } from "../../util/body_rate.ts";
import { noteTransferred } from "../../util/transfer.ts";
import { setOwn } from "../../domain/keys.ts";
import { keptBody } from "../../util/read_body.ts";
import type { Settings } from "../../settings/check.ts";

/** Reads at most `limit` bytes of the body, at the minimum data rate `rate`; 413 beyond. */
async function readLimited(
  request: Request,
  limit: number,
  rate: BodyRate | null,
): Promise<Uint8Array<ArrayBuffer>> {
  // Read already (HMAC authentication signs it): the bytes, not the stream again.
  const kept = keptBody(request);
  if (kept) {
    if (kept.byteLength > limit) {
      throw new HttpError(413, `the request body exceeds ${limit} bytes`);
    }
    return kept;
  }
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) throw new HttpError(413, `the request body exceeds ${limit} bytes`);
  const known = Number.isSafeInteger(declared) && declared >= 0;
  // Before `request.body` is touched: that would make the server's body a stream.
  if (known && (rate === null || declared * 1000 <= rate.bytesPerSecond * rate.graceMs)) {
    return await readWhole(request, limit, rate);
  }
  if (!request.body) return new Uint8Array();
  // Chunks are copied out of the reused buffer, into one array when the length is declared.
  let whole: Uint8Array<ArrayBuffer> | null = known ? new Uint8Array(declared) : null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = bodyChunks(request.body, { rate });
  let failed = true;
  try {
    for (;;) {
      let chunk: Uint8Array | null;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (error instanceof SlowBodyError) throw error;
        throw new ClientAbortError(); // the stream failed: the client went away mid-body
      }
      if (chunk === null) break;
      if (size + chunk.byteLength > limit) {
        throw new HttpError(413, `the request body exceeds ${limit} bytes`);
      }
      // An in-process Request can carry a length its body does not keep to.
      if (whole && size + chunk.byteLength > whole.byteLength) {
        chunks.push(whole.slice(0, size));
        whole = null;
      }
      if (whole) whole.set(chunk, size);
      else chunks.push(chunk.slice());
      size += chunk.byteLength;
    }
    failed = false;
  } finally {
    reader.close({ cancel: failed });
  }
  if (whole) return size === whole.byteLength ? whole : whole.slice(0, size);
  if (chunks.length === 1) return chunks[0] as Uint8Array<ArrayBuffer>;
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/**
 * Reads a body whose declared length is small enough for the minimum rate never to ask for
 * more than the grace period's worth of waiting (or with no rate): whole, in one read, as
 * `arrayBuffer()` takes it from the server (far cheaper than a stream for the usual small
 * JSON body; no body reads as none). The rate's rule is then one deadline for the whole body, the grace period plus
 * its slack: for such a body, exactly what the rule read chunk by chunk allows. The server
 * holds the body to its Content-Length; an in-process Request may carry more: 413 past the
 * limit.
 */
async function readWhole(
  request: Request,
  limit: number,
  rate: BodyRate | null,
): Promise<Uint8Array<ArrayBuffer>> {
  const pending = request.arrayBuffer();
  let buffer: ArrayBuffer;
  try {
    buffer = await new RateWatch(rate).read(pending, (b) => b.byteLength);
  } catch (error) {
    if (error instanceof SlowBodyError) {
      // The 408 closes the connection, which ends the read.
      pending.catch(() => {});
      throw error;
    }
    throw new ClientAbortError(); // the body failed: the client went away mid-body
  }
  if (buffer.byteLength > limit) {
    throw new HttpError(413, `the request body exceeds ${limit} bytes`);
  }
  noteTransferred(buffer.byteLength);
  return new Uint8Array(buffer);
}

/** The minimum request-body data rate of the settings, or null when it is off. */
export function bodyRate(settings: Settings): BodyRate | null {
  const bytesPerSecond = settings.MIN_REQUEST_BODY_RATE;
  if (bytesPerSecond <= 0) return null;
  return { bytesPerSecond, graceMs: settings.MIN_REQUEST_BODY_RATE_GRACE_MS };
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

/** Refuses bytes that are not UTF-8; one for every body (a decode without `stream` keeps no state). */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses JSON text after the budget scan; 400 when it is not JSON. `options.field` names the
 * multipart field the text is the value of (scanned as one field's value); absent: the whole
 * request body.
 */
function parseJson(
  bytes: Uint8Array,
  budget: BodyBudget,
  options: { field?: string; orText?: string } = {},
): unknown {
  const { field, orText } = options;
  scanJson(bytes, budget, { field: field !== undefined });
  const what = field ?? "the request body";
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new HttpError(400, `${what} is not valid JSON: it is not UTF-8 text`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    if (orText !== undefined) return orText;
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
    /**
     * JSON_REQUEST_CONTENT_TYPES: more media types read as JSON (`application/json` and
     * `*+json` always are).
     */
    jsonTypes?: readonly string[];
    /** Largest file in a multipart body, in bytes (MAX_FILE_SIZE); null: MAX_BODY_SIZE. */
    maxFileSize: number | null;
    /** Stores a multipart file part as it streams; without it files are refused. */
    saveFile?: FileSaver;
    /** The minimum data rate (MIN_REQUEST_BODY_RATE); null: not watched. */
    rate?: BodyRate | null;
  },
): Promise<unknown> {
  const collapse = options.collapseMultiKeys;
  const { budget } = options;
  const header = request.headers.get("content-type") ?? "";
  const type = header.split(";")[0].trim().toLowerCase();
  if (type === "multipart/form-data") {
    // Read already (HMAC authentication signs it): the bytes, not the stream again.
    const kept = keptBody(request);
    const body = kept ? new Blob([kept]).stream() : request.body;
    if (!body) throw new HttpError(400, "the request body is empty");
    // Keys holding a value: without AUTO_COLLAPSE_MULTI_KEYS a later file for one is skipped.
    const taken = new Set<string>();
    const entries = await readMultipart(body, header, {
      fieldBytes: options.limit,
      fileBytes: options.maxFileSize ?? options.limit,
      parts: budget.maxParts,
      field: (key, value) => {
        taken.add(key);
        if (!options.multipartFieldsAsJson) return value;
        const what = `multipart field "${key}" (MULTIPART_FORM_FIELDS_AS_JSON)`;
        // As in Eve, a field that is not JSON stays text (validation then judges it: 422).
        return parseJson(new TextEncoder().encode(value), budget, { field: what, orText: value });
      },
      wants: (key) => {
        if (!collapse && taken.has(key)) return false;
        taken.add(key);
        return true;
      },
      saveFile: options.saveFile,
      rate: options.rate ?? null,
    });
    const out: Record<string, unknown> = {};
    for (const { key, value } of entries) addField(out, { key, value, collapse });
    return out;
  }
  const bytes = await readLimited(request, options.limit, options.rate ?? null);
  if (bytes.byteLength === 0) throw new HttpError(400, "the request body is empty");
  if (
    type === "application/json" || type.endsWith("+json") || type === "" ||
    options.jsonTypes?.some((json) => json.toLowerCase() === type)
  ) {
    const parsed = parseJson(bytes, budget);
    // As in Eve, a body that is a JSON string holding a JSON document (encoded twice) is
    // read as that document; any other string stays a string (refused by the writes).
    if (typeof parsed === "string" && /^\s*[[{]/.test(parsed)) {
      try {
        const inner = parseJson(new TextEncoder().encode(parsed), budget);
        if (typeof inner === "object" && inner !== null) return inner;
      } catch {
        // Not JSON inside: the string is what was sent.
      }
    }
    return parsed;
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
    jsonTypes: settings.JSON_REQUEST_CONTENT_TYPES,
    maxFileSize: settings.MAX_FILE_SIZE || null,
    rate: bodyRate(settings),
  });
}
