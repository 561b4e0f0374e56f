/**
 * Checks raw settings against the known keys: applies defaults, maps Eve's names to ours,
 * and collects every problem with its path (unknown keys name the closest known key).
 */
import { isPlainObject } from "../util/plain.ts";
import {
  ALIASES,
  type Kind,
  KNOWN_KEYS,
  KNOWN_RESOURCE_KEYS,
  METHODS,
  RESOURCE_ALIASES,
  type Settings,
} from "./keys.ts";

export type { ResourceOptions, Settings } from "./keys.ts";

/** The request/response budgets : positive integers. */
const BUDGET_KEYS = [
  "MAX_DOCUMENT_FIELDS",
  "MAX_BODY_FIELDS",
  "MAX_LIST_LENGTH",
  "MAX_DOCUMENT_DEPTH",
  "MAX_MULTIPART_PARTS",
  "MAX_EMBEDDED_DOCUMENTS",
  "MAX_RESPONSE_MEDIA_BYTES",
];

/** Raised when settings are wrong; lists every problem, each with its path. */
export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid settings:\n  - ${problems.join("\n  - ")}`);
    this.name = "SettingsError";
  }
}

/** Fields a page's answer sets otherwise: HEADER_TOTAL_COUNT may not name one of them. */
const RESERVED_FIELDS: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "cache-control",
  "expires",
  "vary",
  "etag",
  "last-modified",
  "date",
  "connection",
  "set-cookie",
  "x-padding",
]);

/** The MongoDB driver's authentication mechanisms (`authMechanism`). */
const AUTH_MECHANISMS = [
  "DEFAULT",
  "SCRAM-SHA-1",
  "SCRAM-SHA-256",
  "MONGODB-X509",
  "MONGODB-AWS",
  "MONGODB-OIDC",
  "GSSAPI",
  "PLAIN",
];

/** Levenshtein distance, for "did you mean" suggestions. */
export function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
    }
    prev = row;
  }
  return prev[b.length];
}

/** The known key closest to `key` (case-insensitive). */
export function closest(key: string, known: Iterable<string>): string {
  let best = "";
  let bestScore = Infinity;
  for (const candidate of known) {
    const score = distance(key.toUpperCase(), candidate.toUpperCase());
    if (score < bestScore) [best, bestScore] = [candidate, score];
  }
  return best;
}

/** Returns a problem message when `value` is not of `kind`, else null. */
export function checkKind(value: unknown, kind: Kind): string | null {
  const isStrings = Array.isArray(value) && value.every((v) => typeof v === "string");
  switch (kind) {
    case "bool":
      return typeof value === "boolean" ? null : "must be true or false";
    case "int":
      return Number.isInteger(value) ? null : "must be an integer";
    case "string":
      return typeof value === "string" ? null : "must be a string";
    case "string?":
      return value === null || typeof value === "string" ? null : "must be a string or null";
    case "strings":
      return isStrings ? null : "must be a list of strings";
    case "strings?":
      return value === null || isStrings ? null : "must be a list of strings or null";
    case "methods": {
      if (!isStrings) return "must be a list of HTTP methods";
      const bad = (value as string[]).filter((m) => !METHODS.includes(m.toUpperCase()));
      return bad.length ? `unknown method(s) ${bad.join(", ")}` : null;
    }
    case "object":
      return isPlainObject(value) ? null : "must be an object";
    case "object?":
      return value === null || isPlainObject(value) ? null : "must be an object or null";
    case "any":
      return null;
  }
}

/**
 * Checks global keys and the shape of each DOMAIN resource (its keys and their kinds).
 * Deeper resource checks (urls, schemas) happen when the domain is built.
 */
export function checkSettings(raw: Record<string, unknown>): {
  settings: Settings;
  problems: string[];
  warnings: string[];
} {
  const problems: string[] = [];
  const warnings: string[] = [];
  const out: Record<string, unknown> = {};
  const known = [...Object.keys(KNOWN_KEYS), ...Object.keys(ALIASES)];
  for (const [rawKey, value] of Object.entries(raw)) {
    const key = ALIASES[rawKey] ?? rawKey;
    const spec = KNOWN_KEYS[key];
    if (!spec) {
      problems.push(`${rawKey}: unknown setting (did you mean ${closest(rawKey, known)}?)`);
      continue;
    }
    if (key in out && rawKey !== key) {
      problems.push(`${rawKey}: same setting as ${key}, given twice`);
      continue;
    }
    const problem = checkKind(value, spec.kind);
    if (problem) problems.push(`${rawKey}: ${problem}`);
    else if (spec.refused) problems.push(`${rawKey}: ${spec.refused}`);
    else {
      if (spec.ignored) {
        const why = typeof spec.ignored === "string" ? ` (${spec.ignored})` : "";
        warnings.push(`${rawKey}: accepted for Eve compatibility, has no effect${why}`);
      }
      out[key] = value;
    }
  }
  for (const [key, spec] of Object.entries(KNOWN_KEYS)) {
    if (!(key in out)) out[key] = structuredClone(spec.default);
  }
  if (out.ITEM_LOOKUP_FIELD === null) out.ITEM_LOOKUP_FIELD = out.ID_FIELD;
  out.RENDERERS = normalizeRenderers(out.RENDERERS as string[], problems);
  for (const key of ["RESOURCE_METHODS", "ITEM_METHODS", "OPLOG_METHODS", "OPLOG_CHANGE_METHODS"]) {
    out[key] = (out[key] as string[]).map((m) => m.toUpperCase());
  }
  if (!["auto", "embedded", "mongo"].includes(out.STORE as string)) {
    problems.push(`STORE: must be "auto", "embedded" or "mongo"`);
  }
  for (
    const key of [
      "PAGINATION_DEFAULT",
      "PAGINATION_LIMIT",
      "MAX_BODY_SIZE",
      "BULK_MAX_DOCUMENTS",
      ...BUDGET_KEYS,
    ]
  ) {
    if ((out[key] as number) < 1) problems.push(`${key}: must be at least 1`);
  }
  // Hostile requests: limits must be positive; QUERY_TIMEOUT_MS 0 turns it off.
  for (
    const key of [
      "QUERY_MAX_RANGE",
      "QUERY_EXPR_MAX_ELEMENTS",
    ]
  ) {
    if ((out[key] as number) < 1) problems.push(`${key}: must be at least 1`);
  }
  for (
    const key of ["QUERY_TIMEOUT_MS", "MIN_REQUEST_BODY_RATE", "MIN_REQUEST_BODY_RATE_GRACE_MS"]
  ) {
    if ((out[key] as number) < 0) problems.push(`${key}: must be 0 or more`);
  }
  // Past 512 bytes, or the head it pads would fit Deno's first buffer; within a reverse proxy's
  // usual 4 KiB for an answer's head (nginx's proxy_buffer_size), with room for its fields.
  const writeBuffer = out.WRITE_BUFFER_BYTES as number;
  if (writeBuffer !== 0 && (writeBuffer < 512 || writeBuffer > 3072)) {
    problems.push("WRITE_BUFFER_BYTES: must be 0 (off) or from 512 to 3072");
  }
  // A field name (RFC 9110 token), and none the service sets itself on a page.
  const totalField = out.HEADER_TOTAL_COUNT as string;
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(totalField)) {
    problems.push(`HEADER_TOTAL_COUNT: "${totalField}" is not a header field name`);
  } else if (RESERVED_FIELDS.has(totalField.toLowerCase())) {
    problems.push(`HEADER_TOTAL_COUNT: "${totalField}" is a field the service sets itself`);
  }
  const mechanism = out.MONGO_AUTH_MECHANISM;
  if (typeof mechanism === "string" && !AUTH_MECHANISMS.includes(mechanism)) {
    problems.push(
      `MONGO_AUTH_MECHANISM: unknown mechanism "${mechanism}" ` +
        `(did you mean ${closest(mechanism, AUTH_MECHANISMS)}?)`,
    );
  }
  // A short key could be guessed together with a hidden value (see services/etag.ts).
  if (typeof out.ETAG_SECRET === "string" && out.ETAG_SECRET.length < 16) {
    problems.push("ETAG_SECRET: must be at least 16 characters (or unset: a generated key)");
  }
  if ((out.TLS_CERT_FILE === null) !== (out.TLS_KEY_FILE === null)) {
    problems.push("TLS_CERT_FILE, TLS_KEY_FILE: give both (TLS) or neither");
  }
  // TCP ports: PORT 0 asks the system for a free one; a database port is a real one.
  const port = out.PORT as number;
  if (port < 0 || port > 65535) {
    problems.push(`PORT: ${port} is not a TCP port (0 to 65535; 0 picks a free one)`);
  }
  const dbPort = out.DB_PORT as number;
  if (dbPort < 1 || dbPort > 65535) {
    problems.push(`DB_PORT: ${dbPort} is not a TCP port (1 to 65535)`);
  }
  if (![400, 409, 422].includes(out.VALIDATION_ERROR_STATUS as number)) {
    const status = out.VALIDATION_ERROR_STATUS as number;
    if (status < 400 || status > 499) {
      problems.push("VALIDATION_ERROR_STATUS: must be a 4xx status");
    }
  }
  if (isPlainObject(out.DOMAIN)) {
    out.DOMAIN = checkDomainShape(out.DOMAIN, problems, warnings);
  }
  // Every known key is now present and of its kind (the problems say where not).
  return { settings: out as unknown as Settings, problems, warnings };
}

/** Accepts our renderer names and Eve's class paths; at least one must remain. */
function normalizeRenderers(list: string[], problems: string[]): string[] {
  const names = list.map((r) => {
    const name = r.toLowerCase();
    if (name === "json" || name.endsWith("jsonrenderer")) return "json";
    if (name === "xml" || name.endsWith("xmlrenderer")) return "xml";
    problems.push(`RENDERERS: unknown renderer "${r}" (known: json, xml)`);
    return name;
  });
  if (list.length === 0) problems.push("RENDERERS: at least one renderer must be enabled");
  return [...new Set(names)];
}

function checkDomainShape(
  domain: Record<string, unknown>,
  problems: string[],
  warnings: string[],
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  const known = [...Object.keys(KNOWN_RESOURCE_KEYS), ...Object.keys(RESOURCE_ALIASES)];
  for (const [name, definition] of Object.entries(domain)) {
    const path = `DOMAIN.${name}`;
    if (!/^[A-Za-z0-9_-]+$/.test(name)) {
      problems.push(`${path}: resource names may hold letters, digits, "_" and "-" only`);
    }
    if (!isPlainObject(definition)) {
      problems.push(`${path}: must be an object`);
      continue;
    }
    const resource: Record<string, unknown> = {};
    for (const [rawKey, value] of Object.entries(definition)) {
      const key = RESOURCE_ALIASES[rawKey] ?? rawKey;
      const spec = KNOWN_RESOURCE_KEYS[key];
      if (!spec) {
        problems.push(
          `${path}.${rawKey}: unknown resource key (did you mean ${closest(rawKey, known)}?)`,
        );
        continue;
      }
      const problem = checkKind(value, spec.kind);
      if (problem) problems.push(`${path}.${rawKey}: ${problem}`);
      else if (spec.refused) problems.push(`${path}.${rawKey}: ${spec.refused}`);
      else if (spec.ignored) {
        warnings.push(
          `${path}.${rawKey}: accepted for Eve compatibility, has no effect (${spec.ignored})`,
        );
      } else resource[key] = value;
    }
    out[name] = resource;
  }
  return out;
}
