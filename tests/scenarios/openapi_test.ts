/**
 * The API description (OPENAPI_PATH) and the docs page's endpoints (DOCS_PATH): a valid
 * OpenAPI 3.1 document describing every endpoint, parameter and schema of the domain, and
 * nothing internal or hidden.
 */
import assert from "node:assert/strict";
import { scenario, sharedService } from "../support/harness.ts";
import { deref, operations, parameters, validDescription } from "../support/openapi.ts";
import { basic, SECRET_HASH } from "../support/auth.ts";
import type { Json } from "../support/client.ts";

/** The example domain of config/settings.json, plus one of each kind of endpoint. */
const DOMAIN = {
  people: {
    item_title: "person",
    additional_lookup: { url: 'regex("[\\w]+")', field: "lastname" },
    soft_delete: true,
    hidden_fields: ["password"],
    datasource: { projection: { notes: 0 } },
    schema: {
      firstname: { type: "string", minlength: 1, maxlength: 30 },
      lastname: { type: "string", minlength: 1, maxlength: 30, required: true, unique: true },
      role: { type: "list", allowed: ["author", "contributor", "copy"] },
      born: { type: "datetime" },
      age: { type: "integer", min: 0, max: 150, nullable: true },
      code: { type: "string", regex: "^[A-Z]{3}$", description: "three capitals" },
      location: {
        type: "dict",
        schema: { address: { type: "string" }, city: { type: "string", required: true } },
      },
      tags: { type: "list", schema: { type: "string", maxlength: 10 } },
      password: { type: "string" },
      notes: { type: "string" },
      status: { type: "string", default: "active", readonly: true },
      price: { type: "decimal" },
    },
  },
  works: {
    versioning: true,
    schema: {
      title: { type: "string", required: true },
      owner: {
        type: "objectid",
        required: true,
        data_relation: { resource: "people", field: "_id", embeddable: true },
      },
      cover: { type: "media" },
      place: { type: "point" },
    },
  },
  people_works: {
    url: 'people/<regex("[a-f0-9]{24}"):owner>/works',
    datasource: { source: "works" },
    schema: { title: { type: "string", required: true }, owner: { type: "objectid" } },
  },
  by_role: {
    datasource: {
      source: "people",
      aggregation: { pipeline: [{ $match: { role: "$role" } }] },
    },
  },
  readonly: {
    resource_methods: ["GET"],
    item_methods: ["GET"],
    schema: { n: { type: "integer" } },
  },
  audit: {
    internal_resource: true,
    schema: { action: { type: "string" }, secret_note: { type: "string" } },
  },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  SCHEMA_ENDPOINT: "schema",
  JSONP_ARGUMENT: "callback",
  RETURN_MEDIA_AS_URL: true,
  PAGINATION_LIMIT: 40,
  DOMAIN,
};

// Scenarios that read back only what they stored share one service per store.
const shared = sharedService("the API description", SETTINGS);

shared("GET /openapi.json: a valid OpenAPI 3.1 description", async (api) => {
  const doc = await validDescription(api);
  assert.deepEqual(doc.servers, [{ url: "/" }]);
  assert.deepEqual(
    doc.tags.map((t: Json) => t.name),
    ["home", "people", "works", "people_works", "by_role", "readonly"],
  );
});

shared("every enabled endpoint and method is described", async (api) => {
  const doc = await validDescription(api);
  assert.deepEqual(operations(doc), [
    "DELETE /people",
    "DELETE /people/{_id}",
    "DELETE /people/{owner}/works",
    "DELETE /people/{owner}/works/{_id}",
    "DELETE /works",
    "DELETE /works/{_id}",
    "GET /",
    "GET /by_role",
    "GET /media/{file}",
    "GET /people",
    "GET /people/{_id}",
    "GET /people/{owner}/works",
    "GET /people/{owner}/works/{_id}",
    "GET /readonly",
    "GET /readonly/{_id}",
    "GET /schema",
    "GET /schema/{resource}",
    "GET /works",
    "GET /works/{_id}",
    "HEAD /",
    "HEAD /by_role",
    "HEAD /media/{file}",
    "HEAD /people",
    "HEAD /people/{_id}",
    "HEAD /people/{owner}/works",
    "HEAD /people/{owner}/works/{_id}",
    "HEAD /readonly",
    "HEAD /readonly/{_id}",
    "HEAD /schema",
    "HEAD /schema/{resource}",
    "HEAD /works",
    "HEAD /works/{_id}",
    "PATCH /people/{_id}",
    "PATCH /people/{owner}/works/{_id}",
    "PATCH /works/{_id}",
    "POST /people",
    "POST /people/{owner}/works",
    "POST /works",
    "PUT /people/{_id}",
    "PUT /people/{owner}/works/{_id}",
    "PUT /works/{_id}",
  ]);
  // The additional lookup is the other form of the item GET's path parameter.
  const id = parameters(doc, doc.paths["/people/{_id}"].get).get("path _id");
  assert.deepEqual(id.schema.anyOf.map((s: Json) => s.pattern), [
    "^(?:[a-f0-9]{24})$",
    "^(?:[\\w]+)$",
  ]);
  assert.match(id.description, /lastname/);
  // Sub-resource URL variables are path parameters with their regex.
  const owner = parameters(doc, doc.paths["/people/{owner}/works"].get).get("path owner");
  assert.equal(owner.required, true);
  assert.equal(owner.schema.pattern, "^(?:[a-f0-9]{24})$");
});

shared("query parameters and conditional headers", async (api) => {
  const doc = await validDescription(api);
  const people = parameters(doc, doc.paths["/people"].get);
  for (
    const key of [
      "query where",
      "query sort",
      "query page",
      "query max_results",
      "query projection",
      "query show_deleted",
      "query pretty",
      "query callback",
    ]
  ) assert.ok(people.has(key), key);
  assert.equal(people.get("query max_results").schema.maximum, 40);
  assert.ok(!people.has("query embedded"), "people has no embeddable relation");
  assert.ok(parameters(doc, doc.paths["/works"].get).has("query embedded"));
  const item = parameters(doc, doc.paths["/works/{_id}"].get);
  assert.ok(item.has("query version"));
  assert.ok(item.has("header If-None-Match"));
  assert.ok(item.has("header If-Modified-Since"));
  const patch = parameters(doc, doc.paths["/works/{_id}"].patch);
  assert.equal(patch.get("header If-Match").required, true);
  const aggregation = parameters(doc, doc.paths["/by_role"].get);
  assert.ok(aggregation.has("query aggregate"));
  assert.ok(!aggregation.has("query sort"), "aggregation endpoints take no client sort");
  assert.ok(!parameters(doc, doc.paths["/works/{_id}"].delete).has("query version"));
});

shared("request schemas follow the Eve schemas", async (api) => {
  const doc = await validDescription(api);
  const schemas = doc.components.schemas;
  const input = schemas["people.input"];
  assert.deepEqual(input.required, ["lastname"]);
  assert.equal(input.additionalProperties, false);
  const p = input.properties;
  assert.deepEqual(p.firstname, { type: "string", minLength: 1, maxLength: 30 });
  assert.deepEqual(p.role, {
    type: "array",
    items: { enum: ["author", "contributor", "copy"] },
  });
  assert.deepEqual(p.age, { type: ["integer", "null"], minimum: 0, maximum: 150 });
  assert.equal(p.code.pattern, "^[A-Z]{3}$");
  assert.equal(p.code.description, "three capitals");
  assert.match(p.born.description, /DATE_FORMAT/);
  assert.deepEqual(p.location.required, ["city"]);
  assert.deepEqual(p.tags.items, { type: "string", maxLength: 10 });
  assert.equal(p.status.default, "active");
  assert.equal(p.status.readOnly, true);
  assert.deepEqual(p.price.type, ["string", "number"]);
  assert.equal(p._id.pattern, "^[0-9a-fA-F]{24}$");
  // PATCH bodies need nothing.
  assert.equal(schemas["people.patch"].required, undefined);
  assert.equal(schemas["people.patch"].properties.location.required, undefined);
  // A relation is the id of the related document; media travel as binary in multipart.
  const works = schemas["works.input"].properties;
  assert.equal(works.owner.pattern, "^[0-9a-fA-F]{24}$");
  assert.match(works.owner.description, /_id of a people document/);
  assert.equal(works.cover, undefined, "no file in a JSON body");
  assert.equal(works.place.properties.type.const, "Point");
  const form = schemas["works.form"].properties.cover;
  assert.equal(form.format, "binary");
  const post = doc.paths["/works"].post.requestBody.content;
  assert.deepEqual(Object.keys(post), ["application/json", "multipart/form-data"]);
  // Bulk inserts: one document or a list of them.
  assert.equal(post["application/json"].schema.anyOf[1].type, "array");
});

shared("response schemas: envelopes, meta fields, embedding, media", async (api) => {
  const doc = await validDescription(api);
  const schemas = doc.components.schemas;
  const page = schemas["people.page"];
  assert.deepEqual(Object.keys(page.properties), ["_items", "_meta", "_links"]);
  assert.equal(page.properties._items.items.$ref, "#/components/schemas/people.item");
  assert.deepEqual(Object.keys(schemas.Meta.properties), ["page", "max_results", "total"]);
  const item = schemas["people.item"].properties;
  for (const field of ["_id", "_created", "_updated", "_etag", "_deleted", "_links"]) {
    assert.ok(item[field], field);
  }
  assert.equal(schemas["people.item"].required.length, 1);
  const works = schemas["works.item"].properties;
  assert.ok(works._version && works._latest_version);
  assert.deepEqual(works.owner.anyOf[1], { $ref: "#/components/schemas/people.item" });
  assert.equal(works.cover.anyOf?.[0].format ?? works.cover.format, "uri-reference");
  const ok = doc.paths["/people"].get.responses["200"];
  assert.equal(ok.content["application/json"].schema.$ref, "#/components/schemas/people.page");
  const created = doc.paths["/people"].post.responses["201"];
  assert.ok(created.headers.Location);
  assert.ok(schemas["people.written"].properties._status);
});

shared("error bodies: _status, _error, _issues", async (api) => {
  const doc = await validDescription(api);
  const error = doc.components.schemas.Error;
  assert.deepEqual(error.required, ["_status", "_error"]);
  const detail = deref(doc, error.properties._error);
  assert.deepEqual(Object.keys(detail.properties), ["code", "message"]);
  const invalid = deref(doc, doc.paths["/people"].post.responses["422"]);
  const schema = deref(doc, invalid.content["application/json"].schema);
  assert.ok(schema.properties._issues);
  assert.ok(schema.properties._items, "bulk inserts report per document");
  const patch = doc.paths["/people/{_id}"].patch.responses;
  assert.ok(patch["412"] && patch["428"] && patch["404"]);
  // The answers a real request gets have that shape.
  const res = await api.post("people", { firstname: "x" });
  assert.equal(res.status, 422);
  assert.deepEqual(Object.keys(res.body).sort(), ["_error", "_issues", "_status"]);
});

shared("internal resources and hidden fields never appear", async (api) => {
  const res = await api.get("openapi.json");
  assert.equal(res.status, 200);
  for (const word of ["audit", "secret_note"]) {
    assert.ok(!res.text.includes(word), `"${word}" is in the description`);
  }
  const item = res.body.components.schemas["people.item"].properties;
  assert.equal(item.password, undefined, "hidden_fields");
  assert.equal(item.notes, undefined, "a field the default projection leaves out");
  assert.ok(item.firstname);
  // Hidden from answers, still written by clients.
  assert.ok(res.body.components.schemas["people.input"].properties.password);
});

scenario(
  "an inclusive projection describes only the readable fields",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      people: {
        datasource: { projection: { name: 1, "address.city": 1 } },
        schema: {
          name: { type: "string" },
          pin: { type: "string" },
          address: {
            type: "dict",
            schema: { city: { type: "string" }, street: { type: "string" } },
          },
        },
      },
    },
  },
  async (api) => {
    const doc = await validDescription(api);
    const item = doc.components.schemas["people.item"].properties;
    assert.equal(item.pin, undefined);
    assert.deepEqual(Object.keys(item.address.properties), ["city"]);
    assert.ok(item.name && item._id && item._etag);
  },
);

scenario(
  "URL_PREFIX and API_VERSION: served under the prefix, named in servers",
  { ...SETTINGS, URL_PREFIX: "api", API_VERSION: "v1" },
  async (api) => {
    assert.equal((await api.get("openapi.json")).status, 404);
    const doc = await validDescription(api, "api/v1/openapi.json");
    assert.deepEqual(doc.servers, [{ url: "/api/v1" }]);
    assert.ok(doc.paths["/people"], "paths are relative to the server");
    const home = await api.get("api/v1");
    assert.deepEqual(home.body._links["service-desc"], {
      href: "openapi.json",
      title: "OpenAPI description",
    });
    const page = await api.get("api/v1/docs");
    assert.equal(page.status, 200);
    assert.match(page.text, /data-url="\/api\/v1\/openapi.json"/);
    assert.match(page.text, /src="\/api\/v1\/docs\/swagger-ui-bundle.js"/);
  },
);

scenario(
  "OPENAPI_PATH and DOCS_PATH move both; false turns them off (404, not at home)",
  { ...SETTINGS, OPENAPI_PATH: "/meta/api.json", DOCS_PATH: "/meta/ui" },
  async (api) => {
    await validDescription(api, "meta/api.json");
    assert.equal((await api.get("openapi.json")).status, 404);
    assert.equal((await api.get("meta/ui")).status, 200);
    assert.equal((await api.get("docs")).status, 404);
    const home = await api.get("");
    assert.equal(home.body._links["service-desc"].href, "meta/api.json");
    assert.equal(home.body._links["service-doc"].href, "meta/ui");
  },
);

scenario("OPENAPI_PATH false: no description, no docs page", {
  ...SETTINGS,
  OPENAPI_PATH: false,
}, async (api) => {
  const res = await api.get("openapi.json");
  assert.equal(res.status, 404);
  assert.equal(res.body._status, "ERR");
  assert.equal((await api.get("docs")).status, 404);
  assert.equal((await api.get("docs/swagger-ui-bundle.js")).status, 404);
  const home = await api.get("");
  assert.equal(home.body._links["service-desc"], undefined);
  assert.equal(home.body._links["service-doc"], undefined);
});

scenario("DOCS_PATH null: the description stays, the page goes", {
  ...SETTINGS,
  DOCS_PATH: null,
}, async (api) => {
  await validDescription(api);
  assert.equal((await api.get("docs")).status, 404);
  const home = await api.get("");
  assert.ok(home.body._links["service-desc"]);
  assert.equal(home.body._links["service-doc"], undefined);
});

shared("the description and the docs files: read-only, ETags, 304", async (api) => {
  for (const path of ["openapi.json", "docs", "docs/swagger-ui-bundle.js", "docs/init.js"]) {
    const first = await api.get(path, { "accept-encoding": "identity" });
    assert.equal(first.status, 200, path);
    const etag = first.headers.get("etag")!;
    assert.match(etag, /^(W\/)?"[\w-]+"$/);
    const again = await api.get(path, { "if-none-match": etag });
    assert.equal(again.status, 304, path);
    assert.equal(again.text, "");
    const post = await api.post(path, {});
    assert.equal(post.status, 405, path);
    assert.equal(post.headers.get("allow"), "GET, HEAD, OPTIONS");
    const head = await api.head(path);
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("content-length"), first.headers.get("content-length"));
  }
  assert.equal((await api.get("docs/package.json")).status, 404, "only the page's files");
  assert.equal((await api.get("docs/..%2F..%2Fdeno.json")).status, 404);
});

shared("docs files are cached and compressed", async (api) => {
  const js = await api.get("docs/swagger-ui-bundle.js", { "accept-encoding": "gzip" });
  assert.equal(js.status, 200);
  assert.equal(js.headers.get("content-encoding"), "gzip");
  assert.match(js.headers.get("content-type")!, /^text\/javascript/);
  assert.match(js.headers.get("cache-control")!, /max-age=\d+/);
  assert.match(js.text, /SwaggerUIBundle/);
  const css = await api.get("docs/swagger-ui.css", { "accept-encoding": "gzip" });
  assert.equal(css.headers.get("content-encoding"), "gzip");
});

shared("the docs page: no inline script, a strict CSP", async (api) => {
  const page = await api.get("docs");
  assert.match(page.headers.get("content-type")!, /^text\/html/);
  const csp = page.headers.get("content-security-policy")!;
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe/);
  assert.equal(page.headers.get("x-content-type-options"), "nosniff");
  const scripts = [...page.text.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
  assert.equal(scripts.length, 2);
  for (const [, attrs, body] of scripts) {
    assert.match(attrs, /src="\/docs\//);
    assert.equal(body.trim(), "");
  }
  assert.doesNotMatch(page.text, /https?:\/\//, "no file from elsewhere");
});

const ROOT = { username: "root", password: SECRET_HASH, roles: ["admin"] };
const AUTH = {
  ...SETTINGS,
  AUTH_SCHEMES: ["basic", "token", "hmac", "jwt"],
  AUTH_USERS: [ROOT],
  AUTH_JWT: { secret: "a-shared-secret-of-at-least-32-characters" },
  PUBLIC_METHODS: ["GET"],
  DOMAIN: {
    ...DOMAIN,
    readonly: { ...DOMAIN.readonly, authentication: false },
    works: { ...DOMAIN.works, authentication: "jwt" },
  },
};

scenario("with authentication: security schemes and per-operation security", AUTH, async (api) => {
  const doc = await validDescription(api);
  assert.deepEqual(doc.components.securitySchemes.basic, {
    type: "http",
    scheme: "basic",
    description: 'Realm "api"',
  });
  assert.equal(doc.components.securitySchemes.token.scheme, "bearer");
  assert.equal(doc.components.securitySchemes.jwt.bearerFormat, "JWT");
  assert.equal(doc.components.securitySchemes.hmac.type, "apiKey");
  // Public methods need nothing; the others name the resource's schemes.
  assert.deepEqual(doc.paths["/people"].get.security, []);
  assert.deepEqual(doc.paths["/people"].post.security, [
    { basic: [] },
    { token: [] },
    { hmac: [] },
    { jwt: [] },
  ]);
  assert.ok(doc.paths["/people"].post.responses["401"]);
  assert.deepEqual(doc.paths["/works/{_id}"].patch.security, [{ jwt: [] }]);
  assert.deepEqual(doc.paths["/readonly"].get.security, []);
  // The schema endpoint answers everyone, what it shows depends on the credentials.
  assert.deepEqual(doc.paths["/schema"].get.security[0], {});
});

scenario(
  "with authentication: the description is guarded as the home endpoint is",
  { ...AUTH, PUBLIC_METHODS: [] },
  async (api) => {
    const refused = await api.get("openapi.json");
    assert.equal(refused.status, 401);
    assert.equal(refused.body._status, "ERR");
    assert.equal((await api.get("openapi.json", basic("root", "secret"))).status, 200);
    // The docs page's files hold no data: public.
    assert.equal((await api.get("docs")).status, 200);
    assert.equal((await api.get("docs/init.js")).status, 200);
  },
);

scenario("rate limits: operations may answer 429", {
  ...SETTINGS,
  RATE_LIMIT_GET: [1000, 60],
}, async (api) => {
  const doc = await validDescription(api);
  assert.ok(doc.paths["/people"].get.responses["429"]);
});

scenario("OPLOG_ENDPOINT: the operation log is described, read-only", {
  ...SETTINGS,
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
}, async (api) => {
  const doc = await validDescription(api);
  assert.deepEqual(Object.keys(doc.paths["/oplog"]), ["get", "head"]);
  assert.deepEqual(Object.keys(doc.paths["/oplog/{_id}"]), ["get", "head"]);
  const entry = doc.components.schemas["oplog.item"].properties;
  assert.ok(entry.o && entry.r && entry.i);
  assert.equal(entry.extra, undefined, "OPLOG_RETURN_EXTRA_FIELD is off");
});

scenario("change feeds are described where enabled", {
  ...SETTINGS,
  DOMAIN: { ...DOMAIN, people: { ...DOMAIN.people, changes: true } },
}, async (api) => {
  const doc = await validDescription(api);
  const feeds = Object.keys(doc.paths).filter((p) => p.endsWith("/_changes"));
  assert.deepEqual(feeds, ["/people/_changes"]);
  const feed = doc.paths["/people/_changes"].get;
  assert.ok(feed.responses["200"].content["text/event-stream"]);
  const names = parameters(doc, feed);
  for (const name of ["query where", "query documents", "header Last-Event-ID"]) {
    assert.ok(names.has(name), `${name} in ${[...names]}`);
  }
});

scenario(
  "answers the service gives are described: renderings, errors, embedded, lookups",
  {
    JSONP_ARGUMENT: "callback",
    RESOURCE_METHODS: ["GET", "POST", "DELETE"],
    ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
    DOMAIN: {
      owners: {
        schema: { name: { type: "string" } },
        additional_lookup: { url: "regex('[a-z]+')", field: "name" },
      },
      pets: {
        schema: {
          owner: {
            type: "objectid",
            data_relation: { resource: "owners", embeddable: true },
          },
        },
      },
    },
  },
  async (api) => {
    const doc = await validDescription(api);
    const item = doc.paths["/owners/{_id}"];
    // Every operation: other client and server errors, with the error envelope.
    for (const op of [doc.paths["/owners"].delete, item.get, item.patch, doc.paths["/"].get]) {
      assert.equal(
        deref(doc, op.responses["4XX"]).content["application/json"].schema.$ref,
        "#/components/schemas/Error",
      );
      assert.ok(op.responses["5XX"]);
    }
    assert.ok(doc.paths["/owners"].delete.responses["204"]);
    assert.equal(
      doc.paths["/owners"].delete.responses["404"].$ref,
      "#/components/responses/NotFound",
    );
    // JSON answers are also XML (Accept) and JavaScript (JSONP).
    const content = item.get.responses["200"].content;
    assert.deepEqual(Object.keys(content), [
      "application/json",
      "application/xml",
      "application/javascript",
    ]);
    assert.ok(deref(doc, doc.components.responses.NotFound).content["application/xml"]);
    // The lookup is read-only: writes through it are refused, and say so.
    for (const verb of ["patch", "put", "delete"]) {
      assert.equal(item[verb].responses["405"].$ref, "#/components/responses/MethodNotAllowed");
    }
    // An embedded reference may be null (its document gone).
    const owner = doc.components.schemas["pets.item"].properties.owner;
    assert.deepEqual(owner.anyOf.at(-1), { type: "null" });
    // And the harness checks the real answers against all of this.
    const ann = await api.create("owners", { name: "ann" });
    const pet = await api.create("pets", { owner: ann._id });
    assert.equal((await api.delete(`owners/${ann._id}`, { "if-match": ann._etag })).status, 204);
    const embedded = await api.get(`pets/${pet._id}?embedded={"owner":1}`);
    assert.equal(embedded.body.owner, null);
    assert.equal((await api.get(`owners/${ann._id}`, { accept: "application/xml" })).status, 404);
    assert.equal((await api.get(`pets/${pet._id}?callback=cb`)).status, 200);
    assert.equal((await api.patch("owners/ann", { name: "x" })).status, 405);
    assert.equal((await api.delete("pets")).status, 204);
    assert.equal((await api.delete("owners")).status, 404, "nothing left to delete");
  },
);

scenario("a counted page's total field is described under its configured name", {
  RESOURCE_METHODS: ["GET", "POST"],
  HEADER_TOTAL_COUNT: "X-Count",
  DOMAIN: {
    people: { schema: { name: { type: "string" } } },
    fast: { optimize_pagination_for_speed: true, schema: { name: { type: "string" } } },
  },
}, async (api) => {
  const doc = await validDescription(api);
  const ok = (path: string) => (doc.paths as Json)[path].get.responses["200"];
  assert.deepEqual(Object.keys(ok("/people").headers ?? {}), ["X-Count"]);
  // Not counted, not told.
  assert.equal(ok("/fast").headers, undefined);
  await api.post("people", { name: "a" });
  assert.equal((await api.get("people")).headers.get("x-count"), "1");
});
