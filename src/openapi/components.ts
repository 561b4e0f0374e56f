/**
 * The shared parts of the API description: envelopes (`_items`, `_meta`, `_links`), error
 * bodies (`_status`, `_error`, `_issues`), query parameters and conditional-request
 * headers, and the security schemes of the configured authentication. Names come from the
 * settings (ITEMS, META, QUERY_WHERE ...), so the description says what the service sends.
 */
import type { Settings } from "../settings/check.ts";
import type { Scheme } from "../auth/types.ts";
import type { Json } from "./schema.ts";

/** `#/components/schemas/<name>`. */
export const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
/** `#/components/parameters/<name>`. */
export const parameterRef = (name: string): Json => ({ $ref: `#/components/parameters/${name}` });
/** `#/components/responses/<name>`. */
export const responseRef = (name: string): Json => ({ $ref: `#/components/responses/${name}` });

/** Schemas every resource shares. */
export function sharedSchemas(s: Settings): Json {
  const link = schemaRef("Link");
  return {
    Link: {
      type: "object",
      properties: { href: { type: "string" }, title: { type: "string" } },
      required: ["href"],
    },
    Links: {
      type: "object",
      description: "Hypermedia links (HATEOAS); hrefs are relative to the API entry point",
      properties: {
        self: link,
        parent: link,
        collection: link,
        next: link,
        prev: link,
        last: link,
        related: {
          type: "object",
          additionalProperties: { anyOf: [link, { type: "array", items: link }] },
        },
      },
    },
    Meta: {
      type: "object",
      properties: {
        page: { type: "integer", minimum: 1 },
        max_results: { type: "integer", minimum: 1 },
        total: { type: "integer", minimum: 0, description: "absent when counts are skipped" },
      },
    },
    Error: {
      type: "object",
      properties: {
        [s.STATUS]: { const: s.STATUS_ERR },
        [s.ERROR]: schemaRef("ErrorDetail"),
      },
      required: [s.STATUS, s.ERROR],
    },
    ErrorDetail: {
      type: "object",
      properties: { code: { type: "integer" }, message: { type: "string" } },
      required: ["code", "message"],
    },
    Issues: {
      type: "object",
      description: "Problems by field name; nested fields nest",
      additionalProperties: {
        anyOf: [
          { type: "string" },
          { type: "array", items: { type: "string" } },
          schemaRef("Issues"),
        ],
      },
    },
    ValidationError: {
      type: "object",
      required: [s.STATUS, s.ERROR],
      properties: {
        [s.STATUS]: { const: s.STATUS_ERR },
        [s.ERROR]: schemaRef("ErrorDetail"),
        [s.ISSUES]: schemaRef("Issues"),
        [s.ITEMS]: {
          type: "array",
          description: "bulk inserts: one entry per document sent",
          items: {
            type: "object",
            properties: {
              [s.STATUS]: { enum: [s.STATUS_OK, s.STATUS_ERR] },
              [s.ISSUES]: schemaRef("Issues"),
            },
          },
        },
      },
    },
    Home: {
      type: "object",
      properties: {
        [s.LINKS]: {
          type: "object",
          properties: { child: { type: "array", items: link } },
        },
      },
    },
  };
}

/** Shared error answers. */
export function sharedResponses(s: Settings): Json {
  const error = (description: string) => ({
    description,
    content: { "application/json": { schema: schemaRef("Error") } },
  });
  return {
    BadRequest: error("Malformed request (query parameters, body)"),
    Unauthorized: error("Credentials missing or wrong"),
    Forbidden: error("The account lacks a role this endpoint needs"),
    NotFound: error("No such item (or not visible here)"),
    MethodNotAllowed: error("Method not enabled here"),
    PreconditionFailed: error("If-Match differs from the current ETag"),
    PreconditionRequired: error("If-Match is required"),
    TooLarge: error("Body, document or bulk insert over a limit"),
    TooManyRequests: error("Rate limit reached"),
    Unavailable: error("Busy or shutting down: try again (Retry-After when known)"),
    ClientError: error(
      "Another client error: a limit, an unsupported content type, an access or write rule",
    ),
    ServerError: error("The service could not complete the request"),
    Invalid: {
      description:
        `A document fails validation (VALIDATION_ERROR_STATUS ${s.VALIDATION_ERROR_STATUS})`,
      content: { "application/json": { schema: schemaRef("ValidationError") } },
    },
    NotModified: { description: "Not Modified" },
  };
}

/** Query parameters and headers, under their configured names. */
export function sharedParameters(s: Settings): Json {
  const query = (name: string, description: string, schema: Json = { type: "string" }) => ({
    name,
    in: "query",
    description,
    schema,
  });
  const header = (name: string, description: string) => ({
    name,
    in: "header",
    description,
    schema: { type: "string" },
  });
  const params: Json = {
    where: query(
      s.QUERY_WHERE,
      'Filter: a MongoDB query in JSON (`{"name": "ann"}`) or an expression ' +
        '(`name == "ann" and age > 30`)',
    ),
    sort: query(s.QUERY_SORT, 'Sort: `-age,name` or `[("age", -1), ("name", 1)]`'),
    page: query(s.QUERY_PAGE, "Page number (1-based)", { type: "integer", minimum: 1 }),
    projection: query(
      s.QUERY_PROJECTION,
      'Fields to include (`{"name": 1}`) or exclude (`{"name": 0}`), JSON',
    ),
    embedded: query(
      s.QUERY_EMBEDDED,
      'Embeddable relations to expand (`{"owner": 1}`), JSON',
    ),
    show_deleted: {
      ...query(s.SHOW_DELETED_PARAM, "Include soft-deleted items (a flag: no value needed)"),
      allowEmptyValue: true,
    },
    version: query(s.VERSION_PARAM, "A version number, `all` or `diffs`", {
      anyOf: [{ type: "integer", minimum: 1 }, { enum: ["all", "diffs"] }],
    }),
    aggregate: query(
      s.QUERY_AGGREGATION,
      'Values of the pipeline\'s `$<name>` placeholders, JSON (`{"$tag": "a"}`)',
    ),
    pretty: {
      ...query("pretty", "Indent the answer (a flag: no value needed)"),
      allowEmptyValue: true,
    },
    IfNoneMatch: header("If-None-Match", "ETags already held: 304 when one is current"),
    IfModifiedSince: header("If-Modified-Since", "304 when not changed since (HTTP date)"),
  };
  const jsonp = s.JSONP_ARGUMENT;
  if (jsonp) {
    params.jsonp = query(jsonp, "JSONP: wrap the JSON answer in a call of this function", {
      type: "string",
      pattern: "^[A-Za-z_$][\\w$]*(\\.[A-Za-z_$][\\w$]*)*$",
    });
  }
  return params;
}

/** Security scheme names in the description, by authentication scheme. */
export const SECURITY_NAMES: Record<Scheme, string | null> = {
  basic: "basic",
  token: "token",
  hmac: "hmac",
  jwt: "jwt",
  // An embedding app's own check: nothing the description can name.
  custom: null,
};

/** The security schemes of the configured authentication schemes. */
export function securitySchemes(schemes: Iterable<Scheme>, realm: string): Json {
  const out: Json = {};
  for (const scheme of schemes) {
    switch (scheme) {
      case "basic":
        out.basic = { type: "http", scheme: "basic", description: `Realm "${realm}"` };
        break;
      case "token":
        out.token = {
          type: "http",
          scheme: "bearer",
          description: "An account's token: `Authorization: Bearer <token>`",
        };
        break;
      case "jwt":
        out.jwt = { type: "http", scheme: "bearer", bearerFormat: "JWT" };
        break;
      case "hmac":
        out.hmac = {
          type: "apiKey",
          in: "header",
          name: "Authorization",
          description: "`HMAC <username>:<hex HMAC-SHA256(secret, string to sign)>` with a " +
            "`Date` header (see docs/authentication.md, HMAC)",
        };
        break;
    }
  }
  return out;
}
