/**
 * One line of meaning for every setting of the key tables (keys.ts), and the docs chapter
 * where it applies. `deno task docs:settings` turns these tables and keys.ts into
 * docs/settings-reference.md; tests/docs_settings_test.ts fails when a key has no meaning here
 * or the reference is stale.
 */

/** A docs chapter (a file name in docs/, without `.md`). */
export type Chapter =
  | "configuration"
  | "schemas-and-validation"
  | "reading"
  | "writing"
  | "media"
  | "authentication"
  | "cors-and-rate-limits"
  | "oplog-and-change-feed"
  | "embedding-and-events"
  | "api-description"
  | "deployment"
  | "migrating-from-eve"
  | "security";

/** What a key means, the chapter that explains it, and its type when the table says `any`. */
export interface Meaning {
  chapter: Chapter;
  text: string;
  type?: string;
}

const m = (chapter: Chapter, text: string, type?: string): Meaning =>
  type === undefined ? { chapter, text } : { chapter, text, type };

/** Global settings: one line each. */
export const GLOBAL_MEANINGS: Readonly<Record<string, Meaning>> = {
  DOMAIN: m("configuration", "The resources, by name (each a resource's keys)"),
  STORE: m(
    "configuration",
    "`auto` (MongoDB when configured, else embedded), `embedded` or `mongo`",
  ),
  DATA_DIR: m("configuration", "Directory of the embedded store's files"),
  MONGO_URI: m(
    "configuration",
    "MongoDB connection string; a database named in it wins over DB_DBNAME",
  ),
  DB_HOST: m("configuration", "MongoDB host; setting it selects MongoDB"),
  DB_PORT: m("configuration", "MongoDB port"),
  DB_USERNAME: m("configuration", "MongoDB user (never logged)"),
  DB_PASSWORD: m("configuration", "MongoDB password (never logged)"),
  DB_AUTH_SOURCE: m("configuration", "Database the MongoDB user authenticates on"),
  MONGO_AUTH_MECHANISM: m(
    "configuration",
    "How the MongoDB user authenticates (the driver's authMechanism: SCRAM-SHA-256, MONGODB-X509...)",
  ),
  MONGO_AUTH_MECHANISM_PROPERTIES: m(
    "configuration",
    "The mechanism's properties (authMechanismProperties)",
  ),
  DB_DBNAME: m("configuration", "MongoDB database name"),
  MONGO_OPTIONS: m("configuration", "Extra MongoClient options"),
  HOST: m("deployment", "Address `deno task start` listens on"),
  PORT: m("deployment", "Port `deno task start` listens on"),
  URL_PREFIX: m("configuration", "Path prefix of every endpoint (`api` gives `/api/people`)"),
  API_VERSION: m("configuration", "Version segment after URL_PREFIX (`v1` gives `/api/v1/people`)"),
  MAX_BODY_SIZE: m(
    "security",
    "Bytes of a request body (multipart: its non-file fields); past it 413",
  ),
  BULK_MAX_DOCUMENTS: m("security", "Documents in one bulk POST; past it 413"),
  RESOURCE_METHODS: m("writing", "Methods enabled at resource (collection) endpoints"),
  ITEM_METHODS: m("writing", "Methods enabled at item endpoints"),
  ALLOW_OVERRIDE_HTTP_METHOD: m("writing", "Honour `X-HTTP-Method-Override` (on POST only)"),
  BULK_ENABLED: m("writing", "Accept a JSON list of documents in POST"),
  UPSERT_ON_PUT: m("writing", "PUT on a missing item creates it (201); false answers 404"),
  ALLOW_UNKNOWN: m("schemas-and-validation", "Store fields the schema does not declare"),
  VALIDATION_ERROR_STATUS: m("schemas-and-validation", "Status of a validation error"),
  NORMALIZE_ON_PATCH: m("writing", "PATCH fills defaults of fields it leaves out (Eve's rule)"),
  MERGE_NESTED_DOCUMENTS: m("writing", "PATCH merges nested dicts instead of replacing them"),
  ALLOW_CUSTOM_FIELDS_IN_GEOJSON: m("schemas-and-validation", "Extra members in GeoJSON objects"),
  ALLOWED_FILTERS: m("reading", 'Fields a `where` may name (`["*"]`: all; `[]`: no filtering)'),
  VALIDATE_FILTERING: m("reading", "Check `where` fields and values against the schema"),
  DB_QUERY_BLACKLIST: m("reading", "Query operators refused in `where` at any depth"),
  MONGO_QUERY_WHITELIST: m("reading", "Operators allowed in `where` beyond Eve's list"),
  SORTING: m("reading", "Honour client `sort` (false: ignored)"),
  PAGINATION: m("reading", "Page collection answers"),
  PAGINATION_DEFAULT: m("reading", "Page size when the client sends no `max_results`"),
  PAGINATION_LIMIT: m("reading", "Largest page size a client may ask"),
  OPTIMIZE_PAGINATION_FOR_SPEED: m("reading", "Skip the total count (no `total`, no `last` link)"),
  PROJECTION: m("reading", "Honour client `projection`"),
  EMBEDDING: m("reading", "Honour client `embedded`"),
  HATEOAS: m("reading", "`_links` in answers"),
  BANDWIDTH_SAVER: m("writing", "Write answers carry only meta fields"),
  QUERY_WHERE: m("reading", "Name of the filter query parameter"),
  QUERY_SORT: m("reading", "Name of the sort query parameter"),
  QUERY_PAGE: m("reading", "Name of the page query parameter"),
  QUERY_MAX_RESULTS: m("reading", "Name of the page size query parameter"),
  QUERY_EMBEDDED: m("reading", "Name of the embedding query parameter"),
  QUERY_PROJECTION: m("reading", "Name of the projection query parameter"),
  QUERY_AGGREGATION: m("reading", "Name of the aggregation values query parameter"),
  DATE_FORMAT: m("schemas-and-validation", "strftime-style format of dates in and out (RFC 1123)"),
  IF_MATCH: m("writing", "ETags and `If-Match` concurrency control; false sends no ETag"),
  ENFORCE_IF_MATCH: m("writing", "Edits and deletes need `If-Match` (428 without)"),
  CACHE_CONTROL: m("reading", "`Cache-Control` of GET answers"),
  CACHE_EXPIRES: m("reading", "`Expires` of GET answers: now plus this many seconds"),
  RENDERERS: m("reading", "Enabled renderers (`json`, `xml`; Eve's class names accepted)"),
  JSONP_ARGUMENT: m("reading", "Query argument that turns on JSONP"),
  ID_FIELD: m("configuration", "Name of the id field"),
  DATE_CREATED: m("configuration", "Name of the creation date field"),
  DATE_UPDATED: m("configuration", "Name of the last update date field"),
  ETAG: m("configuration", "Name of the ETag field"),
  ITEM_LOOKUP: m("reading", "Serve item endpoints"),
  ITEM_LOOKUP_FIELD: m("reading", "Field an item URL names (default: ID_FIELD)"),
  ITEM_URL: m("reading", "URL rule of an item id"),
  STATUS: m("configuration", "Envelope key of the status"),
  STATUS_OK: m("configuration", "Status value of a success"),
  STATUS_ERR: m("configuration", "Status value of an error"),
  ISSUES: m("configuration", "Envelope key of validation issues"),
  ERROR: m("configuration", "Envelope key of the error"),
  ITEMS: m("configuration", "Envelope key of a page's items"),
  LINKS: m("configuration", "Envelope key of links"),
  META: m("configuration", "Envelope key of paging facts"),
  INTERNAL_RESOURCE: m(
    "embedding-and-events",
    "Resources reachable in-process only, never over HTTP",
  ),
  HEADER_TOTAL_COUNT: m("reading", "The field a page's total is sent in (X-Total-Count)"),
  SOFT_DELETE: m("writing", "DELETE marks documents deleted instead of removing them"),
  DELETED: m("writing", "Name of the soft-delete flag field"),
  SHOW_DELETED_PARAM: m("writing", "Query parameter that lists soft-deleted documents too"),
  VERSIONING: m("writing", "Keep every version of every document"),
  VERSION: m("writing", "Name of the version number field"),
  VERSIONS: m("writing", "Suffix of the versions collection"),
  VERSION_PARAM: m("writing", "Query parameter that reads versions"),
  LATEST_VERSION: m("writing", "Name of the latest version number field"),
  VERSION_ID_SUFFIX: m("writing", "Suffix of the document id field in version copies"),
  VERSION_DIFF_INCLUDE: m("writing", "Fields `version=diffs` always shows"),
  X_DOMAINS: m(
    "cors-and-rate-limits",
    'Origins allowed cross-origin (a list, or `"*"`)',
    "string or list of strings",
  ),
  X_DOMAINS_RE: m(
    "cors-and-rate-limits",
    "Allowed origins as regular expressions (anchored)",
    "string or list of strings",
  ),
  X_HEADERS: m(
    "cors-and-rate-limits",
    "`Access-Control-Allow-Headers` of preflights",
    "string or list of strings",
  ),
  X_EXPOSE_HEADERS: m(
    "cors-and-rate-limits",
    "`Access-Control-Expose-Headers`",
    "string or list of strings",
  ),
  X_ALLOW_CREDENTIALS: m("cors-and-rate-limits", "Allow credentials for listed origins", "boolean"),
  X_MAX_AGE: m("cors-and-rate-limits", "Seconds a browser may cache a preflight"),
  SCHEMA_ENDPOINT: m("schemas-and-validation", "URL of the schema endpoint (none: off)"),
  OPLOG: m("oplog-and-change-feed", "Keep the operation log"),
  OPLOG_NAME: m("oplog-and-change-feed", "Collection and resource name of the log"),
  OPLOG_METHODS: m("oplog-and-change-feed", "Methods that are logged"),
  OPLOG_ENDPOINT: m(
    "oplog-and-change-feed",
    "URL of the read-only log endpoint (none: in-process)",
  ),
  OPLOG_AUDIT: m("oplog-and-change-feed", "Record the client address (`ip`)"),
  OPLOG_CHANGE_METHODS: m("oplog-and-change-feed", "Methods whose entries carry the changes (`c`)"),
  OPLOG_RETURN_EXTRA_FIELD: m("oplog-and-change-feed", "Serve `extra` at the log endpoint"),
  EXTENDED_MEDIA_INFO: m(
    "media",
    "File facts shown with a media field (`content_type`, `name`, ...)",
  ),
  RETURN_MEDIA_AS_BASE64_STRING: m("media", "Media fields carry their content as Base64"),
  RETURN_MEDIA_AS_URL: m("media", "Media fields are URLs of the media endpoint"),
  MEDIA_BASE_URL: m("media", "Start of media URLs (else PUBLIC_BASE_URL, else path-absolute)"),
  PUBLIC_BASE_URL: m("writing", "Start of absolute URLs (`Location`, media); none: path-absolute"),
  MEDIA_ENDPOINT: m("media", "Path segment of the media endpoint"),
  MEDIA_URL: m("media", "URL rule of a file id at the media endpoint"),
  MULTIPART_FORM_FIELDS_AS_JSON: m("media", "Non-file multipart fields are read as JSON"),
  AUTO_COLLAPSE_MULTI_KEYS: m("media", "A repeated form key (files too) becomes a list"),
  MAX_FILE_SIZE: m("media", "Bytes of one uploaded file (0: MAX_BODY_SIZE); past it 413"),
  AUTO_CREATE_LISTS: m("media", "A single value sent for a list field becomes a list"),
  MAX_DOCUMENT_FIELDS: m("security", "Fields (any depth) of one document; past it 413"),
  MAX_BODY_FIELDS: m("security", "Fields (any depth) of one body; past it 413"),
  MAX_LIST_LENGTH: m("security", "Members of one list; past it 413"),
  MAX_DOCUMENT_DEPTH: m("security", "Nesting levels of one document; past it 413"),
  MAX_MULTIPART_PARTS: m("security", "Parts of one multipart body; past it 413"),
  MAX_EMBEDDED_DOCUMENTS: m("security", "References one answer may embed; past it 400"),
  MAX_RESPONSE_MEDIA_BYTES: m("security", "Inline Base64 media of one answer; past it 400"),
  RATE_LIMIT_GET: m(
    "cors-and-rate-limits",
    "`[requests, seconds]` per user for GET and HEAD",
    "[requests, seconds]",
  ),
  RATE_LIMIT_POST: m(
    "cors-and-rate-limits",
    "`[requests, seconds]` per user for POST",
    "[requests, seconds]",
  ),
  RATE_LIMIT_PATCH: m(
    "cors-and-rate-limits",
    "`[requests, seconds]` per user for PATCH",
    "[requests, seconds]",
  ),
  RATE_LIMIT_DELETE: m(
    "cors-and-rate-limits",
    "`[requests, seconds]` per user for DELETE",
    "[requests, seconds]",
  ),
  REDIS_URL: m(
    "cors-and-rate-limits",
    "Redis for rate-limit counters (none: per-instance counters)",
  ),
  DEBUG: m("configuration", "Debug-level logs"),
  INFO: m("reading", "Home answer member with the Eve API version (`_info`)"),
  SERVER_NAME: m("migrating-from-eve", "Eve's server name (no effect here)"),
  URL_PROTOCOL: m("migrating-from-eve", "Eve's URL scheme (no effect here; see PUBLIC_BASE_URL)"),
  JSON_SORT_KEYS: m("reading", "Render JSON as Eve does with it: sorted keys, spaced, ASCII"),
  JSON_REQUEST_CONTENT_TYPES: m("writing", "More media types read as JSON (`*+json` always are)"),
  MONGO_WRITE_CONCERN: m(
    "configuration",
    "Write concern passed to the driver (MONGO_OPTIONS wins)",
  ),
  MONGO_CONNECT: m("migrating-from-eve", "No effect here (the service connects at start-up)"),
  STANDARD_ERRORS: m(
    "migrating-from-eve",
    "No effect here (every error has the standard body)",
    "list of statuses",
  ),
  VALIDATION_ERROR_AS_LIST: m("schemas-and-validation", "Every issue is a list of messages"),
  TRANSPARENT_SCHEMA_RULES: m("migrating-from-eve", "No effect here"),
  NORMALIZE_DOTTED_FIELDS: m("writing", "Dotted names in POST and PUT bodies become nested fields"),
  ITEM_CACHE_CONTROL: m("migrating-from-eve", "No effect (Eve never sends it); use CACHE_CONTROL"),
  EXTRA_RESPONSE_FIELDS: m("writing", "Stored fields added to write answers"),
  QUERY_OBJECTID_AS_STRING: m("reading", "24-hex strings in `where` stay strings"),
  RATE_LIMIT_PUT: m(
    "cors-and-rate-limits",
    "`[requests, seconds]` per user for PUT (ours)",
    "[requests, seconds]",
  ),
  RATE_LIMIT_KEY_PREFIX: m(
    "cors-and-rate-limits",
    "Redis key prefix (one per API sharing a Redis)",
  ),
  RATE_LIMIT_REDIS_TIMEOUT: m("cors-and-rate-limits", "Milliseconds a check may wait on Redis"),
  RATE_LIMIT_ON_REDIS_ERROR: m(
    "cors-and-rate-limits",
    "Redis unreachable: `allow` or `refuse` (503)",
  ),
  TRUSTED_PROXIES: m("cors-and-rate-limits", "Proxies whose `X-Forwarded-For` names the client"),
  QUERY_MAX_RANGE: m("security", "Longest `$range` in a `where` `$expr`"),
  QUERY_EXPR_MAX_ELEMENTS: m("security", "Most array elements one `$expr` may build (estimated)"),
  ETAG_SECRET: m("security", "Key of ETags of documents written outside the API"),
  MIN_REQUEST_BODY_RATE: m(
    "deployment",
    "Bytes/s a request body must keep up after grace (0: off)",
  ),
  MIN_REQUEST_BODY_RATE_GRACE_MS: m("deployment", "Time before the body rate rule applies"),
  TLS_CERT_FILE: m("deployment", "PEM certificate file: serve HTTPS (with TLS_KEY_FILE)"),
  TLS_KEY_FILE: m("deployment", "PEM private key file of TLS_CERT_FILE"),
  QUERY_TIMEOUT_MS: m("security", "Time bound of a query or aggregation (0: none); past it 503"),
  SERVER_HEADERS_TIMEOUT_MS: m("deployment", "Refused: the proxy's `client_header_timeout`"),
  SERVER_IDLE_TIMEOUT_MS: m("deployment", "Refused: the proxy's `keepalive_timeout`"),
  SERVER_MAX_CONNECTIONS: m("deployment", "Refused: the proxy's `limit_conn`"),
  SERVER_FRONT: m("deployment", "Refused: the service serves with `Deno.serve` behind a proxy"),
  PUBLIC_METHODS: m("authentication", "Methods of resource endpoints needing no credentials"),
  PUBLIC_ITEM_METHODS: m("authentication", "Methods of item endpoints needing no credentials"),
  ALLOWED_ROLES: m("authentication", "Roles allowed at resource endpoints"),
  ALLOWED_READ_ROLES: m("authentication", "Roles allowed to read resource endpoints"),
  ALLOWED_WRITE_ROLES: m("authentication", "Roles allowed to write resource endpoints"),
  ALLOWED_ITEM_ROLES: m("authentication", "Roles allowed at item endpoints"),
  ALLOWED_ITEM_READ_ROLES: m("authentication", "Roles allowed to read item endpoints"),
  ALLOWED_ITEM_WRITE_ROLES: m("authentication", "Roles allowed to write item endpoints"),
  AUTH_FIELD: m("authentication", "Field holding each document's owner (user-restricted access)"),
  AUTH_SCHEMES: m("authentication", "Accepted schemes: `basic`, `token`, `hmac`, `jwt`"),
  AUTH_REALM: m("authentication", "Realm of the `WWW-Authenticate` challenges"),
  AUTH_ACCOUNTS: m("authentication", "The accounts resource and its field names"),
  AUTH_USERS: m("authentication", "Accounts in the settings (bcrypt hashes)", "list of accounts"),
  AUTH_JWT: m("authentication", "JWT key and claims"),
  AUTH_CACHE_SECONDS: m("authentication", "Seconds a verified credential is remembered (0: never)"),
  AUTH_HMAC_MAX_SKEW: m("authentication", "Largest HMAC `Date` difference from the clock, seconds"),
  COMPRESS_MIN_BYTES: m("reading", "Compress answers at least this long (0: off)"),
  WRITE_BUFFER_BYTES: m(
    "deployment",
    "Padding of a keep-alive connection's second answer: later answers up to this long go in one write (0: off; at most 3072)",
  ),
  HEALTH_PATH: m("deployment", "Liveness probe path (empty: off)"),
  READY_PATH: m("deployment", "Readiness probe path (empty: off)"),
  READY_TIMEOUT_MS: m("deployment", "How long readiness waits for the store and Redis"),
  OPENAPI_PATH: m(
    "api-description",
    "Path of the OpenAPI description (false: off, with the page)",
    "path, or false",
  ),
  DOCS_PATH: m("api-description", "Path of the docs page (false: off)", "path, or false"),
  CHANGES: m("oplog-and-change-feed", "Change feeds for every resource"),
  CHANGES_ENDPOINT: m("oplog-and-change-feed", "Last path segment of a feed"),
  CHANGES_DOCUMENTS: m("oplog-and-change-feed", "Events may carry documents (`?documents=1`)"),
  CHANGES_RETENTION: m("oplog-and-change-feed", "Changes kept for resuming (the whole service's)"),
  CHANGES_RETENTION_SECONDS: m("oplog-and-change-feed", "Age past which a change is not kept"),
  CHANGES_HEARTBEAT_MS: m("oplog-and-change-feed", "Heartbeat after this long without an event"),
  CHANGES_QUEUE_LIMIT: m("oplog-and-change-feed", "Events waiting for one client; past it dropped"),
  CHANGES_MAX_CONNECTIONS: m("oplog-and-change-feed", "Open feeds; past it 503"),
  CHANGES_SOURCE: m("oplog-and-change-feed", "`auto` (change streams where possible) or `writes`"),
  METRICS: m("deployment", "Serve Prometheus metrics"),
  METRICS_PATH: m("deployment", "Path of the metrics"),
  METRICS_TOKEN: m("deployment", "Bearer token scrapes must send"),
};

/** Per-resource keys without a global counterpart: one line each. */
export const RESOURCE_MEANINGS: Readonly<Record<string, Meaning>> = {
  mongo_write_concern: m(
    "writing",
    "Write concern of this resource's writes (the embedded store refuses w > 1 or a tag set)",
  ),
  url: m("reading", "The resource's URL (may hold regex-typed variables: a sub-resource)"),
  schema: m("schemas-and-validation", "The validation schema (Eve/Cerberus rules)"),
  datasource: m("reading", "`source`, `filter`, `projection`, `default_sort`, `aggregation`"),
  item_title: m("reading", "Title of item links (default: the resource title minus a final s)"),
  resource_title: m("reading", "Title of collection links (default: the resource name)"),
  additional_lookup: m("reading", "A second, read-only item endpoint by another field"),
  default_sort: m(
    "reading",
    "Sort applied when the client sends none",
    "sort (object, list or text)",
  ),
  embedded_fields: m("reading", "Relations embedded by default"),
  hidden_fields: m("security", "Fields no read ever returns, filters or sorts on"),
  etag_ignore_fields: m(
    "migrating-from-eve",
    "No effect here: every stored field counts in an ETag, drawn afresh at each write",
  ),
  mongo_indexes: m("configuration", "Indexes created at start-up"),
  authentication: m(
    "authentication",
    "false: public; a scheme or list: only those schemes",
    "boolean, scheme or list of schemes",
  ),
};
