/**
 * Builds the frozen, normalized domain from checked settings: per resource, everything a
 * request needs, with per-resource overrides of the globals resolved once.
 */
import { readIndexes } from "./indexes.ts";
import { closest } from "../settings/check.ts";
import type { Settings } from "../settings/check.ts";
import { isPlainObject } from "../util/plain.ts";
import { optionReader, type ResourceOptions } from "../settings/keys.ts";
import type { Method, Resource, ResourceSchema } from "./types.ts";
import { type CustomType, TypeTable } from "./field-types.ts";
import { buildSchemaModel, expandShorthand } from "./schema.ts";
import { parseRegexCall, parseUrl } from "./url.ts";
import type { Doc, Sort } from "../doc/types.ts";

/** Resources by name, in DOMAIN order. */
export type Domain = ReadonlyMap<string, Resource>;

const upper = (methods: string[]) => methods.map((m) => m.toUpperCase() as Method);

/** How the text form of a sort (`"-a,b"`, `[("a", 1)]`) is read: the `?sort` parser. */
export type SortTextParser = (text: string) => Sort;

/**
 * Normalizes every DOMAIN resource; every problem found is appended to `problems`.
 */
export function buildDomain(
  settings: Settings,
  problems: string[],
  options: { parseSortText: SortTextParser; types?: Record<string, CustomType> },
): Domain {
  const domain = new Map<string, Resource>();
  const urls = new Map<string, string>();
  const types = new TypeTable({
    custom: options.types,
    allowCustomGeo: settings.ALLOW_CUSTOM_FIELDS_IN_GEOJSON,
  });
  for (const [name, raw] of Object.entries(settings.DOMAIN)) {
    const resource = buildResource(name, raw, {
      settings,
      problems,
      parseSortText: options.parseSortText,
      types,
    });
    if (!resource) continue;
    const other = urls.get(resource.url);
    if (other) problems.push(`DOMAIN.${name}.url: "${resource.url}" is already used by ${other}`);
    urls.set(resource.url, name);
    const schemaEndpoint = settings.SCHEMA_ENDPOINT;
    if (
      schemaEndpoint && !resource.internal &&
      (resource.url === schemaEndpoint || resource.url.startsWith(schemaEndpoint + "/"))
    ) {
      problems.push(`DOMAIN.${name}.url: "${resource.url}" is taken by SCHEMA_ENDPOINT`);
    }
    domain.set(name, resource);
  }
  for (const resource of domain.values()) {
    applyReadPolicy(resource, domain);
    Object.freeze(resource);
  }
  return domain;
}

/**
 * The fields a resource may read: an inclusive default projection names them. A resource
 * that shares its collection with another sees only its own schema fields by default (as
 * in Eve), so a view can't read what another endpoint stores.
 */
function applyReadPolicy(resource: Resource, domain: Map<string, Resource>) {
  const shared = [...domain.values()].some((other) =>
    other !== resource && other.source === resource.source
  );
  const fields = Object.keys(resource.schema);
  if (
    !resource.projection && shared && !resource.allowUnknown && !resource.aggregation &&
    fields.length > 0
  ) {
    resource.projection = Object.fromEntries(fields.map((f) => [f, 1 as const]));
    const siblings = new Set<string>();
    for (const other of domain.values()) {
      if (other === resource || other.source !== resource.source) continue;
      for (const f of Object.keys(other.schema)) {
        if (!Object.hasOwn(resource.schema, f)) siblings.add(f);
      }
      for (const f of Object.keys(other.projection ?? {})) {
        if (!Object.hasOwn(resource.schema, f)) siblings.add(f);
      }
    }
    resource.siblingFields = siblings;
  }
  const projection = resource.projection ?? {};
  if (Object.values(projection).includes(1)) {
    resource.readable = Object.keys(projection).filter((f) => projection[f] === 1);
  }
}

function buildResource(
  name: string,
  raw: ResourceOptions,
  options: {
    settings: Settings;
    problems: string[];
    parseSortText: SortTextParser;
    types: TypeTable;
  },
): Resource | null {
  const { settings, problems } = options;
  const path = `DOMAIN.${name}`;
  const get = optionReader(settings, raw);
  const url = (raw.url as string | undefined) ?? name;
  let urlParts: Resource["urlParts"] = [];
  try {
    urlParts = parseUrl(url);
  } catch (error) {
    problems.push(`${path}.url: ${(error as Error).message}`);
  }
  let itemUrl = "";
  try {
    itemUrl = parseRegexCall(get("item_url"));
  } catch (error) {
    problems.push(`${path}.item_url: ${(error as Error).message}`);
  }
  const datasource = (raw.datasource ?? {}) as Doc;
  checkDatasource(datasource, `${path}.datasource`, problems);
  const schema = isPlainObject(raw.schema)
    ? expandShorthand(raw.schema)
    : (raw.schema ?? {}) as ResourceSchema;
  checkUrlFields(urlParts, schema, { path, allowUnknown: get("allow_unknown"), problems });
  const additional = raw.additional_lookup as Doc | undefined;
  let additionalLookup: Resource["additionalLookup"];
  if (additional) {
    const fieldRules = typeof additional.field === "string" &&
        Object.hasOwn(schema, additional.field)
      ? schema[additional.field]
      : undefined;
    if (fieldRules?.type === "integer") {
      // As in Eve, an integer field is looked up by digits, whatever `url` says.
      additionalLookup = { url: "[0-9]+", field: additional.field as string };
    } else if (typeof additional.url !== "string" || typeof additional.field !== "string") {
      problems.push(
        `${path}.additional_lookup: needs "url" (regex) and "field" strings ("url" may be ` +
          `left out for an integer field)`,
      );
    } else {
      try {
        const pattern = /^regex\(/.test(additional.url)
          ? parseRegexCall(additional.url)
          : additional.url;
        additionalLookup = { url: pattern, field: additional.field };
      } catch (error) {
        problems.push(`${path}.additional_lookup.url: ${(error as Error).message}`);
      }
    }
  }
  const idField = get("id_field") as string;
  // As in Eve, the resource title defaults to the url (the home `child` and an item's
  // `collection` link titles), except for a url with variables (a sub-resource), where the
  // name reads better; item titles keep the spec's rule on the name.
  const givenTitle = raw.resource_title as string | undefined;
  const literalUrl = urlParts.every((part) => typeof part === "string");
  const resourceTitle = givenTitle ?? (literalUrl ? urlParts.join("/") || name : name);
  const defaultSort = (datasource.default_sort ?? raw.default_sort) as unknown;
  const sort = defaultSort === undefined ? undefined : toSort(defaultSort, {
    path: `${path}.default_sort`,
    problems,
    parseText: options.parseSortText,
  });
  const aggregation = datasource.aggregation as Resource["aggregation"] | undefined;
  return {
    name,
    url: urlParts.map((p) => typeof p === "string" ? p : `<${p.field}>`).join("/"),
    urlParts,
    source: (datasource.source as string | undefined) ?? name,
    filter: (datasource.filter as Doc | undefined) ?? {},
    projection: datasource.projection as Resource["projection"],
    defaultSort: sort,
    aggregation,
    schema,
    schemaModel: buildSchemaModel(schema, {
      types: options.types,
      idField,
      allowUnknown: get("allow_unknown"),
      metaFields: {
        [settings.DATE_CREATED]: "datetime",
        [settings.DATE_UPDATED]: "datetime",
        [settings.ETAG]: "string",
        [settings.DELETED]: "boolean",
      },
    }),
    resourceTitle,
    itemTitle: (raw.item_title as string | undefined) ?? (givenTitle ?? name).replace(/s$/, ""),
    // As in Eve, an aggregation endpoint is read-only whatever RESOURCE_METHODS says.
    resourceMethods: aggregation ? ["GET"] : upper(get("resource_methods")),
    itemMethods: upper(get("item_methods")),
    itemLookupField: (get("item_lookup_field") as string | null) ?? idField,
    itemUrl,
    itemLookup: get("item_lookup"),
    additionalLookup,
    idField,
    cacheControl: get("cache_control"),
    cacheExpires: get("cache_expires"),
    allowUnknown: get("allow_unknown"),
    normalizeOnPatch: get("normalize_on_patch"),
    sorting: get("sorting") && !aggregation,
    pagination: get("pagination"),
    paginationLimit: get("pagination_limit"),
    paginationDefault: get("pagination_default"),
    optimizePagination: get("optimize_pagination_for_speed"),
    embedding: get("embedding"),
    embeddedFields: (raw.embedded_fields as string[] | undefined) ?? [],
    hidden: raw.hidden_fields as string[] | undefined,
    hateoas: get("hateoas"),
    softDelete: get("soft_delete"),
    versioning: get("versioning"),
    internal: get("internal_resource") === true,
    bulkEnabled: get("bulk_enabled"),
    upsertOnPut: get("upsert_on_put"),
    mergeNestedDocuments: get("merge_nested_documents"),
    allowedFilters: get("allowed_filters"),
    validateFiltering: get("validate_filtering"),
    queryBlacklist: get("query_blacklist"),
    queryWhitelist: get("mongo_query_whitelist"),
    projectionEnabled: get("projection"),
    ifMatch: get("if_match"),
    enforceIfMatch: get("enforce_if_match"),
    normalizeDotted: get("normalize_dotted_fields"),
    extraResponseFields: get("extra_response_fields"),
    queryObjectIdAsString: get("query_objectid_as_string"),
    indexes: readIndexes(raw.mongo_indexes, `${path}.mongo_indexes`, problems),
    extra: { mongo_write_concern: raw.mongo_write_concern },
  };
}

/**
 * A sub-resource's URL variables are stored in its documents, so each must be a schema
 * field (unless unknown fields are allowed): otherwise every POST would fail naming a field
 * the client never sent.
 */
function checkUrlFields(
  urlParts: Resource["urlParts"],
  schema: ResourceSchema,
  options: { path: string; allowUnknown: boolean; problems: string[] },
) {
  if (options.allowUnknown || !isPlainObject(schema)) return;
  for (const part of urlParts) {
    if (typeof part === "string" || Object.hasOwn(schema, part.field)) continue;
    options.problems.push(
      `${options.path}.url: the URL variable "${part.field}" is not a field of the schema ` +
        `(declare it, e.g. "${part.field}": {"type": "objectid"})`,
    );
  }
}

const DATASOURCE_KEYS = ["source", "filter", "projection", "default_sort", "aggregation"];

function checkDatasource(datasource: Doc, path: string, problems: string[]) {
  for (const key of Object.keys(datasource)) {
    if (!DATASOURCE_KEYS.includes(key)) {
      problems.push(
        `${path}.${key}: unknown datasource key (known: ${DATASOURCE_KEYS.join(", ")})`,
      );
    }
  }
  if ("source" in datasource && typeof datasource.source !== "string") {
    problems.push(`${path}.source: must be a collection name`);
  }
  for (const key of ["filter", "projection"]) {
    if (key in datasource && !isPlainObject(datasource[key])) {
      problems.push(`${path}.${key}: must be an object`);
    }
  }
  const projection = datasource.projection as Doc | undefined;
  if (projection && Object.values(projection).some((v) => v !== 0 && v !== 1)) {
    problems.push(`${path}.projection: values must be 0 or 1`);
  }
  const aggregation = datasource.aggregation as Doc | undefined;
  if (aggregation !== undefined) {
    if (!isPlainObject(aggregation) || !Array.isArray(aggregation.pipeline)) {
      problems.push(`${path}.aggregation: must be {"pipeline": [stages]}`);
    } else if (!aggregation.pipeline.every(isPlainObject)) {
      problems.push(`${path}.aggregation.pipeline: every stage must be an object`);
    }
    if (isPlainObject(aggregation)) {
      for (const key of Object.keys(aggregation)) {
        if (key !== "pipeline" && key !== "options") {
          problems.push(`${path}.aggregation.${key}: unknown key (known: pipeline, options)`);
        }
      }
      if (aggregation.options !== undefined) {
        checkAggregateOptions(aggregation.options, `${path}.aggregation.options`, problems);
      }
    }
  }
}

/** MongoDB's `aggregate` options and what each must be. */
const AGGREGATE_OPTIONS: Readonly<Record<string, [string, (value: unknown) => boolean]>> = {
  let: ["an object", isPlainObject],
  collation: ["an object", isPlainObject],
  hint: ["an index name or key pattern", (v) => typeof v === "string" || isPlainObject(v)],
  comment: ["any value", () => true],
  maxTimeMS: ["a whole number of 0 or more", (v) => Number.isInteger(v) && (v as number) >= 0],
  batchSize: ["a whole number of 0 or more", (v) => Number.isInteger(v) && (v as number) >= 0],
  allowDiskUse: ["a boolean", (v) => typeof v === "boolean"],
  bypassDocumentValidation: ["a boolean", (v) => typeof v === "boolean"],
};

/** Checks an aggregation endpoint's `options` as MongoDB's `aggregate` takes them. */
function checkAggregateOptions(options: unknown, path: string, problems: string[]): void {
  if (!isPlainObject(options)) {
    problems.push(`${path}: must be an object`);
    return;
  }
  for (const [name, value] of Object.entries(options)) {
    const known = Object.hasOwn(AGGREGATE_OPTIONS, name) ? AGGREGATE_OPTIONS[name] : undefined;
    if (!known) {
      problems.push(
        `${path}.${name}: unknown aggregate option (did you mean ${
          closest(name, Object.keys(AGGREGATE_OPTIONS))
        }?)`,
      );
    } else if (!known[1](value)) problems.push(`${path}.${name}: must be ${known[0]}`);
  }
}

/**
 * Accepts `{"a": 1}`, `[["a", 1]]` and the text forms of `?sort` (`"-a,b"`, `[("a", 1)]`),
 * read by the same parser as the query parameter.
 */
function toSort(
  value: unknown,
  options: { path: string; problems: string[]; parseText: SortTextParser },
): Sort | undefined {
  const { path, problems } = options;
  const sort: Sort = {};
  if (typeof value === "string") {
    try {
      return options.parseText(value);
    } catch (error) {
      problems.push(`${path}: ${(error as Error).message}`);
      return undefined;
    }
  }
  const pairs = Array.isArray(value) ? value : isPlainObject(value) ? Object.entries(value) : null;
  if (
    !pairs ||
    !pairs.every((p) => Array.isArray(p) && typeof p[0] === "string" && (p[1] === 1 || p[1] === -1))
  ) {
    problems.push(`${path}: must be a list of [field, 1 or -1] pairs`);
    return undefined;
  }
  for (const [field, direction] of pairs) sort[field] = direction;
  return sort;
}
