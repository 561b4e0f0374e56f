/**
 * The one translation of driver errors into the store's error types, by server code and
 * driver class: a refused query (bad value, unknown operator, `$near` without a 2dsphere
 * index ...) is an `InvalidQueryError` carrying the server's reason; a duplicate key a
 * `DuplicateKeyError` naming the index fields; `maxTimeMS` a `QueryTimeoutError`; network,
 * a write concern the deployment cannot acknowledge a `WriteConcernError` (answered 500: the
 * configuration's fault); network,
 * server-selection and driver time-outs (and any other server failure) a `StoreError`
 * (answered 503, logged by the logged store with its cause); a command the driver cannot
 * encode (`BSONError`) an `InvalidQueryError`.
 */
import {
  BSON,
  MongoClientClosedError,
  MongoError,
  MongoNetworkError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoWriteConcernError,
} from "mongodb";
import {
  DuplicateKeyError,
  InvalidQueryError,
  QueryTimeoutError,
  StoreError,
  WriteConcernError,
} from "../store.ts";

const DUPLICATE_KEY = 11000;
/** Legacy duplicate-key code some servers still report on updates. */
const DUPLICATE_KEY_LEGACY = 11001;

/** The fields of a driver error this module reads; each may be absent. */
export interface DriverErrorFields {
  code?: unknown;
  codeName?: unknown;
  errmsg?: unknown;
  message?: unknown;
  keyPattern?: unknown;
  keyValue?: unknown;
  writeErrors?: DriverErrorFields[];
  err?: DriverErrorFields;
  errorResponse?: DriverErrorFields;
  index?: unknown;
  result?: { insertedCount?: unknown; writeConcernErrors?: unknown; writeConcernError?: unknown };
  writeConcernError?: unknown;
  writeConcernErrors?: unknown;
}

/** `err` read as a driver error (an empty record when it is not an object). */
export function driverFields(err: unknown): DriverErrorFields {
  return typeof err === "object" && err !== null ? err as DriverErrorFields : {};
}

/** The first write error of a bulk error, or the error itself. */
function primaryError(err: unknown): DriverErrorFields {
  const e = driverFields(err);
  return Array.isArray(e.writeErrors) && e.writeErrors.length > 0 ? e.writeErrors[0] : e;
}

/** Whether `err` (or its first write error) is a duplicate key error. */
export function isDuplicateKey(err: unknown): boolean {
  return [driverFields(err).code, primaryError(err).code].some((code) =>
    code === DUPLICATE_KEY || code === DUPLICATE_KEY_LEGACY
  );
}

/**
 * Fields of the violated unique index: from `keyPattern`/`keyValue` when the server sends
 * them, otherwise parsed from the index name in the error message.
 */
export function duplicateFields(err: unknown): string[] {
  const e = driverFields(err);
  const first = primaryError(e);
  const sources = [e, first, first.err, e.errorResponse];
  for (const src of sources) {
    const pattern = src?.keyPattern ?? src?.keyValue;
    if (pattern && typeof pattern === "object") {
      const keys = Object.keys(pattern);
      if (keys.length > 0) return keys;
    }
  }
  const message = String(first.errmsg ?? e.errmsg ?? e.message ?? "");
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
 * Server codes of a query, update or pipeline the server refuses as malformed: BadValue (an
 * unknown operator, a bad argument), FailedToParse, TypeMismatch, IndexNotFound (`$text`
 * without a text index), InvalidPipelineOperator, ConversionFailure,
 * NoQueryExecutionPlans (`$near` without a 2dsphere index), NotImplemented (a query
 * feature the server lacks), Location codes of the pipeline and projection parsers.
 */
const BAD_QUERY_CODES = new Set([
  2,
  9,
  14,
  27,
  168,
  238,
  241,
  291,
  15974,
  16410,
  17287,
  31249,
  31250,
  31253,
  31254,
  40323,
  40324,
  40352,
]);
/** The same refusals by code name (servers newer than this table send new codes). */
const BAD_QUERY_NAMES = new Set([
  "BadValue",
  "FailedToParse",
  "TypeMismatch",
  "IndexNotFound",
  "InvalidPipelineOperator",
  "ConversionFailure",
  "NoQueryExecutionPlans",
  "Location16410",
  // A server that does not implement a query feature refuses the request for good: a
  // client's mistake to correct, not an outage to retry (compatible servers answer so).
  "NotImplemented",
]);
/** MaxTimeMSExpired: the query ran past its `maxTimeMS`. */
const MAX_TIME_EXPIRED = 50;
/** The longest server reason quoted to a client. */
const MAX_REASON = 300;

/**
 * Codes of a write concern the deployment cannot satisfy: UnknownReplWriteConcern (an
 * unknown tag set), UnsatisfiableWriteConcern (more nodes than there are).
 */
const WRITE_CONCERN_CODES = new Set([79, 100]);
const WRITE_CONCERN_NAMES = new Set(["UnknownReplWriteConcern", "UnsatisfiableWriteConcern"]);

/** Whether `err` reports a write concern error (of a single write or a bulk write). */
export function isWriteConcernError(err: unknown): boolean {
  if (err instanceof MongoWriteConcernError) return true;
  const e = driverFields(err);
  const listed = (value: unknown) =>
    Array.isArray(value) ? value.length > 0 : value !== undefined && value !== null;
  if (
    listed(e.writeConcernError) || listed(e.writeConcernErrors) ||
    listed(e.result?.writeConcernError) || listed(e.result?.writeConcernErrors) ||
    listed(e.errorResponse?.writeConcernError)
  ) return true;
  return WRITE_CONCERN_CODES.has(Number(e.code)) || WRITE_CONCERN_NAMES.has(String(e.codeName));
}

/** What a driver error means for the service. */
export type MongoErrorKind =
  | "duplicate-key"
  | "write-concern"
  | "bad-query"
  | "timeout"
  | "unavailable"
  | "other";

/** Classifies a driver error by its class and server code. */
export function classifyError(err: unknown): MongoErrorKind {
  if (isDuplicateKey(err)) return "duplicate-key";
  // Before the bad-query codes: a server may report an unsatisfiable `w` as a BadValue
  // inside its write concern error (the client sent no bad query).
  if (isWriteConcernError(err)) return "write-concern";
  if (
    err instanceof MongoNetworkError || err instanceof MongoServerSelectionError ||
    err instanceof MongoOperationTimeoutError || err instanceof MongoTopologyClosedError ||
    err instanceof MongoServerClosedError || err instanceof MongoClientClosedError
  ) return "unavailable";
  const e = driverFields(err);
  const code = Number(e.code);
  if (code === MAX_TIME_EXPIRED) return "timeout";
  if (BAD_QUERY_CODES.has(code) || BAD_QUERY_NAMES.has(String(e.codeName))) return "bad-query";
  return "other";
}

/** The server's reason for refusing a query, fit to show a client: scrubbed and bounded. */
export function serverReason(err: unknown, secret?: string): string {
  const e = driverFields(err);
  let text = String(e.errmsg ?? e.message ?? "").replace(/\s+/g, " ").trim();
  if (secret) text = text.split(secret).join("***");
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}...` : text;
}

/**
 * Maps a driver error to the store's error types (see the module comment); errors that
 * are not the driver's pass through. `secret` (the password) is scrubbed from messages.
 */
export function translateError(err: unknown, secret?: string): unknown {
  if (
    err instanceof DuplicateKeyError || err instanceof StoreError ||
    err instanceof QueryTimeoutError || err instanceof InvalidQueryError
  ) return err;
  const kind = classifyError(err);
  if (kind === "duplicate-key") {
    const fields = duplicateFields(err);
    const suffix = fields.length > 0 ? ` on ${fields.join(", ")}` : "";
    return new DuplicateKeyError(fields, `duplicate key${suffix}`);
  }
  if (BSON.BSONError.isBSONError(err)) {
    // The driver could not encode the command: what the request carried cannot be stored or
    // asked for (field names are checked before they get here; this is the last guard).
    const reason = serverReason(err, secret);
    return new InvalidQueryError(`MongoDB: cannot encode the request: ${reason}`, {
      cause: err,
      reason,
    });
  }
  if (!(err instanceof MongoError)) return err;
  const reason = serverReason(err, secret);
  switch (kind) {
    case "timeout":
      return new QueryTimeoutError("MongoDB: query exceeded maxTimeMS", { cause: err });
    case "bad-query":
      return new InvalidQueryError(`MongoDB: ${reason}`, { cause: err, reason });
    case "write-concern":
      return new WriteConcernError(`MongoDB: write concern error: ${reason}`, { cause: err });
    default:
      return new StoreError(`MongoDB: ${reason}`, { cause: err });
  }
}
