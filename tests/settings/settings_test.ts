/** Settings: defaults, Eve's names, and refusing bad settings with every problem's path. */
import assert from "node:assert/strict";
import { prepare } from "../../src/mod.ts";
import { settingsProblems } from "../support/settings.ts";

const problems = settingsProblems;

Deno.test("defaults follow the spec", () => {
  const { settings } = prepare({ DOMAIN: {} }, { env: false });
  assert.deepEqual(settings.RESOURCE_METHODS, ["GET"]);
  assert.deepEqual(settings.ITEM_METHODS, ["GET"]);
  assert.equal(settings.ALLOW_UNKNOWN, false);
  assert.equal(settings.VALIDATION_ERROR_STATUS, 422);
  assert.equal(settings.DATE_FORMAT, "%a, %d %b %Y %H:%M:%S GMT");
  assert.equal(settings.IF_MATCH, true);
  assert.equal(settings.ENFORCE_IF_MATCH, true);
  assert.equal(settings.PAGINATION, true);
  assert.equal(settings.PAGINATION_DEFAULT, 25);
  assert.equal(settings.ID_FIELD, "_id");
  assert.equal(settings.DATE_CREATED, "_created");
  assert.equal(settings.DATE_UPDATED, "_updated");
  assert.equal(settings.DB_PORT, 27017);
  assert.deepEqual(settings.DB_QUERY_BLACKLIST, ["$where", "$regex"]);
  assert.deepEqual(settings.RENDERERS, ["json", "xml"]);
});

Deno.test("Eve's setting names are accepted", () => {
  const { settings } = prepare({
    MONGO_HOST: "db.example",
    MONGO_PORT: 27018,
    MONGO_QUERY_BLACKLIST: ["$where"],
    VALIDATE_FILTERS: true,
    LAST_UPDATED: "modified",
    PAGINATION_DEFAULT: 10,
    PAGINATION_LIMIT: 100,
    UPSERT_ON_PUT: false,
    X_HEADERS: ["X-Custom"],
    RENDERERS: ["eve.render.JSONRenderer"],
    DOMAIN: {},
  }, { env: false });
  assert.equal(settings.DB_HOST, "db.example");
  assert.equal(settings.DB_PORT, 27018);
  assert.deepEqual(settings.DB_QUERY_BLACKLIST, ["$where"]);
  assert.equal(settings.VALIDATE_FILTERING, true);
  assert.equal(settings.DATE_UPDATED, "modified");
  assert.equal(settings.PAGINATION_DEFAULT, 10);
  assert.deepEqual(settings.RENDERERS, ["json"]);
});

Deno.test("an unknown key names the closest known key", () => {
  const found = problems({ PAGINATON_LIMIT: 5, DOMAIN: { people: { resource_method: ["GET"] } } });
  assert.ok(
    found.some((p) => p === "PAGINATON_LIMIT: unknown setting (did you mean PAGINATION_LIMIT?)"),
  );
  assert.ok(
    found.some((p) =>
      p.startsWith(
        "DOMAIN.people.resource_method: unknown resource key (did you mean resource_methods?)",
      )
    ),
  );
});

Deno.test("a per-resource rate_limit is refused: limits are global (RATE_LIMIT_<METHOD>)", () => {
  const found = problems({ DOMAIN: { people: { rate_limit: { GET: [10, 60] } } } });
  assert.ok(
    found.some((p) => p.startsWith("DOMAIN.people.rate_limit: unknown resource key")),
    found.join("\n"),
  );
});

Deno.test("every problem is reported with its path", () => {
  const found = problems({
    PAGINATION: "yes",
    RENDERERS: [],
    ITEM_METHODS: ["GET", "FETCH"],
    DOMAIN: {
      a: { url: 'a/<regex("["):x>' },
      b: { schema: { n: { type: "intger" } } },
    },
  });
  assert.ok(found.includes("PAGINATION: must be true or false"), found.join("\n"));
  assert.ok(found.includes("RENDERERS: at least one renderer must be enabled"));
  assert.ok(found.includes("ITEM_METHODS: unknown method(s) FETCH"));
  // The domain is checked once the globals are sound.
  const domainProblems = problems({
    DOMAIN: { a: { url: 'a/<regex("["):x>' }, b: { schema: { n: { type: "intger" } } } },
  });
  assert.ok(
    domainProblems.some((p) => p.startsWith("DOMAIN.a.url: invalid regex")),
    domainProblems.join("\n"),
  );
  assert.ok(
    domainProblems.some((p) => p.startsWith("DOMAIN.b.schema.n")),
    domainProblems.join("\n"),
  );
});

Deno.test("a bad datasource and a duplicate url are refused", () => {
  const found = problems({
    DOMAIN: {
      a: { datasource: { sauce: "x", projection: { f: 2 } } },
      b: { url: "a" },
    },
  });
  assert.ok(found.some((p) => p.startsWith("DOMAIN.a.datasource.sauce: unknown datasource key")));
  assert.ok(found.includes("DOMAIN.a.datasource.projection: values must be 0 or 1"));
  assert.ok(found.includes('DOMAIN.b.url: "a" is already used by a'));
});

Deno.test("Eve's authentication settings are accepted", () => {
  const found = problems({
    AUTH_SCHEMES: ["token"],
    AUTH_USERS: [{ username: "root", token: "root-token-0123456789" }],
    PUBLIC_METHODS: ["GET"],
    ALLOWED_ROLES: ["admin"],
    AUTH_FIELD: "owner",
    DOMAIN: { a: { authentication: false, allowed_item_write_roles: ["x"], auth_field: "o" } },
  });
  assert.deepEqual(found, []);
});

Deno.test("the service refuses to start on bad settings and says why", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/bad.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({ PAGINATON: true, DOMAIN: { p: { schema: { x: { type: "nope" } } } } }),
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "src/main.ts", "--settings", file],
    env: { DATA_DIR: `${dir}/data` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1);
  assert.match(stderr, /refusing to start/);
  assert.match(stderr, /PAGINATON: unknown setting \(did you mean PAGINATION\?\)/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("settings load from a TypeScript module with extensions", async () => {
  const { loadSettingsFile } = await import("../../src/settings/load.ts");
  const dir = await Deno.makeTempDir();
  const file = `${dir}/settings.ts`;
  await Deno.writeTextFile(
    file,
    `export default { PAGINATION_DEFAULT: 7, DOMAIN: { a: {} } };\n` +
      `export const extensions = { types: { even: { check: (v: unknown) => Number(v) % 2 === 0 } } };\n`,
  );
  const raw = await loadSettingsFile(file);
  assert.equal(raw.settings.PAGINATION_DEFAULT, 7);
  assert.ok(raw.exports.extensions);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("environment variables override the file, under either name", async () => {
  const { applyEnvOverrides } = await import("../../src/settings/load.ts");
  const env = new Map([["DB_HOST", "db1"], ["PORT", "8080"], ["DB_PORT", "x"]]);
  const settings: Record<string, unknown> = { MONGO_HOST: "file-host", PORT: 5000 };
  const found = applyEnvOverrides(settings, { get: (k) => env.get(k) });
  assert.deepEqual(found, ["environment DB_PORT: must be an integer"]);
  assert.equal(settings.DB_HOST, "db1");
  assert.equal(settings.MONGO_HOST, undefined);
  assert.equal(settings.PORT, 8080);
});

Deno.test("the embedded store is the default; MongoDB when configured", async () => {
  const { wantsMongo } = await import("../../src/store/open.ts");
  const base = prepare({ DOMAIN: {} }, { env: false });
  assert.equal(wantsMongo(base.settings, base.hostGiven), false);
  const host = prepare({ MONGO_HOST: "db", DOMAIN: {} }, { env: false });
  assert.equal(wantsMongo(host.settings, host.hostGiven), true);
  const uri = prepare({ MONGO_URI: "mongodb://x/db", DOMAIN: {} }, { env: false });
  assert.equal(wantsMongo(uri.settings, uri.hostGiven), true);
  const forced = prepare({ MONGO_URI: "mongodb://x/db", STORE: "embedded", DOMAIN: {} }, {
    env: false,
  });
  assert.equal(wantsMongo(forced.settings, forced.hostGiven), false);
});

Deno.test("a sub-resource URL variable that is not a schema field is refused", () => {
  const url = 'people/<regex("[a-f0-9]{24}"):owner>/invoices';
  const found = problems({ DOMAIN: { invoices: { url, schema: { total: { type: "number" } } } } });
  assert.deepEqual(found, [
    'DOMAIN.invoices.url: the URL variable "owner" is not a field of the schema ' +
    '(declare it, e.g. "owner": {"type": "objectid"})',
  ]);
  // Declared, or with unknown fields allowed, it starts.
  prepare({ DOMAIN: { invoices: { url, schema: { owner: { type: "objectid" } } } } }, {
    env: false,
  });
  prepare({ DOMAIN: { invoices: { url, allow_unknown: true } } }, { env: false });
});

Deno.test("a resource URL under SCHEMA_ENDPOINT is refused", () => {
  const found = problems({ SCHEMA_ENDPOINT: "schema", DOMAIN: { schema: {}, people: {} } });
  assert.deepEqual(found, ['DOMAIN.schema.url: "schema" is taken by SCHEMA_ENDPOINT']);
});

Deno.test("an embeddable relation into an internal resource is refused", () => {
  const domain = (embeddable: boolean) => ({
    DOMAIN: {
      secrets: { internal_resource: true, schema: { v: { type: "string" } } },
      posts: {
        schema: {
          secret: { type: "objectid", data_relation: { resource: "secrets", embeddable } },
        },
      },
    },
  });
  assert.deepEqual(problems(domain(true)), [
    'DOMAIN.posts.schema.secret.data_relation: "secrets" is an internal resource and cannot ' +
    "be embeddable",
  ]);
  // A relation that only validates is fine.
  prepare(domain(false), { env: false });
});

Deno.test("default_sort text is read by the ?sort parser; a malformed one refuses to start", () => {
  const sortOf = (default_sort: unknown) =>
    prepare({ DOMAIN: { people: { default_sort } } }, { env: false }).domain.get("people")!
      .defaultSort;
  assert.deepEqual(sortOf("-age,name"), { age: -1, name: 1 });
  assert.deepEqual(sortOf('[("age", -1), ("name", 1)]'), { age: -1, name: 1 });
  assert.deepEqual(sortOf([["age", -1]]), { age: -1 });
  assert.deepEqual(sortOf({ age: 1 }), { age: 1 });
  for (const bad of ["nonsense,,", "[('age', -1)", "age,age", ""]) {
    const found = problems({ DOMAIN: { people: { default_sort: bad } } });
    assert.equal(found.length, 1, bad);
    assert.match(found[0], /^DOMAIN\.people\.default_sort: /, bad);
  }
});

Deno.test("ETAG_SECRET: a short key is refused, a long one accepted", () => {
  assert.deepEqual(problems({ ETAG_SECRET: "short", DOMAIN: {} }), [
    "ETAG_SECRET: must be at least 16 characters (or unset: a generated key)",
  ]);
  assert.deepEqual(problems({ ETAG_SECRET: "a".repeat(16), DOMAIN: {} }), []);
  assert.deepEqual(problems({ DOMAIN: {} }), []);
});

Deno.test("HEADER_TOTAL_COUNT must be a header field name the service does not set itself", () => {
  const problemsOf = (name: string) => {
    try {
      prepare({ HEADER_TOTAL_COUNT: name, DOMAIN: {} }, { env: false });
      return [];
    } catch (error) {
      return (error as { problems: string[] }).problems;
    }
  };
  assert.deepEqual(problemsOf("X-Total"), []);
  assert.deepEqual(problemsOf("X Total"), [
    'HEADER_TOTAL_COUNT: "X Total" is not a header field name',
  ]);
  assert.deepEqual(problemsOf("ETag"), [
    'HEADER_TOTAL_COUNT: "ETag" is a field the service sets itself',
  ]);
});

Deno.test("WRITE_BUFFER_BYTES is 0 (off) or from 512 to 3072", () => {
  const problemsOf = (bytes: unknown) => problems({ WRITE_BUFFER_BYTES: bytes, DOMAIN: {} });
  for (const fine of [0, 512, 2048, 3072]) assert.deepEqual(problemsOf(fine), [], String(fine));
  for (const wrong of [-1, 1, 511, 3073, 65536]) {
    assert.deepEqual(
      problemsOf(wrong),
      ["WRITE_BUFFER_BYTES: must be 0 (off) or from 512 to 3072"],
      String(wrong),
    );
  }
  assert.deepEqual(problemsOf("2k"), ["WRITE_BUFFER_BYTES: must be an integer"]);
});

Deno.test("etag_ignore_fields is accepted with a warning: every stored field counts", () => {
  const { warnings } = prepare({
    DOMAIN: { people: { etag_ignore_fields: ["seen"], schema: { seen: { type: "datetime" } } } },
  }, { env: false });
  assert.ok(
    warnings.some((w) =>
      w.startsWith(
        "DOMAIN.people.etag_ignore_fields: accepted for Eve compatibility, has no effect",
      )
    ),
    warnings.join("\n"),
  );
});
