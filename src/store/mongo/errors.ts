/**
 * Translation of driver errors into the store's error types.
 */
import { MongoError } from "mongodb";
import { DuplicateKeyError, InvalidQueryError, QueryTimeoutError, StoreError } from "../store.ts";

const DUPLICATE_KEY = 11000;
/** Legacy duplicate-key code some servers still report on updates. */
const DUPLICATE_KEY_LEGACY = 11001;

/** The first write error of a bulk error, or the error itself. */
function primaryError(err: any): any {
  return Array.isArray(err?.writeErrors) && err.writeErrors.length > 0 ? err.writeErrors[0] : err;
}

/** Whether `err` (or its first write error) is a duplicate key error. */
export function isDuplicateKey(err: unknown): boolean {
  return [(err as any)?.code, primaryError(err)?.code].some((code) =>
    code === DUPLICATE_KEY || code === DUPLICATE_KEY_LEGACY
  );
}

/**
 * Fields of the violated unique index: from `keyPattern`/`keyValue` when the server sends
 * them, otherwise parsed from the index name in the error message.
 */
export function duplicateFields(err: unknown): string[] {
  const e = err as any;
  const sources = [e, primaryError(e), primaryError(e)?.err, e?.errorResponse];
  for (const src of sources) {
    const pattern = src?.keyPattern ?? src?.keyValue;
    if (pattern && typeof pattern === "object") {
      const keys = Object.keys(pattern);
      if (keys.length > 0) return keys;
    }
  }
  const message = String(primaryError(e)?.errmsg ?? e?.errmsg ?? e?.message ?? "");
  return fieldsFromMessage(message);
}

/**
 * Parses `... index: email_1 dup key: { ... }`. A generated index name is
 * `field_direction[_field_direction...]`; a custom name yields the dup key's field names.
 */
export function fieldsFromMessage(message: string): string[] {
  const index = /index:\s+(\S+)\s+dup key/.exec(message)?.[1];
  if (index === "_id_") return ["_id"];
  if (index) {
    const fields = fieldsFromIndexName(index);
    if (fields.length > 0) return fields;
  }
  const dupKey = /dup key:\s*\{\s*([^}]*)\}/.exec(message)?.[1];
  if (!dupKey) return [];
  const fields: string[] = [];
  for (const m of dupKey.matchAll(/(?:^|,\s*)"?([\w.$]+)"?\s*:/g)) fields.push(m[1]);
  return fields;
}

function fieldsFromIndexName(name: string): string[] {
  const fields: string[] = [];
  const part = /^(.+?)_(-1|1|2dsphere|2d|text|hashed)(?:_|$)/;
  let rest = name;
  while (rest.length > 0) {
    const m = part.exec(rest);
    if (!m) return [];
    fields.push(m[1]);
    rest = rest.slice(m[0].length);
  }
  return fields;
}

/**
 * Maps a driver error to `DuplicateKeyError` or `StoreError`; other errors pass through.
 * `secret` (the password) is scrubbed from messages.
 */
/**
 * Server codes for malformed queries: BadValue, FailedToParse, TypeMismatch, bad pipelines,
 * ConversionFailure (an expression converting a client value).
 */
const BAD_QUERY_CODES = new Set([2, 9, 14, 168, 241, 40323, 40324]);
/** MaxTimeMSExpired: the query ran past its `maxTimeMS`. */
const MAX_TIME_EXPIRED = 50;

export function translateError(err: unknown, secret?: string): unknown {
  if (
    err instanceof DuplicateKeyError || err instanceof StoreError ||
    err instanceof QueryTimeoutError
  ) return err;
  if (isDuplicateKey(err)) {
    const fields = duplicateFields(err);
    const suffix = fields.length > 0 ? ` on ${fields.join(", ")}` : "";
    return new DuplicateKeyError(fields, `duplicate key${suffix}`);
  }
  if (err instanceof MongoError) {
    let message = err.message;
    if (secret) message = message.split(secret).join("***");
    if (Number(err.code) === MAX_TIME_EXPIRED) {
      return new QueryTimeoutError("MongoDB: query exceeded maxTimeMS", { cause: err });
    }
    if (BAD_QUERY_CODES.has(Number(err.code))) {
      return new InvalidQueryError(`MongoDB: ${message}`, { cause: err });
    }
    return new StoreError(`MongoDB: ${message}`, { cause: err });
  }
  return err;
}
