/** The schema endpoint (SCHEMA_ENDPOINT). */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";

const PEOPLE = {
  name: { type: "string", required: true, maxlength: 20 },
  age: { type: "integer", min: 0 },
};

const SETTINGS = {
  SCHEMA_ENDPOINT: "schema",
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    people: { schema: PEOPLE },
    notes: { schema: { text: { type: "string" } } },
    secrets: { internal_resource: true, schema: { key: { type: "string" } } },
  },
};

scenario("GET /schema lists every public resource's schema", SETTINGS, async (api) => {
  const res = await api.get("schema");
  assert.equal(res.status, 200);
  // As in Eve, the id field is listed (objectid unless declared).
  const id = { _id: { type: "objectid" } };
  assert.deepEqual(res.body, {
    people: { ...PEOPLE, ...id },
    notes: { text: { type: "string" }, ...id },
  });
});

scenario(
  "GET /schema/<resource> answers one; internal and unknown are 404",
  SETTINGS,
  async (api) => {
    const one = await api.get("schema/people");
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, { ...PEOPLE, _id: { type: "objectid" } });
    assert.equal((await api.get("schema/secrets")).status, 404);
    assert.equal((await api.get("schema/nope")).status, 404);
    assert.equal((await api.get("schema/__proto__")).status, 404);
  },
);

scenario("the schema endpoint is read-only", SETTINGS, async (api) => {
  for (const res of [await api.post("schema", {}), await api.delete("schema/people")]) {
    assert.equal(res.status, 405);
    assert.equal(res.body._status, "ERR");
    assert.equal(res.headers.get("allow"), "GET, HEAD, OPTIONS");
  }
  assert.equal((await api.head("schema")).status, 200);
});

scenario("the schema endpoint renders XML", SETTINGS, async (api) => {
  const res = await api.get("schema/people", { accept: "application/xml" });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /xml/);
  assert.match(res.text, /<name>/);
  assert.match(res.text, /<maxlength>20<\/maxlength>/);
});

scenario("without SCHEMA_ENDPOINT there is no schema endpoint", {
  ...SETTINGS,
  SCHEMA_ENDPOINT: null,
}, async (api) => {
  assert.equal((await api.get("schema")).status, 404);
});
