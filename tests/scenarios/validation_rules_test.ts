/**
 * Schema rules through HTTP: each rule with valid input (201) and invalid input (the
 * validation status with the exact `_issues`), bulk error envelopes, allow_unknown at every
 * level, and schemas refused at start-up.
 */
import assert from "node:assert/strict";
import { createService, SettingsError } from "../../src/mod.ts";
import { scenario, sharedService } from "../support/harness.ts";
import { assertCreated, assertInvalid } from "../support/assertions.ts";

const METHODS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
};

const SETTINGS = {
  ...METHODS,
  DOMAIN: {
    people: {
      schema: {
        name: { type: "string", minlength: 2, maxlength: 5, required: true },
        tags: { type: "list", minlength: 1, maxlength: 2 },
        age: { type: "integer", min: 0, max: 130 },
        score: { type: "float", min: 0.5 },
        role: { type: "string", allowed: ["admin", "user"] },
        perms: { type: "list", allowed: ["read", "write"] },
        code: { type: "string", regex: "[A-Z]{3}-\\d+" },
        title: { type: "string", empty: false },
        nick: { type: "string", nullable: true },
        strict: { type: "string" },
        status: { type: "string", default: "new" },
        counter: { type: "integer", readonly: true, default: 0 },
      },
    },
    nested: {
      schema: {
        address: {
          type: "dict",
          schema: {
            city: { type: "string", required: true },
            zip: { type: "string", regex: "\\d{5}" },
            geo: { type: "dict", schema: { lat: { type: "float", min: -90, max: 90 } } },
          },
        },
        rows: {
          type: "list",
          schema: {
            type: "dict",
            schema: { sku: { type: "string", required: true }, qty: { type: "integer", min: 1 } },
          },
        },
        ints: { type: "list", schema: { type: "integer", max: 9 } },
      },
    },
    deps: {
      schema: {
        street: { type: "string", dependencies: "city" },
        city: { type: "string" },
        card: { type: "string", dependencies: { payment: ["card"] } },
        payment: { type: "string" },
        email: { type: "string", excludes: "phone", required: true },
        phone: { type: "string", excludes: "email", required: true },
      },
    },
    maps: {
      schema: {
        counts: {
          type: "dict",
          keysrules: { type: "string", regex: "[a-z]+" },
          valuesrules: { type: "integer", min: 0 },
        },
        any: { anyof: [{ type: "integer", min: 10 }, { type: "string", maxlength: 1 }] },
        one: { oneof: [{ type: "integer", min: 0 }, { type: "integer", max: 10 }] },
        typed: { anyof_type: ["boolean", "list"] },
      },
    },
    open: { allow_unknown: true, schema: { name: { type: "string" } } },
    loose: {
      schema: {
        meta: { type: "dict", allow_unknown: true, schema: { v: { type: "integer" } } },
        fixed: { type: "dict", schema: { v: { type: "integer" } } },
      },
    },
  },
};

/** Asserts a single-document validation error with exactly `issues`. */
// Scenarios that read back only the documents they stored share one service per store.
const shared = sharedService("validation rules", SETTINGS);

shared("minlength / maxlength bound strings and lists", async (api) => {
  await assertCreated(api, "people", { name: "ab", tags: ["x"] });
  await assertCreated(api, "people", { name: "abcde", tags: ["x", "y"] });
  assertInvalid(await api.post("people", { name: "a", tags: [] }), {
    name: "min length is 2",
    tags: "min length is 1",
  });
  assertInvalid(await api.post("people", { name: "abcdef", tags: [1, 2, 3] }), {
    name: "max length is 5",
    tags: "max length is 2",
  });
});

shared("min / max bound numbers", async (api) => {
  await assertCreated(api, "people", { name: "ab", age: 0, score: 0.5 });
  await assertCreated(api, "people", { name: "ab", age: 130 });
  assertInvalid(await api.post("people", { name: "ab", age: -1, score: 0.4 }), {
    age: "min value is 0",
    score: "min value is 0.5",
  });
  assertInvalid(await api.post("people", { name: "ab", age: 131 }), { age: "max value is 130" });
});

shared("required: a missing field is refused on POST and PUT", async (api) => {
  assertInvalid(await api.post("people", { age: 3 }), { name: "required field" });
  const created = await assertCreated(api, "people", { name: "ab" });
  const put = await api.put(`people/${created._id}`, { age: 4 }, { "if-match": created._etag });
  assertInvalid(put, { name: "required field" });
  // PATCH names only what changes: a required field it does not name is not missing.
  const patch = await api.patch(`people/${created._id}`, { age: 4 }, {
    "if-match": created._etag,
  });
  assert.equal(patch.status, 200);
});

shared("allowed: a value, or each member of a list", async (api) => {
  await assertCreated(api, "people", { name: "ab", role: "admin", perms: ["read", "write"] });
  assertInvalid(await api.post("people", { name: "ab", role: "root" }), {
    role: "unallowed value root",
  });
  assertInvalid(await api.post("people", { name: "ab", perms: ["read", "x", "y"] }), {
    perms: "unallowed values x, y",
  });
});

shared("regex: the whole value must match", async (api) => {
  await assertCreated(api, "people", { name: "ab", code: "ABC-12" });
  assertInvalid(await api.post("people", { name: "ab", code: "ABC-12x" }), {
    code: "value does not match regex '[A-Z]{3}-\\d+'",
  });
  assertInvalid(await api.post("people", { name: "ab", code: "xABC-1" }), {
    code: "value does not match regex '[A-Z]{3}-\\d+'",
  });
});

shared("empty: false refuses an empty string", async (api) => {
  await assertCreated(api, "people", { name: "ab", title: "x" });
  assertInvalid(await api.post("people", { name: "ab", title: "" }), {
    title: "empty values not allowed",
  });
});

shared("nullable: null only where allowed", async (api) => {
  const created = await assertCreated(api, "people", { name: "ab", nick: null });
  assert.equal((await api.get(`people/${created._id}`)).body.nick, null);
  assertInvalid(await api.post("people", { name: "ab", strict: null }), {
    strict: "null value not allowed",
  });
});

shared("default: assigned on POST when the field is missing", async (api) => {
  const a = await assertCreated(api, "people", { name: "ab" });
  const b = await assertCreated(api, "people", { name: "cd", status: "done" });
  assert.equal((await api.get(`people/${a._id}`)).body.status, "new");
  assert.equal((await api.get(`people/${a._id}`)).body.counter, 0);
  assert.equal((await api.get(`people/${b._id}`)).body.status, "done");
});

shared("readonly: refused on POST, PATCH and PUT unless unchanged", async (api) => {
  assertInvalid(await api.post("people", { name: "ab", counter: 5 }), {
    counter: "field is read-only",
  });
  const created = await assertCreated(api, "people", { name: "ab" });
  const path = `people/${created._id}`;
  assertInvalid(await api.patch(path, { counter: 1 }, { "if-match": created._etag }), {
    counter: "field is read-only",
  });
  assertInvalid(await api.put(path, { name: "cd", counter: 1 }, { "if-match": created._etag }), {
    counter: "field is read-only",
  });
  // Sending back the stored value is no change, and a PUT that omits it keeps it.
  const same = await api.put(path, { name: "cd", counter: 0 }, { "if-match": created._etag });
  assert.equal(same.status, 200, same.text);
  const omitted = await api.put(path, { name: "ef" }, { "if-match": same.body._etag });
  assert.equal(omitted.status, 200, omitted.text);
  assert.equal((await api.get(path)).body.counter, 0);
});

shared("schema: nested dict and list member rules, issues nested", async (api) => {
  await assertCreated(api, "nested", {
    address: { city: "Rome", zip: "00100", geo: { lat: 41.9 } },
    rows: [{ sku: "a", qty: 1 }],
    ints: [1, 9],
  });
  const res = await api.post("nested", {
    address: { zip: "1", geo: { lat: 91 }, extra: 1 },
    rows: [{ sku: "a", qty: 1 }, { qty: 0 }],
    ints: [1, 10, "x"],
  });
  assertInvalid(res, {
    address: {
      city: "required field",
      zip: "value does not match regex '\\d{5}'",
      geo: { lat: "max value is 90" },
      extra: "unknown field",
    },
    rows: { 1: { sku: "required field", qty: "min value is 1" } },
    ints: { 1: "max value is 9", 2: "must be of integer type" },
  });
});

shared("dependencies: a field needs another (or one of its values)", async (api) => {
  await assertCreated(api, "deps", { street: "Main", city: "X", email: "a@b" });
  await assertCreated(api, "deps", { card: "1234", payment: "card", phone: "1" });
  assertInvalid(await api.post("deps", { street: "Main", email: "a@b" }), {
    street: "field 'city' is required",
  });
  assertInvalid(await api.post("deps", { card: "1234", payment: "cash", email: "a@b" }), {
    card: "depends on these values: payment in card",
  });
});

shared("excludes: fields that cannot be sent together", async (api) => {
  assertInvalid(await api.post("deps", { email: "a@b", phone: "1" }), {
    email: "'phone' must not be present with 'email'",
    phone: "'email' must not be present with 'phone'",
  });
  // Each excludes the other, so either one satisfies "required".
  assertInvalid(await api.post("deps", { city: "X" }), {
    email: "required field",
    phone: "required field",
  });
});

shared("keysrules / valuesrules check every key and value of a dict", async (api) => {
  await assertCreated(api, "maps", { counts: { a: 1, bc: 0 } });
  assertInvalid(await api.post("maps", { counts: { a: -1, B: 2, c: "x" } }), {
    counts: {
      a: "min value is 0",
      B: "value does not match regex '[a-z]+'",
      c: "must be of integer type",
    },
  });
});

shared("anyof / oneof / anyof_type", async (api) => {
  await assertCreated(api, "maps", { any: 10, one: -1, typed: true });
  await assertCreated(api, "maps", { any: "x", one: 11, typed: [1] });
  assertInvalid(await api.post("maps", { any: 5, one: 5, typed: "x" }), {
    any: "no definitions validate",
    one: "none or more than one rule validate",
    typed: "no definitions validate",
  });
});

shared("unknown fields are refused by default", async (api) => {
  assertInvalid(await api.post("people", { name: "ab", whoami: 1, other: { x: 1 } }), {
    whoami: "unknown field",
    other: "unknown field",
  });
});

shared("allow_unknown per resource stores unknown fields as sent", async (api) => {
  const doc = { name: "x", extra: { deep: [1, "two", { t: true }] }, n: 1.5 };
  const created = await assertCreated(api, "open", doc);
  const item = (await api.get(`open/${created._id}`)).body;
  assert.deepEqual(item.extra, doc.extra);
  assert.equal(item.n, 1.5);
  assertInvalid(await api.post("open", { name: 5, extra: 1 }), { name: "must be of string type" });
});

scenario(
  "ALLOW_UNKNOWN globally stores unknown fields everywhere",
  { ...SETTINGS, ALLOW_UNKNOWN: true },
  async (api) => {
    const created = await assertCreated(api, "people", { name: "ab", hobby: "chess" });
    assert.equal((await api.get(`people/${created._id}`)).body.hobby, "chess");
    const patched = await api.patch(`people/${created._id}`, { shoe: 42 }, {
      "if-match": created._etag,
    });
    assert.equal(patched.status, 200);
    const item = (await api.get(`people/${created._id}`)).body;
    assert.equal(item.shoe, 42);
    assert.equal(item.hobby, "chess");
  },
);

shared("allow_unknown per nested dict", async (api) => {
  const created = await assertCreated(api, "loose", { meta: { v: 1, free: "x" }, fixed: { v: 2 } });
  assert.deepEqual((await api.get(`loose/${created._id}`)).body.meta, { v: 1, free: "x" });
  assertInvalid(await api.post("loose", { meta: { v: "x" }, fixed: { v: 1, free: "x" } }), {
    meta: { v: "must be of integer type" },
    fixed: { free: "unknown field" },
  });
});

scenario("bulk: each document gets OK or ERR and nothing is stored", SETTINGS, async (api) => {
  const res = await api.post("people", [{ name: "ok" }, { name: "x", age: -1 }, { age: 1 }]);
  assert.equal(res.status, 422);
  assert.deepEqual(res.body, {
    _status: "ERR",
    _error: { code: 422, message: "Insertion failure: 2 document(s) contain(s) error(s)" },
    _items: [
      { _status: "OK" },
      { _status: "ERR", _issues: { name: "min length is 2", age: "min value is 0" } },
      { _status: "ERR", _issues: { name: "required field" } },
    ],
  });
  assert.equal((await api.get("people")).body._meta.total, 0);
});

scenario(
  "VALIDATION_ERROR_STATUS sets the status of validation errors",
  { ...SETTINGS, VALIDATION_ERROR_STATUS: 400 },
  async (api) => {
    assertInvalid(await api.post("people", { name: "a" }), { name: "min length is 2" }, 400);
  },
);

Deno.test("a schema the compiler cannot understand stops start-up with its path", async () => {
  const settings = {
    ...METHODS,
    STORE: "embedded",
    DOMAIN: {
      bad: {
        schema: {
          a: { type: "strnig" },
          b: { type: "string", minlength: -1 },
          c: { type: "dict", schema: { d: { type: "integer", frobnicate: true } } },
          e: { type: "string", regex: "(" },
          f: { type: "objectid", data_relation: { resource: "nowhere" } },
        },
      },
    },
  };
  const error = await createService(settings, { env: false }).then(
    () => assert.fail("createService accepted a broken schema"),
    (e) => e,
  );
  assert.ok(error instanceof SettingsError, String(error));
  const problems = error.problems.join("\n");
  for (
    const path of [
      "DOMAIN.bad.schema.a.type: unknown type 'strnig'",
      "DOMAIN.bad.schema.b.minlength: must be a non-negative integer",
      "DOMAIN.bad.schema.c.schema.d.frobnicate: unknown rule 'frobnicate'",
      "DOMAIN.bad.schema.e.regex: invalid regex",
      "DOMAIN.bad.schema.f.data_relation.resource: unknown resource 'nowhere'",
    ]
  ) assert.ok(problems.includes(path), `missing "${path}" in:\n${problems}`);
});
