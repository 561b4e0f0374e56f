/** OPENAPI_PATH and DOCS_PATH: checked at start-up, every mistake named. */
import assert from "node:assert/strict";
import { prepare } from "../../src/mod.ts";
import { settingsProblems } from "../support/settings.ts";

const DOMAIN = { people: { schema: { name: { type: "string" } } } };

const problems = (settings: Record<string, unknown>) => settingsProblems({ DOMAIN, ...settings });

Deno.test("OPENAPI_PATH / DOCS_PATH: defaults, slashes trimmed, false and null turn off", () => {
  assert.deepEqual(prepare({ DOMAIN }, { env: false }).openapi, {
    documentPath: "openapi.json",
    docsPath: "docs",
  });
  const moved = prepare({ DOMAIN, OPENAPI_PATH: "/meta/api.json/", DOCS_PATH: "ui" }, {
    env: false,
  });
  assert.deepEqual(moved.openapi, { documentPath: "meta/api.json", docsPath: "ui" });
  assert.equal(prepare({ DOMAIN, OPENAPI_PATH: false }, { env: false }).openapi, null);
  assert.equal(prepare({ DOMAIN, DOCS_PATH: null }, { env: false }).openapi?.docsPath, null);
});

Deno.test("OPENAPI_PATH / DOCS_PATH: bad values and taken paths refuse to start", () => {
  assert.deepEqual(problems({ OPENAPI_PATH: 3 }), [
    'OPENAPI_PATH: must be a path such as "/openapi.json", or false to turn it off',
  ]);
  assert.match(problems({ DOCS_PATH: "/a b" })[0], /^DOCS_PATH: "\/a b" is not a path/);
  assert.match(problems({ DOCS_PATH: "/../x" })[0], /^DOCS_PATH/);
  assert.deepEqual(problems({ OPENAPI_PATH: "/docs/api.json" }), [
    'OPENAPI_PATH: "/docs/api.json" is inside DOCS_PATH "/docs"',
  ]);
  assert.match(problems({ OPENAPI_PAHT: "/x" })[0], /did you mean OPENAPI_PATH/);
});

Deno.test("a path another endpoint serves stays that endpoint's, with a warning", () => {
  const own = prepare({ DOMAIN: { ...DOMAIN, docs: {} }, OPENAPI_PATH: "/people" }, {
    env: false,
  });
  assert.equal(own.openapi, null);
  assert.deepEqual(own.warnings, [
    'OPENAPI_PATH: "/people" is served by DOMAIN.people.url; set OPENAPI_PATH to another path',
    'DOCS_PATH: "/docs" is served by DOMAIN.docs.url; set DOCS_PATH to another path',
  ]);
  const schema = prepare({ DOMAIN, SCHEMA_ENDPOINT: "docs" }, { env: false });
  assert.deepEqual(schema.openapi, { documentPath: "openapi.json", docsPath: null });
  assert.match(schema.warnings[0], /^DOCS_PATH: "\/docs" is served by SCHEMA_ENDPOINT/);
});
