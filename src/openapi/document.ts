/**
 * The OpenAPI 3.1 description of the service, built once at start-up from the frozen domain
 * and the compiled schemas: every public endpoint the router serves (collections, items,
 * additional lookups, sub-resources, aggregation endpoints), the home, schema and media
 * endpoints, their parameters, bodies, answers and security.
 */
import type { Method, Resource } from "../domain/types.ts";
import type { Settings } from "../settings/check.ts";
import type { Runtime } from "../services/runtime.ts";
import { buildRoutes, type Endpoint, type EndpointKind } from "../domain/endpoints.ts";
import type { Scheme } from "../auth/types.ts";
import type { Auth } from "../auth/mod.ts";
import { setOwn } from "../domain/keys.ts";
import type { OpenApiConfig } from "./config.ts";
import { documentSchema, type Json, type Mode, type TranslateOptions } from "./schema.ts";
import {
  parameterRef,
  responseRef,
  schemaRef,
  SECURITY_NAMES,
  securitySchemes,
  sharedParameters,
  sharedResponses,
  sharedSchemas,
} from "./components.ts";

/** The version of the description format. */
export const OPENAPI_VERSION = "3.1.0";

export interface DescribeOptions {
  config: OpenApiConfig;
  /** Rate limiting is on: every operation may answer 429. */
  rateLimited: boolean;
  /** Authentication (its schemes and roles are described); absent when the API has none. */
  auth?: Auth;
}

type AuthKind = EndpointKind | "home" | "schema" | "media";

/** Builds the description. Pure: reads the runtime's frozen domain, settings and schemas. */
export function describeApi(rt: Runtime, options: DescribeOptions): Json {
  return new Describer(rt, options).document();
}

const LOWER: Record<Method, string> = {
  GET: "get",
  HEAD: "head",
  POST: "post",
  PATCH: "patch",
  PUT: "put",
  DELETE: "delete",
};

class Describer {
  private readonly settings: Settings;
  private readonly schemas: Json = {};
  private readonly paths: Json = {};
  private readonly visible: Resource[];

  constructor(private readonly rt: Runtime, private readonly options: DescribeOptions) {
    this.settings = rt.settings;
    this.visible = [...rt.domain.values()].filter((r) => !r.internal);
  }

  document(): Json {
    const settings = this.settings;
    for (const resource of this.visible) this.resourceSchemas(resource);
    this.home();
    for (const endpoint of buildRoutes(this.rt.domain)) this.endpoint(endpoint);
    this.schemaEndpoint();
    this.mediaEndpoint();
    this.headOf([
      `/${this.settings.SCHEMA_ENDPOINT}`,
      `/${this.settings.SCHEMA_ENDPOINT}/{resource}`,
    ]);
    this.headOf([`/${this.settings.MEDIA_ENDPOINT}/{file}`]);
    this.changeFeeds();
    const components: Json = {
      schemas: Object.assign(sharedSchemas(settings), this.schemas),
      parameters: sharedParameters(settings),
      responses: sharedResponses(settings),
    };
    const answers: Json[] = Object.values(components.responses as Json) as Json[];
    for (const item of Object.values(this.paths as Record<string, Json>)) {
      for (const op of Object.values(item) as Json[]) {
        anyError(op.responses as Json);
        answers.push(...Object.values(op.responses as Json) as Json[]);
      }
    }
    for (const answer of answers) renderings(answer, settings);
    const auth = this.options.auth?.config;
    if (auth) components.securitySchemes = securitySchemes(auth.schemes, auth.realm);
    return {
      openapi: OPENAPI_VERSION,
      info: {
        title: "REST API",
        version: settings.API_VERSION || "1",
        description: "Generated from the service's settings at start-up.",
      },
      servers: [{ url: this.rt.urls.apiRoot() }],
      tags: [
        { name: "home", description: "The API entry point" },
        ...this.visible.map((r) => ({ name: r.name, description: r.resourceTitle })),
      ],
      paths: this.paths,
      components,
    };
  }

  // ---- schemas -------------------------------------------------------------------------

  private translate(resource: Resource, mode: Mode, media?: "binary" | "omit"): Json {
    const compiled = this.rt.schemas.get(resource.name);
    if (!compiled) return { type: "object" };
    const settings = this.settings;
    const options: TranslateOptions = {
      mode,
      media,
      mediaOutput: {
        asUrl: settings.RETURN_MEDIA_AS_URL,
        asBase64: settings.RETURN_MEDIA_AS_BASE64_STRING,
        info: settings.EXTENDED_MEDIA_INFO,
      },
      relations: resource.schemaModel.relations,
      embeddedRef: (name) => {
        const target = this.rt.domain.get(name);
        return target && !target.internal ? `#/components/schemas/${name}.item` : null;
      },
      dateFormat: settings.DATE_FORMAT,
    };
    return documentSchema(compiled.model(), options);
  }

  /** `<name>.item`, `.input`, `.patch`, `.form`, `.page`, `.diffs`, `.written`, `.bulk`. */
  private resourceSchemas(resource: Resource) {
    const settings = this.settings;
    const name = resource.name;
    const add = (suffix: string, schema: Json) => setOwn(this.schemas, `${name}.${suffix}`, schema);
    const item = resource.aggregation ? { type: "object" } : this.itemSchema(resource);
    add("item", item);
    const page: Json = { [settings.ITEMS]: { type: "array", items: schemaRef(`${name}.item`) } };
    if (resource.pagination) page[settings.META] = schemaRef("Meta");
    if (resource.hateoas) page[settings.LINKS] = schemaRef("Links");
    add("page", { type: "object", properties: page, required: [settings.ITEMS] });
    if (resource.versioning && !resource.aggregation) {
      // version=diffs: after the first, a diff holds only the fields that changed.
      const { required: _required, ...diff } = item;
      const diffs: Json = { ...page, [settings.ITEMS]: { type: "array", items: diff } };
      add("diffs", { type: "object", properties: diffs, required: [settings.ITEMS] });
    }
    const writes = [...resource.resourceMethods, ...resource.itemMethods]
      .some((m) => m === "POST" || m === "PUT" || m === "PATCH");
    if (!writes) return;
    add("input", this.translate(resource, "input", "omit"));
    add("patch", this.translate(resource, "patch", "omit"));
    if (hasMedia(resource)) {
      add("form", this.translate(resource, "input", "binary"));
      add("formPatch", this.translate(resource, "patch", "binary"));
    }
    add("written", this.writtenSchema(resource));
    add("bulk", {
      type: "object",
      properties: {
        [settings.STATUS]: { const: settings.STATUS_OK },
        [settings.ITEMS]: { type: "array", items: schemaRef(`${name}.written`) },
      },
    });
  }

  /** A document as read: no hidden or unreadable field, the meta fields added. */
  private itemSchema(resource: Resource): Json {
    const settings = this.settings;
    const schema = this.translate(resource, "output");
    const properties = (schema.properties ?? {}) as Json;
    for (const path of resource.hidden ?? []) dropPath(schema, path.split("."));
    for (const [path, v] of Object.entries(resource.projection ?? {})) {
      if (v === 0) dropPath(schema, path.split("."));
    }
    if (resource.readable) keepPaths(schema, resource.readable.map((p) => p.split(".")));
    const meta: Json = {
      [settings.DATE_CREATED]: { type: "string", description: `a date in DATE_FORMAT` },
      [settings.DATE_UPDATED]: { type: "string", description: `a date in DATE_FORMAT` },
    };
    if (resource.ifMatch) meta[settings.ETAG] = { type: "string" };
    if (resource.softDelete) meta[settings.DELETED] = { type: "boolean" };
    if (resource.versioning) {
      meta[settings.VERSION] = { type: "integer", minimum: 1 };
      meta[settings.LATEST_VERSION] = { type: "integer", minimum: 1 };
    }
    if (resource.hateoas) meta[settings.LINKS] = schemaRef("Links");
    for (const [k, v] of Object.entries(meta)) setOwn(properties, k, v);
    if (!Object.hasOwn(properties, resource.idField)) {
      setOwn(properties, resource.idField, { type: "string" });
    }
    schema.properties = properties;
    schema.required = [resource.idField];
    return schema;
  }

  /** The write response: meta fields (the whole document without BANDWIDTH_SAVER). */
  private writtenSchema(resource: Resource): Json {
    const settings = this.settings;
    const properties: Json = {
      [resource.idField]: { type: "string" },
      [settings.DATE_CREATED]: { type: "string" },
      [settings.DATE_UPDATED]: { type: "string" },
      [settings.STATUS]: { const: settings.STATUS_OK },
    };
    if (resource.ifMatch) properties[settings.ETAG] = { type: "string" };
    if (resource.softDelete) properties[settings.DELETED] = { type: "boolean" };
    if (resource.versioning) {
      properties[settings.VERSION] = { type: "integer" };
      properties[settings.LATEST_VERSION] = { type: "integer" };
    }
    if (resource.hateoas) properties[settings.LINKS] = schemaRef("Links");
    const written: Json = { type: "object", properties, required: [settings.STATUS] };
    return settings.BANDWIDTH_SAVER
      ? written
      : { allOf: [schemaRef(`${resource.name}.item`), written] };
  }

  // ---- paths ---------------------------------------------------------------------------

  private operationsAt(path: string): Json {
    if (!Object.hasOwn(this.paths, path)) setOwn(this.paths, path, {});
    return this.paths[path] as Json;
  }

  private home() {
    const ops = this.operationsAt("/");
    const responses = {
      "200": {
        description: "Links to every resource",
        content: { "application/json": { schema: schemaRef("Home") } },
      },
    };
    ops.get = this.secured(
      { operationId: "home_get", tags: ["home"], summary: "The API entry point", responses },
      { kind: "home", resource: null, method: "GET" },
    );
    ops.head = this.secured(
      {
        operationId: "home_head",
        tags: ["home"],
        summary: "What GET / would answer, without the body",
        responses: { "200": { description: "What GET would answer, without the body" } },
      },
      { kind: "home", resource: null, method: "HEAD" },
    );
  }

  private endpoint(endpoint: Endpoint) {
    const { resource, kind } = endpoint;
    const base = pathOf(resource);
    const parameters = resource.urlParts.filter((p) => typeof p !== "string").map((v) => ({
      name: v.field,
      in: "path",
      required: true,
      description: `the ${v.field} of the documents`,
      schema: { type: "string", pattern: `^(?:${v.pattern})$` },
    }));
    if (kind === "collection") {
      const ops = this.operationsAt(base);
      for (const method of endpoint.methods) {
        const op = this.collectionOp(resource, method);
        if (op) {
          ops[LOWER[method]] = { ...op, parameters: [...parameters, ...(op.parameters as Json[])] };
        }
      }
      return;
    }
    const lookup = kind === "lookup"
      ? resource.additionalLookup!
      : { url: resource.itemUrl, field: resource.itemLookupField };
    const id = {
      name: lookup.field,
      in: "path",
      required: true,
      description: `the ${lookup.field} of the item`,
      schema: { type: "string", pattern: `^(?:${lookup.url})$` },
    };
    // OpenAPI can't tell `/people/{_id}` from `/people/{lastname}`: when both exist, the
    // lookup is one more form of the item's GET parameter.
    const merged = kind === "lookup" && resource.itemLookup && resource.itemUrl &&
      resource.itemMethods.includes("GET");
    if (merged) {
      const path = `${base}/{${resource.itemLookupField}}`;
      this.mergeLookup(this.operationsAt(path), resource.itemLookupField, lookup);
      return;
    }
    const ops = this.operationsAt(`${base}/{${lookup.field}}`);
    for (const method of endpoint.methods) {
      const op = this.itemOp(resource, method, kind);
      if (op) {
        ops[LOWER[method]] = {
          ...op,
          parameters: [...parameters, id, ...(op.parameters as Json[])],
        };
      }
    }
  }

  /** Adds the additional lookup to the item GET/HEAD of the same path. */
  private mergeLookup(ops: Json, id: string, lookup: { url: string; field: string }) {
    for (const verb of ["get", "head"]) {
      const op = ops[verb] as Json | undefined;
      const params = op?.parameters as Json[] | undefined;
      const i = params?.findLastIndex((p) => p.in === "path" && p.name === id) ?? -1;
      if (!op || !params || i < 0) continue;
      const param = params[i];
      params[i] = {
        ...param,
        description: `${param.description as string}, or its ${lookup.field} (additional lookup)`,
        schema: { anyOf: [param.schema, { type: "string", pattern: `^(?:${lookup.url})$` }] },
      };
      op.description = `Also reads the item by its ${lookup.field}: a value that is not ` +
        `a ${id} is looked up as ${lookup.field} (read-only).`;
    }
    // The lookup is read-only: a write to a lookup value is refused.
    for (const verb of ["patch", "put", "delete"]) {
      const op = ops[verb] as Json | undefined;
      if (!op) continue;
      (op.responses as Json)["405"] = responseRef("MethodNotAllowed");
      op.description = `A ${lookup.field} (additional lookup) in place of the ${id} is ` +
        "refused with 405: the lookup is read-only.";
    }
  }

  private readParams(resource: Resource, kind: EndpointKind): Json[] {
    const params: Json[] = [];
    const collection = kind === "collection";
    if (collection) {
      if (resource.allowedFilters.length && !resource.aggregation) {
        params.push(parameterRef("where"));
      }
      if (resource.sorting && !resource.aggregation) params.push(parameterRef("sort"));
      if (resource.pagination) {
        params.push(parameterRef("page"), {
          name: this.settings.QUERY_MAX_RESULTS,
          in: "query",
          description: `Page size (default ${resource.paginationDefault})`,
          schema: { type: "integer", minimum: 1, maximum: resource.paginationLimit },
        });
      }
      if (resource.aggregation) params.push(parameterRef("aggregate"));
      if (resource.softDelete) params.push(parameterRef("show_deleted"));
    }
    if (resource.projectionEnabled && !resource.aggregation) {
      params.push(parameterRef("projection"));
    }
    if (
      resource.embedding && !resource.aggregation &&
      Object.values(resource.schemaModel.relations).some((r) => r.embeddable)
    ) params.push(parameterRef("embedded"));
    if (!collection) {
      if (resource.versioning) params.push(parameterRef("version"));
      params.push(parameterRef("IfNoneMatch"), parameterRef("IfModifiedSince"));
    }
    params.push(parameterRef("pretty"));
    if (this.settings.JSONP_ARGUMENT) params.push(parameterRef("jsonp"));
    return params;
  }

  private collectionOp(resource: Resource, method: Method): Json | null {
    const name = resource.name;
    const target = { kind: "collection" as const, resource, method };
    const base = { tags: [name], operationId: `collection_${method.toLowerCase()}_${name}` };
    switch (method) {
      case "GET":
      case "HEAD": {
        const page = json(schemaRef(`${name}.page`));
        // A counted page tells its total in a field too (HEADER_TOTAL_COUNT), as in Eve.
        const counted = resource.pagination && !resource.optimizePagination &&
          !resource.aggregation;
        const headers = counted
          ? {
            headers: {
              [this.settings.HEADER_TOTAL_COUNT]: {
                description: "How many documents the filter matches (the page's total)",
                schema: { type: "string", pattern: "^[0-9]+$" },
              },
            },
          }
          : {};
        const ok = method === "GET"
          ? { description: `A page of ${resource.resourceTitle}`, ...headers, content: page }
          : { description: "What GET would answer, without the body", ...headers };
        return this.secured({
          ...base,
          summary: resource.aggregation
            ? `Run the ${name} aggregation`
            : `List ${resource.resourceTitle}`,
          parameters: this.readParams(resource, "collection"),
          responses: { "200": ok, "400": responseRef("BadRequest") },
        }, target);
      }
      case "POST": {
        const input = schemaRef(`${name}.input`);
        const schema = resource.bulkEnabled
          ? {
            anyOf: [input, {
              type: "array",
              items: input,
              maxItems: this.settings.BULK_MAX_DOCUMENTS,
            }],
          }
          : input;
        const content: Json = { "application/json": { schema } };
        if (hasMedia(resource)) {
          content["multipart/form-data"] = { schema: schemaRef(`${name}.form`) };
        }
        const created = resource.bulkEnabled
          ? { anyOf: [schemaRef(`${name}.written`), schemaRef(`${name}.bulk`)] }
          : schemaRef(`${name}.written`);
        return this.secured({
          ...base,
          summary: `Create ${resource.itemTitle}` + (resource.bulkEnabled ? " (or a list)" : ""),
          parameters: [],
          requestBody: { required: true, content },
          responses: {
            "201": {
              description: "Created",
              headers: { Location: { description: "URL of the (first) new item", schema: str() } },
              content: json(created),
            },
            "400": responseRef("BadRequest"),
            "409": responseRef("BadRequest"),
            "413": responseRef("TooLarge"),
            [String(this.settings.VALIDATION_ERROR_STATUS)]: responseRef("Invalid"),
          },
        }, target);
      }
      case "DELETE":
        return this.secured({
          ...base,
          summary: `Delete every ${resource.itemTitle}` +
            (resource.urlParts.some((p) => typeof p !== "string") ? " under this URL" : ""),
          parameters: [],
          responses: {
            "204": { description: "Deleted" },
            "404": responseRef("NotFound"),
          },
        }, target);
    }
    return null;
  }

  private itemOp(resource: Resource, method: Method, kind: EndpointKind): Json | null {
    const name = resource.name;
    const target = { kind, resource, method };
    const base = { tags: [name], operationId: `${kind}_${method.toLowerCase()}_${name}` };
    const cacheHeaders = {
      ETag: { schema: str() },
      "Last-Modified": { schema: str() },
    };
    const ifMatch = resource.ifMatch
      ? [{
        name: "If-Match",
        in: "header",
        required: resource.enforceIfMatch,
        description: "The ETag of the item as last read",
        schema: str(),
      }]
      : [];
    const conditional: Json = {};
    if (resource.ifMatch) {
      conditional["412"] = responseRef("PreconditionFailed");
      if (resource.enforceIfMatch) conditional["428"] = responseRef("PreconditionRequired");
    }
    switch (method) {
      case "GET":
      case "HEAD": {
        const item = schemaRef(`${name}.item`);
        const body = resource.versioning
          ? { anyOf: [item, schemaRef(`${name}.page`), schemaRef(`${name}.diffs`)] }
          : item;
        const ok = method === "GET"
          ? {
            description: resource.versioning
              ? `The ${resource.itemTitle} (a page of versions for version=all, of diffs for diffs)`
              : `The ${resource.itemTitle}`,
            headers: cacheHeaders,
            content: json(body),
          }
          : { description: "What GET would answer, without the body", headers: cacheHeaders };
        return this.secured({
          ...base,
          summary: `Read one ${resource.itemTitle}`,
          parameters: this.readParams(resource, kind),
          responses: {
            "200": ok,
            "304": responseRef("NotModified"),
            "400": responseRef("BadRequest"),
            "404": responseRef("NotFound"),
          },
        }, target);
      }
      case "PATCH":
      case "PUT": {
        const patch = method === "PATCH";
        const content: Json = {
          "application/json": { schema: schemaRef(`${name}.${patch ? "patch" : "input"}`) },
        };
        if (hasMedia(resource)) {
          content["multipart/form-data"] = {
            schema: schemaRef(`${name}.${patch ? "formPatch" : "form"}`),
          };
        }
        const written = json(schemaRef(`${name}.written`));
        const responses: Json = {
          "200": { description: patch ? "Updated" : "Replaced", content: written },
        };
        if (!patch && resource.upsertOnPut) {
          responses["201"] = { description: "Created (no such item yet)", content: written };
        }
        Object.assign(responses, {
          "400": responseRef("BadRequest"),
          "404": responseRef("NotFound"),
          ...conditional,
          "413": responseRef("TooLarge"),
          [String(this.settings.VALIDATION_ERROR_STATUS)]: responseRef("Invalid"),
        });
        return this.secured({
          ...base,
          summary: patch
            ? `Change fields of one ${resource.itemTitle}`
            : `Replace one ${resource.itemTitle}`,
          parameters: ifMatch,
          requestBody: { required: true, content },
          responses,
        }, target);
      }
      case "DELETE":
        return this.secured({
          ...base,
          summary: `Delete one ${resource.itemTitle}` + (resource.softDelete ? " (soft)" : ""),
          parameters: ifMatch,
          responses: {
            "204": { description: "Deleted" },
            "404": responseRef("NotFound"),
            ...conditional,
          },
        }, target);
    }
    return null;
  }

  private schemaEndpoint() {
    const name = this.settings.SCHEMA_ENDPOINT;
    if (!name) return;
    const target = { kind: "schema" as const, resource: null, method: "GET" };
    const schema = { type: "object", description: "Eve schemas, as in the settings" };
    this.operationsAt(`/${name}`).get = this.secured({
      tags: ["home"],
      operationId: "schema_get_all",
      summary: "Every readable resource's schema, by resource name",
      responses: { "200": { description: "Schemas", content: json(schema) } },
    }, target);
    this.operationsAt(`/${name}/{resource}`).get = this.secured({
      tags: ["home"],
      operationId: "schema_get_one",
      summary: "One resource's schema",
      parameters: [{
        name: "resource",
        in: "path",
        required: true,
        schema: { enum: this.visible.map((r) => r.name) },
      }],
      responses: {
        "200": { description: "The schema", content: json(schema) },
        "404": responseRef("NotFound"),
      },
    }, target);
  }

  /** HEAD beside the GET of each of `paths` that has one: the same answers, no body. */
  private headOf(paths: string[]) {
    for (const path of paths) {
      const item = (this.paths as Record<string, Json>)[path] as Json | undefined;
      const get = item?.get as Json | undefined;
      if (!item || !get) continue;
      const responses: Json = {};
      for (const [status, answer] of Object.entries(get.responses as Json)) {
        responses[status] = (answer as Json).$ref ? answer : {
          description: (answer as Json).description,
          ...((answer as Json).headers ? { headers: (answer as Json).headers } : {}),
        };
      }
      item.head = {
        ...get,
        operationId: `${get.operationId as string}_head`,
        summary: `${get.summary as string} (HEAD: the headers alone)`,
        responses,
      };
    }
  }

  /** `GET /<resource>/<CHANGES_ENDPOINT>`: the resource's change feed (docs/oplog-and-change-feed.md). */
  private changeFeeds() {
    const config = this.rt.changes?.config;
    if (!config) return;
    for (const resource of this.visible) {
      const feed = config.resources.get(resource.name);
      if (!feed || !resource.resourceMethods.includes("GET")) continue;
      const parameters: Json[] = resource.urlParts.filter((p) => typeof p !== "string").map((
        v,
      ) => ({ name: v.field, in: "path", required: true, schema: { type: "string" } }));
      if (resource.allowedFilters.length) parameters.push(parameterRef("where"));
      if (feed.documents) {
        parameters.push({
          name: "documents",
          in: "query",
          description: "1: events carry the document as a GET shows it",
          schema: { type: "string", enum: ["0", "1"] },
        });
      }
      parameters.push(
        {
          name: "Last-Event-ID",
          in: "header",
          description: "Resume after this event (within the retention window)",
          schema: { type: "string", maxLength: 64 },
        },
        { name: "last_event_id", in: "query", schema: { type: "string", maxLength: 64 } },
      );
      const name = resource.name;
      this.operationsAt(`${pathOf(resource)}/${config.endpoint}`).get = this.secured({
        tags: [name],
        operationId: `changes_get_${name}`,
        summary: `Server-Sent Events: inserts, updates, replaces and deletes of ${name}`,
        parameters,
        responses: {
          "200": {
            description: "An event stream: `ready` or `reset` first, then one event per change " +
              "(`insert`, `update`, `replace`, `delete`) with `id:` usable as Last-Event-ID; " +
              "comment lines as heartbeats",
            content: { "text/event-stream": { schema: { type: "string" } } },
          },
          "400": responseRef("BadRequest"),
          "503": responseRef("Unavailable"),
        },
      }, { kind: "collection", resource, method: "GET" });
    }
  }

  private mediaEndpoint() {
    const settings = this.settings;
    if (!settings.RETURN_MEDIA_AS_URL || !this.visible.some(hasMedia)) return;
    const target = { kind: "media" as const, resource: null, method: "GET" };
    // A file is served with the content type it was stored with.
    const binary = {
      "*/*": { schema: { type: "string", format: "binary" } },
    };
    this.operationsAt(`/${settings.MEDIA_ENDPOINT}/{file}`).get = this.secured({
      tags: ["home"],
      operationId: "media_get",
      summary: "Download a stored file (media field URLs point here)",
      parameters: [
        {
          name: "file",
          in: "path",
          required: true,
          schema: { type: "string", pattern: "^[0-9a-fA-F]{24}$" },
        },
        { name: "Range", in: "header", schema: { type: "string", example: "bytes=0-1023" } },
        parameterRef("IfNoneMatch"),
        parameterRef("IfModifiedSince"),
      ],
      responses: {
        "200": { description: "The file", content: binary },
        "206": { description: "The requested range", content: binary },
        "304": responseRef("NotModified"),
        "404": responseRef("NotFound"),
        "416": { description: "Range not satisfiable" },
      },
    }, target);
  }

  /**
   * Adds the operation's security (none when public; optional for the schema and media
   * endpoints, whose answers depend on who asks) and its 401/403/429 answers.
   */
  private secured(
    op: Json,
    target: { kind: AuthKind; resource: Resource | null; method: string },
  ): Json {
    const responses = op.responses as Json;
    if (this.options.rateLimited) responses["429"] = responseRef("TooManyRequests");
    const auth = this.options.auth;
    if (!auth) return op;
    const method = target.method;
    const roles = auth.required({ ...target, method });
    const optional = target.kind === "schema" || target.kind === "media";
    if (roles === null && !optional) return { ...op, security: [] };
    const rules = target.resource ? auth.rules(target.resource) : undefined;
    const schemes: Iterable<Scheme> = rules?.schemes || auth.config.schemes;
    const security = [...schemes].map((scheme) => SECURITY_NAMES[scheme])
      .filter((n): n is string => n !== null).map((n) => ({ [n]: [] }));
    responses["401"] = responseRef("Unauthorized");
    if (roles?.length) responses["403"] = responseRef("Forbidden");
    return { ...op, security: optional ? [{}, ...security] : security };
  }
}

/**
 * Every operation may also answer another client error (`4XX`: a body or URL over a limit,
 * a content type it does not read, an owner or role rule, a write rule ...) or a server
 * error (`5XX`), always with the error envelope.
 */
function anyError(responses: Json) {
  responses["4XX"] ??= responseRef("ClientError");
  responses["5XX"] ??= responseRef("ServerError");
}

/**
 * The other renderings of a JSON answer: XML when RENDERERS has it (chosen by `Accept`),
 * JSONP's JavaScript when JSONP_ARGUMENT is set (chosen by that query parameter); with no
 * `json` renderer, answers are XML unless JSONP.
 */
function renderings(answer: Json, s: Settings) {
  const content = answer.content as Json | undefined;
  if (!content?.["application/json"]) return;
  const renderers = s.RENDERERS.map((r) => r.toLowerCase());
  const xml = renderers.includes("xml");
  if (xml) {
    content["application/xml"] = {
      schema: { type: "string", description: "the JSON answer's document as XML" },
    };
  }
  const jsonp = s.JSONP_ARGUMENT as string | null;
  if (jsonp) {
    content["application/javascript"] = {
      schema: {
        type: "string",
        description: `the JSON answer wrapped in a call of the ${jsonp} parameter's function`,
      },
    };
  }
  if (!renderers.includes("json") && xml) delete content["application/json"];
}

/** A resource's URL as an OpenAPI path template: `/people/{owner}/works`. */
function pathOf(resource: Resource): string {
  return "/" + resource.urlParts.map((p) => typeof p === "string" ? p : `{${p.field}}`).join("/");
}

function hasMedia(resource: Resource): boolean {
  return resource.schemaModel.mediaPaths.length > 0;
}

const str = (): Json => ({ type: "string" });
const json = (schema: Json): Json => ({ "application/json": { schema } });

/** Removes the field at `path` (through nested dicts and list members). */
function dropPath(schema: Json, path: string[]) {
  const target = objectAt(schema);
  const properties = target?.properties as Json | undefined;
  if (!properties || !Object.hasOwn(properties, path[0])) return;
  if (path.length === 1) {
    delete properties[path[0]];
    if (Array.isArray(target!.required)) {
      target!.required = (target!.required as string[]).filter((n) => n !== path[0]);
    }
  } else dropPath(properties[path[0]] as Json, path.slice(1));
}

/** Keeps only the fields at `paths` (and every meta field, added later). */
function keepPaths(schema: Json, paths: string[][]) {
  const target = objectAt(schema);
  const properties = target?.properties as Json | undefined;
  if (!properties) return;
  for (const name of Object.keys(properties)) {
    if (paths.some((p) => p.length === 1 && p[0] === name)) continue;
    const deeper = paths.filter((p) => p.length > 1 && p[0] === name).map((p) => p.slice(1));
    if (deeper.length) keepPaths(properties[name] as Json, deeper);
    else delete properties[name];
  }
}

/** The object schema that holds a field's properties: itself, a list's members, or null's other. */
function objectAt(schema: Json): Json | undefined {
  if (schema.properties) return schema;
  if (typeof schema.items === "object" && schema.items !== null) {
    return objectAt(schema.items as Json);
  }
  if (Array.isArray(schema.anyOf)) {
    for (const branch of schema.anyOf as Json[]) {
      const found = objectAt(branch);
      if (found) return found;
    }
  }
  return undefined;
}
