/**
 * The body budgets (MAX_DOCUMENT_FIELDS, MAX_BODY_FIELDS, MAX_LIST_LENGTH,
 * MAX_DOCUMENT_DEPTH, BULK_MAX_DOCUMENTS) checked on values already built, for bodies that
 * never were bytes: the in-process API (`service.data`). Values JSON could not carry (a Map,
 * a class instance, an invalid date) are refused there too. HTTP bodies are checked on their
 * bytes before parsing (`http/body/budget.ts`), with the same limits and messages.
 */
import type { Settings } from "../settings/check.ts";
import { ServiceError } from "./errors.ts";

/** The error for a body with more than `options.limit` `what` (setting `options.key`). */
function over(what: string, options: { limit: number; key: string }): ServiceError {
  const { limit, key } = options;
  return new ServiceError("too-large", `the request body has more than ${limit} ${what} (${key})`);
}

/** Counts one document's fields, depth and list lengths without recursion. */
function documentFields(doc: unknown, settings: Settings): number {
  let fields = 0;
  // The document itself is depth 1, as in the byte scan.
  const stack: Array<[unknown, number]> = [[doc, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth > settings.MAX_DOCUMENT_DEPTH) {
      throw over("levels of nesting", {
        limit: settings.MAX_DOCUMENT_DEPTH,
        key: "MAX_DOCUMENT_DEPTH",
      });
    }
    if (Array.isArray(value)) {
      if (value.length > settings.MAX_LIST_LENGTH) {
        throw over("members in a list", {
          limit: settings.MAX_LIST_LENGTH,
          key: "MAX_LIST_LENGTH",
        });
      }
      for (const member of value) stack.push([member, depth + 1]);
      continue;
    }
    // Dates, ObjectIds and other BSON values are single values; other objects that are not
    // plain (a Map, a class instance) are nothing a client could send, and a store would
    // keep them as they are (the embedded one by reference) or change their shape.
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      if (!singleValue(value)) {
        const kind = (value as { constructor?: { name?: unknown } }).constructor?.name;
        const what = value instanceof Date
          ? "an invalid date"
          : `a value of type ${String(kind || "object")}`;
        throw new ServiceError(
          "bad-request",
          `the request body holds ${what}, which is not a value a client can send`,
        );
      }
      continue;
    }
    const keys = Object.keys(value);
    fields += keys.length;
    if (fields > settings.MAX_DOCUMENT_FIELDS) {
      throw over("fields in a document", {
        limit: settings.MAX_DOCUMENT_FIELDS,
        key: "MAX_DOCUMENT_FIELDS",
      });
    }
    for (const key of keys) stack.push([(value as Record<string, unknown>)[key], depth + 1]);
  }
  return fields;
}

/** A valid date, a byte array or a driver-made BSON value (ObjectId, Decimal128 ...). */
function singleValue(value: object): boolean {
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  if (value instanceof Uint8Array) return true;
  return typeof (value as { _bsontype?: unknown })._bsontype === "string";
}

/**
 * Checks a body (one document, or a list of them for a bulk insert) against the budgets,
 * and that it holds only values a client could send (plus dates and BSON values).
 * @throws ServiceError "too-large" naming the setting that was exceeded, "bad-request" for
 * a value that is neither.
 */
export function checkValueBudget(body: unknown, settings: Settings): void {
  const docs = Array.isArray(body) ? body : [body];
  if (docs.length > settings.BULK_MAX_DOCUMENTS) {
    throw new ServiceError(
      "too-large",
      `at most ${settings.BULK_MAX_DOCUMENTS} documents per request (BULK_MAX_DOCUMENTS)`,
    );
  }
  let total = 0;
  for (const doc of docs) {
    total += documentFields(doc, settings);
    if (total > settings.MAX_BODY_FIELDS) {
      throw over("fields", { limit: settings.MAX_BODY_FIELDS, key: "MAX_BODY_FIELDS" });
    }
  }
}
