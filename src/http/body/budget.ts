/**
 * Body budgets checked on the raw bytes, before any value is built: a JSON text is scanned
 * once (no allocation per key) so a body of a million keys is refused in milliseconds
 * instead of blocking the event loop in `JSON.parse` and the validator.
 */
import { HttpError } from "../errors.ts";

/** The limits a request body must keep (MAX_* settings). */
export interface BodyBudget {
  /** Fields (at any depth) in one document: MAX_DOCUMENT_FIELDS. */
  maxFields: number;
  /** Fields in the whole body (all documents of a bulk insert): MAX_BODY_FIELDS. */
  maxBodyFields: number;
  /** Members of one list inside a document: MAX_LIST_LENGTH. */
  maxListLength: number;
  /** Nesting depth of objects and lists within a document: MAX_DOCUMENT_DEPTH. */
  maxDepth: number;
  /** Documents of a bulk insert (a top-level list): BULK_MAX_DOCUMENTS. */
  maxDocuments: number;
  /** Parts of a multipart/form-data body: MAX_MULTIPART_PARTS. */
  maxParts: number;
}

const QUOTE = 0x22, BACKSLASH = 0x5c, COLON = 0x3a, COMMA = 0x2c;
const OPEN_OBJ = 0x7b, CLOSE_OBJ = 0x7d, OPEN_ARR = 0x5b, CLOSE_ARR = 0x5d;
const OBJ = 1, ARR = 2;

/** The 413 for a body with more than `options.limit` `what` (setting `options.key`). */
function over(what: string, options: { limit: number; key: string }): HttpError {
  const { limit, key } = options;
  return new HttpError(413, `the request body has more than ${limit} ${what} (${key})`);
}

/**
 * Scans JSON text for the budget. Malformed JSON is left to the parser; the scan only
 * counts structure outside strings, so it never rejects valid JSON within the budget.
 * A top-level list is a bulk insert: each member is one document. With `field`, the text is
 * the value of one field of a document (a multipart JSON field).
 * @throws HttpError 413 naming the setting that was exceeded.
 */
export function scanJson(
  bytes: Uint8Array,
  budget: BodyBudget,
  options: { field?: boolean } = {},
): void {
  // Depth 1 is the body's own value; a bulk body's documents start at depth 2.
  const limitDepth = budget.maxDepth;
  const kinds = new Uint8Array(limitDepth + 3);
  const counts = new Float64Array(limitDepth + 3);
  let depth = 0;
  let bulk = false;
  if (options.field) {
    depth = 1;
    kinds[1] = OBJ;
  }
  let fields = 0;
  let total = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = bytes[i];
    if (b === QUOTE) {
      for (i++; i < n; i++) {
        const c = bytes[i];
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) break;
      }
    } else if (b === OPEN_OBJ || b === OPEN_ARR) {
      depth++;
      if (depth === 1) bulk = b === OPEN_ARR;
      if (depth > (bulk ? limitDepth + 1 : limitDepth)) {
        throw over("levels of nesting", { limit: budget.maxDepth, key: "MAX_DOCUMENT_DEPTH" });
      }
      kinds[depth] = b === OPEN_OBJ ? OBJ : ARR;
      counts[depth] = 1;
    } else if (b === CLOSE_OBJ || b === CLOSE_ARR) {
      if (--depth < 0) return; // malformed: the parser says why
    } else if (b === COLON && kinds[depth] === OBJ) {
      if (++fields > budget.maxFields) {
        throw over("fields in a document", { limit: budget.maxFields, key: "MAX_DOCUMENT_FIELDS" });
      }
      if (++total > budget.maxBodyFields) {
        throw over("fields", { limit: budget.maxBodyFields, key: "MAX_BODY_FIELDS" });
      }
    } else if (b === COMMA && kinds[depth] === ARR) {
      const count = ++counts[depth];
      if (depth === 1 && bulk) {
        fields = 0; // the next document of a bulk insert
        if (count > budget.maxDocuments) {
          throw new HttpError(413, `at most ${budget.maxDocuments} documents per request`);
        }
      } else if (count > budget.maxListLength) {
        throw over("members in a list", { limit: budget.maxListLength, key: "MAX_LIST_LENGTH" });
      }
    }
  }
}

/**
 * Counts the `&`-separated pairs of a form-encoded body before it is parsed.
 * @throws HttpError 413 past MAX_DOCUMENT_FIELDS.
 */
export function checkPairs(bytes: Uint8Array, maxFields: number): void {
  let pairs = 1;
  let at = -1;
  while ((at = bytes.indexOf(0x26, at + 1)) !== -1) {
    if (++pairs > maxFields) throw over("fields", { limit: maxFields, key: "MAX_DOCUMENT_FIELDS" });
  }
}
