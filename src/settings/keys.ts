/**
 * Every known global setting: its kind and default. Eve's own names are accepted too
 * (see ALIASES), so an Eve user's settings carry over as they are. The tables are typed
 * (`satisfies`), and the checked settings' type is mapped from them (`Settings`), so a
 * misspelt `settings.X` read fails `deno check`.
 */

/** How a setting's value is checked. */
export type Kind =
  | "bool"
  | "int"
  | "string"
  | "string?"
  | "strings"
  | "strings?"
  | "methods"
  | "object"
  | "object?"
  | "any";

/** The value a setting of each kind holds once checked. */
export interface KindValues {
  bool: boolean;
  int: number;
  string: string;
  "string?": string | null;
  strings: string[];
  "strings?": string[] | null;
  methods: string[];
  object: Record<string, unknown>;
  "object?": Record<string, unknown> | null;
  any: unknown;
}

export interface KeySpec<K extends Kind = Kind> {
  kind: K;
  default: KindValues[K];
  /**
   * Known to Eve but without effect here: accepted with a start-up warning (the text, when
   * given, says why).
   */
  ignored?: boolean | string;
  /** Known but refused: serving without it would be unsafe (e.g. authentication). */
  refused?: string;
}

/** A per-resource key: its kind and the global setting it overrides, if any. */
export interface ResourceKeySpec<K extends Kind = Kind, G extends string = string> {
  kind: K;
  global?: G;
  refused?: string;
  /** Known to Eve but without effect here: accepted with a start-up warning saying why. */
  ignored?: string;
}

/** The refusal text of a former server setting that the reverse proxy's `directive` replaced. */
function replacedByProxy(directive: string): string {
  return "no longer exists: the service serves with Deno.serve, and connection limits are the " +
    `reverse proxy's job (deploy/nginx.conf: ${directive}; docs/deployment.md)`;
}

const ALL_METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"];
const k = <K extends Kind>(
  kind: K,
  value: KindValues[K],
  extra: Pick<KeySpec, "ignored" | "refused"> = {},
): KeySpec<K> => ({ kind, default: value, ...extra });

/** A resource key of `kind` with no global counterpart. */
const own = <K extends Kind>(kind: K): { kind: K } => ({ kind });
/** A resource key of `kind` that overrides the global setting `global`. */
const overrides = <K extends Kind, G extends keyof typeof GLOBAL_KEYS>(
  kind: K,
  global: G,
): { kind: K; global: G } => ({ kind, global });

/** Global settings, by our (spec) names. */
export const GLOBAL_KEYS = {
  DOMAIN: k("object", {}),
  // Store and server
  STORE: k("string", "auto"),
  DATA_DIR: k("string", ".data"),
  MONGO_URI: k("string?", null),
  DB_HOST: k("string", "localhost"),
  DB_PORT: k("int", 27017),
  DB_USERNAME: k("string?", null),
  DB_PASSWORD: k("string?", null),
  DB_AUTH_SOURCE: k("string?", null),
  MONGO_AUTH_MECHANISM: k("string?", null),
  MONGO_AUTH_MECHANISM_PROPERTIES: k("object?", null),
  DB_DBNAME: k("string", "eve"),
  MONGO_OPTIONS: k("object", {}),
  HOST: k("string", "127.0.0.1"),
  PORT: k("int", 5000),
  URL_PREFIX: k("string", ""),
  API_VERSION: k("string", ""),
  // Limits
  MAX_BODY_SIZE: k("int", 16 * 1024 * 1024),
  BULK_MAX_DOCUMENTS: k("int", 1000),
  // Methods
  RESOURCE_METHODS: k("methods", ["GET"]),
  ITEM_METHODS: k("methods", ["GET"]),
  ALLOW_OVERRIDE_HTTP_METHOD: k("bool", true),
  BULK_ENABLED: k("bool", true),
  UPSERT_ON_PUT: k("bool", true),
  // Validation and writes
  ALLOW_UNKNOWN: k("bool", false),
  VALIDATION_ERROR_STATUS: k("int", 422),
  NORMALIZE_ON_PATCH: k("bool", true),
  MERGE_NESTED_DOCUMENTS: k("bool", true),
  ALLOW_CUSTOM_FIELDS_IN_GEOJSON: k("bool", false),
  // Reading
  ALLOWED_FILTERS: k("strings", ["*"]),
  VALIDATE_FILTERING: k("bool", false),
  DB_QUERY_BLACKLIST: k("strings", ["$where", "$regex"]),
  MONGO_QUERY_WHITELIST: k("strings", []),
  SORTING: k("bool", true),
  PAGINATION: k("bool", true),
  PAGINATION_DEFAULT: k("int", 25),
  PAGINATION_LIMIT: k("int", 50),
  OPTIMIZE_PAGINATION_FOR_SPEED: k("bool", false),
  HEADER_TOTAL_COUNT: k("string", "X-Total-Count"),
  PROJECTION: k("bool", true),
  EMBEDDING: k("bool", true),
  HATEOAS: k("bool", true),
  BANDWIDTH_SAVER: k("bool", true),
  QUERY_WHERE: k("string", "where"),
  QUERY_SORT: k("string", "sort"),
  QUERY_PAGE: k("string", "page"),
  QUERY_MAX_RESULTS: k("string", "max_results"),
  QUERY_EMBEDDED: k("string", "embedded"),
  QUERY_PROJECTION: k("string", "projection"),
  QUERY_AGGREGATION: k("string", "aggregate"),
  DATE_FORMAT: k("string", "%a, %d %b %Y %H:%M:%S GMT"),
  // Concurrency and caching
  IF_MATCH: k("bool", true),
  ENFORCE_IF_MATCH: k("bool", true),
  CACHE_CONTROL: k("string", ""),
  CACHE_EXPIRES: k("int", 0),
  // Rendering
  RENDERERS: k("strings", ["json", "xml"]),
  JSONP_ARGUMENT: k("string?", null),
  // Key and envelope field names
  ID_FIELD: k("string", "_id"),
  DATE_CREATED: k("string", "_created"),
  DATE_UPDATED: k("string", "_updated"),
  ETAG: k("string", "_etag"),
  /**
   * The key of the ETags computed for documents written outside the API (see
   * services/etag.ts); unset: a random key kept in the database, shared by every instance.
   */
  ETAG_SECRET: k("string?", null),
  ITEM_LOOKUP: k("bool", true),
  ITEM_LOOKUP_FIELD: k("string?", null),
  ITEM_URL: k("string", 'regex("[a-f0-9]{24}")'),
  STATUS: k("string", "_status"),
  STATUS_OK: k("string", "OK"),
  STATUS_ERR: k("string", "ERR"),
  ISSUES: k("string", "_issues"),
  ERROR: k("string", "_error"),
  ITEMS: k("string", "_items"),
  LINKS: k("string", "_links"),
  META: k("string", "_meta"),
  // Soft delete and versioning
  SOFT_DELETE: k("bool", false),
  INTERNAL_RESOURCE: k("bool", false),
  DELETED: k("string", "_deleted"),
  SHOW_DELETED_PARAM: k("string", "show_deleted"),
  VERSIONING: k("bool", false),
  VERSION: k("string", "_version"),
  VERSIONS: k("string", "_versions"),
  VERSION_PARAM: k("string", "version"),
  LATEST_VERSION: k("string", "_latest_version"),
  VERSION_ID_SUFFIX: k("string", "_document"),
  VERSION_DIFF_INCLUDE: k("strings", []),
  // Cross-origin
  X_DOMAINS: k("any", null),
  X_DOMAINS_RE: k("any", null),
  X_HEADERS: k("any", null),
  X_EXPOSE_HEADERS: k("any", null),
  X_ALLOW_CREDENTIALS: k("any", null),
  X_MAX_AGE: k("int", 21600),
  // Other endpoints
  SCHEMA_ENDPOINT: k("string?", null),
  OPLOG: k("bool", false),
  OPLOG_NAME: k("string", "oplog"),
  OPLOG_METHODS: k("methods", [...ALL_METHODS.slice(1)]),
  OPLOG_ENDPOINT: k("string?", null),
  OPLOG_AUDIT: k("bool", true),
  OPLOG_CHANGE_METHODS: k("methods", ["PATCH", "PUT", "DELETE"]),
  OPLOG_RETURN_EXTRA_FIELD: k("bool", false),
  // Media
  EXTENDED_MEDIA_INFO: k("strings", []),
  RETURN_MEDIA_AS_BASE64_STRING: k("bool", true),
  RETURN_MEDIA_AS_URL: k("bool", false),
  MEDIA_BASE_URL: k("string?", null),
  // Absolute URLs (Location, media) start with this; without it they are path-absolute.
  PUBLIC_BASE_URL: k("string?", null),
  MEDIA_ENDPOINT: k("string", "media"),
  MEDIA_URL: k("string", 'regex("[a-f0-9]{24}")'),
  MULTIPART_FORM_FIELDS_AS_JSON: k("bool", false),
  AUTO_COLLAPSE_MULTI_KEYS: k("bool", false),
  // Ours: the largest file of a multipart body (413 past it, nothing stored); 0: MAX_BODY_SIZE.
  MAX_FILE_SIZE: k("int", 0),
  AUTO_CREATE_LISTS: k("bool", false),
  // Budgets: no single request may exhaust memory or block the event loop
  MAX_DOCUMENT_FIELDS: k("int", 10_000),
  MAX_BODY_FIELDS: k("int", 100_000),
  MAX_LIST_LENGTH: k("int", 10_000),
  MAX_DOCUMENT_DEPTH: k("int", 32),
  MAX_MULTIPART_PARTS: k("int", 100),
  MAX_EMBEDDED_DOCUMENTS: k("int", 1_000),
  MAX_RESPONSE_MEDIA_BYTES: k("int", 32 * 1024 * 1024),
  // Rate limiting (needs Redis)
  RATE_LIMIT_GET: k("any", null),
  RATE_LIMIT_POST: k("any", null),
  RATE_LIMIT_PATCH: k("any", null),
  RATE_LIMIT_DELETE: k("any", null),
  REDIS_URL: k("string?", null),
  // Known to Eve, no effect here (docs/migrating-from-eve.md)
  DEBUG: k("bool", false),
  INFO: k("string?", null),
  SERVER_NAME: k("string?", null, { ignored: true }),
  URL_PROTOCOL: k("string", "", { ignored: true }),
  JSON_SORT_KEYS: k("bool", false),
  JSON_REQUEST_CONTENT_TYPES: k("strings", ["application/json"]),
  MONGO_WRITE_CONCERN: k("object", { w: 1 }),
  MONGO_CONNECT: k("bool", true, { ignored: true }),
  STANDARD_ERRORS: k("any", null, { ignored: true }),
  VALIDATION_ERROR_AS_LIST: k("bool", false),
  TRANSPARENT_SCHEMA_RULES: k("bool", false, { ignored: true }),
  NORMALIZE_DOTTED_FIELDS: k("bool", true),
  ITEM_CACHE_CONTROL: k("string", "", {
    ignored: "Eve defines it but never sends it; use cache_control / CACHE_CONTROL",
  }),
  EXTRA_RESPONSE_FIELDS: k("strings", []),
  QUERY_OBJECTID_AS_STRING: k("bool", false),
  // Rate limiting and cross-origin access (docs/cors-and-rate-limits.md)
  RATE_LIMIT_PUT: k("any", null),
  RATE_LIMIT_KEY_PREFIX: k("string", "ratelimit:"),
  RATE_LIMIT_REDIS_TIMEOUT: k("int", 500),
  RATE_LIMIT_ON_REDIS_ERROR: k("string", "allow"),
  TRUSTED_PROXIES: k("strings", []),
  // Hostile requests: query sandbox, query time bound, slow bodies
  QUERY_MAX_RANGE: k("int", 1000),
  QUERY_EXPR_MAX_ELEMENTS: k("int", 100_000),
  QUERY_TIMEOUT_MS: k("int", 10_000),
  // Request bodies slower than this (bytes per second of waiting, after the grace period)
  // are answered 408 and their connection closed; 0: off (src/util/body_rate.ts).
  MIN_REQUEST_BODY_RATE: k("int", 240),
  MIN_REQUEST_BODY_RATE_GRACE_MS: k("int", 5_000),
  // TLS straight from the service (HTTP/2 through ALPN): PEM files, both or neither.
  TLS_CERT_FILE: k("string?", null),
  TLS_KEY_FILE: k("string?", null),
  // The former HTTP/1.1 server's settings: connection defences are the reverse proxy's job.
  SERVER_HEADERS_TIMEOUT_MS: k("any", null, { refused: replacedByProxy("client_header_timeout") }),
  SERVER_IDLE_TIMEOUT_MS: k("any", null, {
    refused: replacedByProxy("keepalive_timeout and client_body_timeout") +
      "; slow request bodies are cut by MIN_REQUEST_BODY_RATE",
  }),
  SERVER_MAX_CONNECTIONS: k("any", null, {
    refused: replacedByProxy("limit_conn (per client) and worker_connections"),
  }),
  SERVER_FRONT: k("any", null, {
    refused: "no longer exists: the service always serves with Deno.serve; put the reverse " +
      "proxy of deploy/nginx.conf in front of it (docs/deployment.md)",
  }),
  // Authentication, roles and user-restricted access (src/auth/, docs/authentication.md)
  PUBLIC_METHODS: k("methods", []),
  PUBLIC_ITEM_METHODS: k("methods", []),
  ALLOWED_ROLES: k("strings", []),
  ALLOWED_READ_ROLES: k("strings", []),
  ALLOWED_WRITE_ROLES: k("strings", []),
  ALLOWED_ITEM_ROLES: k("strings", []),
  ALLOWED_ITEM_READ_ROLES: k("strings", []),
  ALLOWED_ITEM_WRITE_ROLES: k("strings", []),
  AUTH_FIELD: k("string?", null),
  AUTH_SCHEMES: k("strings", []),
  AUTH_REALM: k("string", "api"),
  AUTH_ACCOUNTS: k("object?", null),
  AUTH_USERS: k("any", []),
  AUTH_JWT: k("object?", null),
  AUTH_CACHE_SECONDS: k("int", 60),
  AUTH_HMAC_MAX_SKEW: k("int", 300),
  // Ours: answers at least this long are compressed (br/gzip/deflate) when accepted; 0: off.
  COMPRESS_MIN_BYTES: k("int", 1024),
  // Ours: the padding that grows Deno's write buffer of a keep-alive connection
  // (src/http/write_buffer.ts; docs/deployment.md); 0: off.
  WRITE_BUFFER_BYTES: k("int", 2048),
  // Probes for orchestrators (docs/configuration.md)
  HEALTH_PATH: k("string", "/health"),
  READY_PATH: k("string", "/ready"),
  READY_TIMEOUT_MS: k("int", 2000),
  // API description and docs page (src/openapi/; docs/api-description.md):
  // a path under the API prefix, or false / null for none. Checked in src/openapi/config.ts.
  OPENAPI_PATH: k("any", "/openapi.json"),
  DOCS_PATH: k("any", "/docs"),
  // Change feed (docs/oplog-and-change-feed.md): GET /<resource>/<CHANGES_ENDPOINT> as Server-Sent Events
  CHANGES: k("bool", false),
  CHANGES_ENDPOINT: k("string", "_changes"),
  CHANGES_DOCUMENTS: k("bool", true),
  CHANGES_RETENTION: k("int", 1000),
  CHANGES_RETENTION_SECONDS: k("int", 300),
  CHANGES_HEARTBEAT_MS: k("int", 15_000),
  CHANGES_QUEUE_LIMIT: k("int", 256),
  CHANGES_MAX_CONNECTIONS: k("int", 100),
  CHANGES_SOURCE: k("string", "auto"),
  // Prometheus metrics (docs/configuration.md, "Metrics"): off by default; METRICS_TOKEN protects the path.
  METRICS: k("bool", false),
  METRICS_PATH: k("string", "/metrics"),
  METRICS_TOKEN: k("string?", null),
} satisfies Record<string, KeySpec>;

/** The global key table, looked up by a name read at run time (a settings file's key). */
export const KNOWN_KEYS: Readonly<Record<string, KeySpec>> = GLOBAL_KEYS;

/** Eve's names for settings that we call otherwise. */
export const ALIASES: Record<string, string> = {
  MONGO_HOST: "DB_HOST",
  MONGO_PORT: "DB_PORT",
  MONGO_USERNAME: "DB_USERNAME",
  MONGO_PASSWORD: "DB_PASSWORD",
  MONGO_AUTH_SOURCE: "DB_AUTH_SOURCE",
  MONGO_DBNAME: "DB_DBNAME",
  MONGO_QUERY_BLACKLIST: "DB_QUERY_BLACKLIST",
  VALIDATE_FILTERS: "VALIDATE_FILTERING",
  LAST_UPDATED: "DATE_UPDATED",
};

/** Per-resource keys (lowercase) and the global each one overrides, if any. */
export const RESOURCE_KEYS = {
  url: own("string"),
  schema: own("object"),
  datasource: own("object"),
  item_title: own("string"),
  resource_title: own("string"),
  additional_lookup: own("object"),
  resource_methods: overrides("methods", "RESOURCE_METHODS"),
  item_methods: overrides("methods", "ITEM_METHODS"),
  cache_control: overrides("string", "CACHE_CONTROL"),
  cache_expires: overrides("int", "CACHE_EXPIRES"),
  allow_unknown: overrides("bool", "ALLOW_UNKNOWN"),
  normalize_on_patch: overrides("bool", "NORMALIZE_ON_PATCH"),
  merge_nested_documents: overrides("bool", "MERGE_NESTED_DOCUMENTS"),
  sorting: overrides("bool", "SORTING"),
  default_sort: own("any"),
  pagination: overrides("bool", "PAGINATION"),
  pagination_limit: overrides("int", "PAGINATION_LIMIT"),
  pagination_default: overrides("int", "PAGINATION_DEFAULT"),
  optimize_pagination_for_speed: overrides("bool", "OPTIMIZE_PAGINATION_FOR_SPEED"),
  projection: overrides("bool", "PROJECTION"),
  embedding: overrides("bool", "EMBEDDING"),
  embedded_fields: own("strings"),
  normalize_dotted_fields: overrides("bool", "NORMALIZE_DOTTED_FIELDS"),
  extra_response_fields: overrides("strings", "EXTRA_RESPONSE_FIELDS"),
  query_objectid_as_string: overrides("bool", "QUERY_OBJECTID_AS_STRING"),
  // Ours: fields no read ever returns or filters on, whatever the client asks.
  hidden_fields: own("strings"),
  hateoas: overrides("bool", "HATEOAS"),
  soft_delete: overrides("bool", "SOFT_DELETE"),
  versioning: overrides("bool", "VERSIONING"),
  internal_resource: overrides("bool", "INTERNAL_RESOURCE"),
  etag_ignore_fields: {
    kind: "any",
    ignored: "every stored field counts in an ETag, which each write draws afresh " +
      "(docs/migrating-from-eve.md)",
  },
  bulk_enabled: overrides("bool", "BULK_ENABLED"),
  upsert_on_put: overrides("bool", "UPSERT_ON_PUT"),
  item_lookup: overrides("bool", "ITEM_LOOKUP"),
  item_lookup_field: overrides("string?", "ITEM_LOOKUP_FIELD"),
  item_url: overrides("string", "ITEM_URL"),
  id_field: overrides("string", "ID_FIELD"),
  allowed_filters: overrides("strings", "ALLOWED_FILTERS"),
  validate_filtering: overrides("bool", "VALIDATE_FILTERING"),
  query_blacklist: overrides("strings", "DB_QUERY_BLACKLIST"),
  mongo_query_whitelist: overrides("strings", "MONGO_QUERY_WHITELIST"),
  if_match: overrides("bool", "IF_MATCH"),
  enforce_if_match: overrides("bool", "ENFORCE_IF_MATCH"),
  mongo_indexes: own("object"),
  mongo_write_concern: own("object"),
  // Authentication, roles and user-restricted access (src/auth/)
  public_methods: overrides("methods", "PUBLIC_METHODS"),
  public_item_methods: overrides("methods", "PUBLIC_ITEM_METHODS"),
  allowed_roles: overrides("strings", "ALLOWED_ROLES"),
  allowed_read_roles: overrides("strings", "ALLOWED_READ_ROLES"),
  allowed_write_roles: overrides("strings", "ALLOWED_WRITE_ROLES"),
  allowed_item_roles: overrides("strings", "ALLOWED_ITEM_ROLES"),
  allowed_item_read_roles: overrides("strings", "ALLOWED_ITEM_READ_ROLES"),
  allowed_item_write_roles: overrides("strings", "ALLOWED_ITEM_WRITE_ROLES"),
  authentication: own("any"),
  auth_field: overrides("string?", "AUTH_FIELD"),
  // Change feed (src/services/changes.ts)
  changes: overrides("bool", "CHANGES"),
  changes_documents: overrides("bool", "CHANGES_DOCUMENTS"),
} satisfies Record<string, ResourceKeySpec>;

/** The resource key table, looked up by a name read at run time. */
export const KNOWN_RESOURCE_KEYS: Readonly<Record<string, ResourceKeySpec>> = RESOURCE_KEYS;

type GlobalKeys = typeof GLOBAL_KEYS;
type ResourceKeys = typeof RESOURCE_KEYS;

/** Checked global settings: every known key, under our names, typed by its kind. */
export type Settings =
  & {
    readonly [Key in Exclude<keyof GlobalKeys, FilledKeys>]: KindValues[GlobalKeys[Key]["kind"]];
  }
  & Filled;

/** Keys the check fills in, so their checked type is narrower than their kind. */
type FilledKeys = "ITEM_LOOKUP_FIELD" | "DOMAIN";
interface Filled {
  /** ITEM_LOOKUP_FIELD defaults to ID_FIELD. */
  readonly ITEM_LOOKUP_FIELD: string;
  /** DOMAIN, each resource's keys checked (see `ResourceOptions`). */
  readonly DOMAIN: Readonly<Record<string, ResourceOptions>>;
}

/** A DOMAIN resource's keys, each typed by its kind (absent when not given). */
export type ResourceOptions = {
  readonly [Key in keyof ResourceKeys]?: KindValues[ResourceKeys[Key]["kind"]];
};

/** Reads a resource's keys, each falling back to the global setting it overrides. */
export function optionReader(
  settings: Settings,
  resource: ResourceOptions,
): <Key extends keyof ResourceKeys>(key: Key) => ResolvedOption<Key> {
  return (key) => {
    const global = KNOWN_RESOURCE_KEYS[key].global as keyof Settings | undefined;
    const value = Object.hasOwn(resource, key)
      ? resource[key]
      : global === undefined
      ? undefined
      : settings[global];
    // The tables type both sides: the value is of the key's kind or of its global's.
    return value as ResolvedOption<typeof key>;
  };
}

/**
 * The value a resource key resolves to: its own, or the global it overrides (so never
 * undefined for a key with a global).
 */
export type ResolvedOption<Key extends keyof ResourceKeys> = ResourceKeys[Key] extends
  { global: infer G extends keyof Settings } ? KindValues[ResourceKeys[Key]["kind"]] | Settings[G]
  : KindValues[ResourceKeys[Key]["kind"]] | undefined;

/** Eve's names for resource keys that we call otherwise. */
export const RESOURCE_ALIASES: Record<string, string> = {
  mongo_query_blacklist: "query_blacklist",
};

export const METHODS = ["GET", "HEAD", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"];
