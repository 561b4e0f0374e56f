/**
 * The normalized, frozen domain: everything a request needs about a resource, resolved
 * once at start-up from the settings. Nothing downstream re-reads raw settings.
 */
import type { IndexDeclaration } from "./indexes.ts";
import type { Doc, Filter, Projection, Sort } from "../doc/types.ts";
import type { ResourceSchema, SchemaModel } from "./schema.ts";

export type { DataRelation, FieldSchema, ResourceSchema } from "./schema.ts";

export type Method = "GET" | "HEAD" | "POST" | "PATCH" | "PUT" | "DELETE";

/** A URL variable in a sub-resource `url`, e.g. `<regex("[a-f0-9]{24}"):owner>`. */
export interface UrlVariable {
  /** Field the variable filters on. */
  field: string;
  /** Regex source (anchored when matched). */
  pattern: string;
}

export interface Resource {
  /** Name as given in DOMAIN (also the event name suffix). */
  name: string;
  /** Path without leading/trailing slashes, variables kept, e.g. `people/<regex(...):owner>/invoices`. */
  url: string;
  /** Literal path segments and variables of `url`, in order. */
  urlParts: Array<string | UrlVariable>;
  /** Database collection name (`datasource.source`, default the resource name). */
  source: string;
  /** Predefined filter (`datasource.filter`). */
  filter: Filter;
  /**
   * Default projection (`datasource.projection`; for a resource sharing its collection with
   * another, its schema fields), or undefined for all fields.
   */
  projection?: Projection;
  /**
   * The only fields any read may return or name, when the default projection is inclusive;
   * undefined when every field is readable (see services/policy.ts).
   */
  readable?: readonly string[];
  /**
   * When `readable` comes only from sharing the collection (no projection was written): the
   * fields the other resources on the collection declare and this one does not. Filters and
   * sorts may name any other field, as in Eve; these stay out of reach.
   */
  siblingFields?: ReadonlySet<string>;
  /**
   * Fields no read may ever return or name, whatever the client asks (for example a
   * password hash); see services/policy.ts.
   */
  hidden?: readonly string[];
  /** Default sort (`datasource.default_sort` or `default_sort`). */
  defaultSort?: Sort;
  /** Aggregation pipeline, when the endpoint is an aggregation endpoint. */
  aggregation?: {
    pipeline: Doc[];
    /** MongoDB's `aggregate` options (`let`, `collation`, `hint`...), checked at start-up. */
    options?: Doc;
  };
  /** The schema as written (shorthands expanded): the schema endpoint shows it. */
  schema: ResourceSchema;
  /** The compiled schema model every field question is asked of (domain/schema.ts). */
  schemaModel: SchemaModel;
  resourceTitle: string;
  itemTitle: string;
  resourceMethods: Method[];
  itemMethods: Method[];
  /** Field used in item URLs (ITEM_LOOKUP_FIELD, default ID_FIELD). */
  itemLookupField: string;
  /** Regex source of the item URL segment (ITEM_URL). */
  itemUrl: string;
  itemLookup: boolean;
  additionalLookup?: { url: string; field: string };
  idField: string;
  cacheControl: string;
  cacheExpires: number;
  allowUnknown: boolean;
  normalizeOnPatch: boolean;
  sorting: boolean;
  pagination: boolean;
  paginationLimit: number;
  paginationDefault: number;
  /** OPTIMIZE_PAGINATION_FOR_SPEED: skip the total count. */
  optimizePagination: boolean;
  embedding: boolean;
  /** Fields embedded without the client asking (`embedded_fields`). */
  embeddedFields: string[];
  /** Emits `_links` (HATEOAS); false turns links off for the resource. */
  hateoas: boolean;
  softDelete: boolean;
  versioning: boolean;
  internal: boolean;
  bulkEnabled: boolean;
  upsertOnPut: boolean;
  mergeNestedDocuments: boolean;
  allowedFilters: string[];
  validateFiltering: boolean;
  queryBlacklist: string[];
  /** `mongo_query_whitelist`: operators allowed in `where` beyond Eve's own set. */
  queryWhitelist: string[];
  projectionEnabled: boolean;
  ifMatch: boolean;
  enforceIfMatch: boolean;
  /** `normalize_dotted_fields`: dotted names in POST/PUT bodies become nested fields. */
  normalizeDotted: boolean;
  /** `extra_response_fields`: stored fields added to write responses. */
  extraResponseFields: string[];
  /** `query_objectid_as_string`: `where` keeps 24-hex strings as strings. */
  queryObjectIdAsString: boolean;
  /** `mongo_indexes`: the indexes declared, checked (see indexes.ts). */
  indexes: IndexDeclaration[];
  /** Extra per-resource settings kept verbatim (auth, roles, rate limits ...). */
  extra: Doc;
}
