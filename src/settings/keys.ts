/**
 * Every known global setting: its kind and default. Eve's own names are accepted too
 * (see ALIASES), so an Eve user's settings carry over as they are.
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

export interface KeySpec {
  kind: Kind;
  default: unknown;
  /**
   * Known to Eve but without effect here: accepted with a start-up warning (the text, when
   * given, says why).
   */
  ignored?: boolean | string;
  /** Known but refused: serving without it would be unsafe (e.g. authentication). */
  refused?: string;
}

const ALL_METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"];
const k = (kind: Kind, value: unknown, extra: Partial<KeySpec> = {}): KeySpec => ({
  kind,
  default: value,
  ...extra,
});

/** Global settings, by our (spec) names. */
export const GLOBAL_KEYS: Record<string, KeySpec> = {
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
  SORTING: k("bool", true),
  PAGINATION: k("bool", true),
  PAGINATION_DEFAULT: k("int", 25),
  PAGINATION_LIMIT: k("int", 50),
  OPTIMIZE_PAGINATION_FOR_SPEED: k("bool", false),
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
  // Budgets: no single request may exhaust memory or block the event loop (issue 8)
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
  // Known to Eve, no effect here (documented in the README)
  DEBUG: k("bool", false),
  INFO: k("string?", null),
  SERVER_NAME: k("string?", null, { ignored: true }),
  URL_PROTOCOL: k("string", "", { ignored: true }),
  JSON_SORT_KEYS: k("bool", false, { ignored: true }),
  JSON_REQUEST_CONTENT_TYPES: k("strings", ["application/json"], { ignored: true }),
  MONGO_WRITE_CONCERN: k("object", { w: 1 }),
  MONGO_AUTH_MECHANISM: k("string?", null, { ignored: true }),
  MONGO_AUTH_MECHANISM_PROPERTIES: k("object?", null, { ignored: true }),
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
  // Rate limiting and cross-origin access (issue 12; README "Rate limiting")
  RATE_LIMIT_PUT: k("any", null),
  RATE_LIMIT_KEY_PREFIX: k("string", "ratelimit:"),
  RATE_LIMIT_REDIS_TIMEOUT: k("int", 500),
  RATE_LIMIT_ON_REDIS_ERROR: k("string", "allow"),
  TRUSTED_PROXIES: k("strings", []),
  // Hostile requests (issue 8b): query sandbox, query time bound, connection limits
  QUERY_MAX_RANGE: k("int", 1000),
  QUERY_EXPR_MAX_ELEMENTS: k("int", 100_000),
  QUERY_TIMEOUT_MS: k("int", 10_000),
  SERVER_HEADERS_TIMEOUT_MS: k("int", 10_000),
  SERVER_IDLE_TIMEOUT_MS: k("int", 30_000),
  SERVER_MAX_CONNECTIONS: k("int", 1024),
  // Authentication, roles and user-restricted access (src/auth/, README "Authentication")
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
  // Probes for orchestrators (README "Health and readiness")
  HEALTH_PATH: k("string", "/health"),
  READY_PATH: k("string", "/ready"),
  READY_TIMEOUT_MS: k("int", 2000),
  // API description and docs page (src/openapi/; README "API description and docs page"):
  // a path under the API prefix, or false / null for none. Checked in src/openapi/config.ts.
  OPENAPI_PATH: k("any", "/openapi.json"),
  DOCS_PATH: k("any", "/docs"),
  // Change feed (README "Change feed"): GET /<resource>/<CHANGES_ENDPOINT> as Server-Sent Events
  CHANGES: k("bool", false),
  CHANGES_ENDPOINT: k("string", "_changes"),
  CHANGES_DOCUMENTS: k("bool", true),
  CHANGES_RETENTION: k("int", 1000),
  CHANGES_RETENTION_SECONDS: k("int", 300),
  CHANGES_HEARTBEAT_MS: k("int", 15_000),
  CHANGES_QUEUE_LIMIT: k("int", 256),
  CHANGES_MAX_CONNECTIONS: k("int", 100),
  CHANGES_SOURCE: k("string", "auto"),
  // Prometheus metrics (README "Metrics"): off by default; METRICS_TOKEN protects the path.
  METRICS: k("bool", false),
  METRICS_PATH: k("string", "/metrics"),
  METRICS_TOKEN: k("string?", null),
};

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
export const RESOURCE_KEYS: Record<string, { kind: Kind; global?: string; refused?: string }> = {
  url: { kind: "string" },
  schema: { kind: "object" },
  datasource: { kind: "object" },
  item_title: { kind: "string" },
  resource_title: { kind: "string" },
  additional_lookup: { kind: "object" },
  resource_methods: { kind: "methods", global: "RESOURCE_METHODS" },
  item_methods: { kind: "methods", global: "ITEM_METHODS" },
  cache_control: { kind: "string", global: "CACHE_CONTROL" },
  cache_expires: { kind: "int", global: "CACHE_EXPIRES" },
  allow_unknown: { kind: "bool", global: "ALLOW_UNKNOWN" },
  normalize_on_patch: { kind: "bool", global: "NORMALIZE_ON_PATCH" },
  merge_nested_documents: { kind: "bool", global: "MERGE_NESTED_DOCUMENTS" },
  sorting: { kind: "bool", global: "SORTING" },
  default_sort: { kind: "any" },
  pagination: { kind: "bool", global: "PAGINATION" },
  pagination_limit: { kind: "int", global: "PAGINATION_LIMIT" },
  pagination_default: { kind: "int", global: "PAGINATION_DEFAULT" },
  optimize_pagination_for_speed: { kind: "bool", global: "OPTIMIZE_PAGINATION_FOR_SPEED" },
  projection: { kind: "bool", global: "PROJECTION" },
  embedding: { kind: "bool", global: "EMBEDDING" },
  embedded_fields: { kind: "strings" },
  normalize_dotted_fields: { kind: "bool", global: "NORMALIZE_DOTTED_FIELDS" },
  extra_response_fields: { kind: "strings", global: "EXTRA_RESPONSE_FIELDS" },
  query_objectid_as_string: { kind: "bool", global: "QUERY_OBJECTID_AS_STRING" },
  // Ours: fields no read ever returns or filters on, whatever the client asks.
  hidden_fields: { kind: "strings" },
  hateoas: { kind: "bool", global: "HATEOAS" },
  soft_delete: { kind: "bool", global: "SOFT_DELETE" },
  versioning: { kind: "bool", global: "VERSIONING" },
  internal_resource: { kind: "bool" },
  bulk_enabled: { kind: "bool", global: "BULK_ENABLED" },
  upsert_on_put: { kind: "bool", global: "UPSERT_ON_PUT" },
  item_lookup: { kind: "bool", global: "ITEM_LOOKUP" },
  item_lookup_field: { kind: "string?", global: "ITEM_LOOKUP_FIELD" },
  item_url: { kind: "string", global: "ITEM_URL" },
  id_field: { kind: "string", global: "ID_FIELD" },
  allowed_filters: { kind: "strings", global: "ALLOWED_FILTERS" },
  validate_filtering: { kind: "bool", global: "VALIDATE_FILTERING" },
  query_blacklist: { kind: "strings", global: "DB_QUERY_BLACKLIST" },
  if_match: { kind: "bool", global: "IF_MATCH" },
  enforce_if_match: { kind: "bool", global: "ENFORCE_IF_MATCH" },
  mongo_indexes: { kind: "object" },
  rate_limit: { kind: "any" },
  // Authentication, roles and user-restricted access (src/auth/)
  public_methods: { kind: "methods", global: "PUBLIC_METHODS" },
  public_item_methods: { kind: "methods", global: "PUBLIC_ITEM_METHODS" },
  allowed_roles: { kind: "strings", global: "ALLOWED_ROLES" },
  allowed_read_roles: { kind: "strings", global: "ALLOWED_READ_ROLES" },
  allowed_write_roles: { kind: "strings", global: "ALLOWED_WRITE_ROLES" },
  allowed_item_roles: { kind: "strings", global: "ALLOWED_ITEM_ROLES" },
  allowed_item_read_roles: { kind: "strings", global: "ALLOWED_ITEM_READ_ROLES" },
  allowed_item_write_roles: { kind: "strings", global: "ALLOWED_ITEM_WRITE_ROLES" },
  authentication: { kind: "any" },
  auth_field: { kind: "string?", global: "AUTH_FIELD" },
  // Change feed (src/services/changes.ts)
  changes: { kind: "bool", global: "CHANGES" },
  changes_documents: { kind: "bool", global: "CHANGES_DOCUMENTS" },
};

/** Eve's names for resource keys that we call otherwise. */
export const RESOURCE_ALIASES: Record<string, string> = {
  mongo_query_blacklist: "query_blacklist",
};

export const METHODS = ["GET", "HEAD", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"];
