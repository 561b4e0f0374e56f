import assert from "node:assert/strict";
import { compile, ctx, issuesOf } from "./helpers.ts";

Deno.test("required: missing field reported, default satisfies it", async () => {
  const s = compile({
    name: { type: "string", required: true },
    n: { type: "integer", required: true, default: 1 },
  });
  assert.deepEqual(await issuesOf(s, {}), { name: "required field" });
  assert.equal(await issuesOf(s, { name: "a" }), null);
});

Deno.test("nullable: null refused unless nullable", async () => {
  const s = compile({ a: { type: "integer" }, b: { type: "integer", nullable: true, min: 5 } });
  assert.deepEqual(await issuesOf(s, { a: null }), { a: "null value not allowed" });
  assert.equal(await issuesOf(s, { b: null }), null);
});

Deno.test("minlength/maxlength on strings and lists", async () => {
  const s = compile({
    s: { type: "string", minlength: 2, maxlength: 4 },
    l: { type: "list", minlength: 1, maxlength: 2 },
  });
  assert.equal(await issuesOf(s, { s: "abc", l: [1] }), null);
  assert.deepEqual(await issuesOf(s, { s: "a" }), { s: "min length is 2" });
  assert.deepEqual(await issuesOf(s, { s: "abcde" }), { s: "max length is 4" });
  assert.deepEqual(await issuesOf(s, { l: [] }), { l: "min length is 1" });
  assert.deepEqual(await issuesOf(s, { l: [1, 2, 3] }), { l: "max length is 2" });
});

Deno.test("min/max on numbers", async () => {
  const s = compile({ n: { type: "number", min: 1, max: 10 } });
  assert.equal(await issuesOf(s, { n: 1 }), null);
  assert.equal(await issuesOf(s, { n: 10 }), null);
  assert.deepEqual(await issuesOf(s, { n: 0.5 }), { n: "min value is 1" });
  assert.deepEqual(await issuesOf(s, { n: 11 }), { n: "max value is 10" });
});

Deno.test("allowed: scalar values and list members", async () => {
  const s = compile({
    role: { type: "string", allowed: ["admin", "user"] },
    tags: { type: "list", allowed: ["a", "b"] },
  });
  assert.equal(await issuesOf(s, { role: "user", tags: ["a", "b", "a"] }), null);
  assert.deepEqual(await issuesOf(s, { role: "root" }), { role: "unallowed value root" });
  assert.deepEqual(await issuesOf(s, { tags: ["a", "x", "y"] }), { tags: "unallowed values x, y" });
});

Deno.test("regex is a full match; bad input gets the pattern in the message", async () => {
  const s = compile({
    code: { type: "string", regex: "[A-Z]{3}" },
    ci: { type: "string", regex: "(?i)abc" },
  });
  assert.equal(await issuesOf(s, { code: "ABC", ci: "AbC" }), null);
  assert.deepEqual(await issuesOf(s, { code: "ABCD" }), {
    code: "value does not match regex '[A-Z]{3}'",
  });
  assert.deepEqual(await issuesOf(s, { code: "xABC" }), {
    code: "value does not match regex '[A-Z]{3}'",
  });
});

Deno.test("empty: false refuses empty string, list and dict", async () => {
  const s = compile({
    s: { type: "string", empty: false },
    l: { type: "list", empty: false },
    d: { type: "dict", empty: false },
  });
  assert.equal(await issuesOf(s, { s: "x", l: [1], d: { a: 1 } }), null);
  assert.deepEqual(await issuesOf(s, { s: "", l: [], d: {} }), {
    s: "empty values not allowed",
    l: "empty values not allowed",
    d: "empty values not allowed",
  });
});

Deno.test("unknown fields refused unless allow_unknown (resource or nested)", async () => {
  const s = compile({
    a: { type: "string" },
    d: { type: "dict", schema: { x: { type: "integer" } } },
  });
  assert.deepEqual(await issuesOf(s, { a: "x", zz: 1, d: { x: 1, y: 2 } }), {
    zz: "unknown field",
    d: { y: "unknown field" },
  });
  const open = compile({ a: { type: "string" } }, { allowUnknown: true });
  const r = await open.validate({ a: "x", extra: { any: 1 } }, ctx());
  assert.equal(r.issues, null);
  assert.deepEqual(r.doc.extra, { any: 1 });
  const nested = compile({
    d: { type: "dict", allow_unknown: true, schema: { x: { type: "integer" } } },
  });
  assert.equal(await issuesOf(nested, { d: { x: 1, y: 2 } }), null);
  assert.deepEqual(await issuesOf(nested, { d: { x: "1" } }), {
    d: { x: "must be of integer type" },
  });
  const ruled = compile({ d: { type: "dict", allow_unknown: { type: "integer" } } });
  assert.equal(await issuesOf(ruled, { d: { a: 1 } }), null);
  assert.deepEqual(await issuesOf(ruled, { d: { a: "x" } }), {
    d: { a: "must be of integer type" },
  });
});

Deno.test("empty schema means no validation", async () => {
  const s = compile({});
  assert.equal(await issuesOf(s, { anything: [1, { b: 2 }] }), null);
});

Deno.test("nested dict schema: issues nest, required inside dicts", async () => {
  const s = compile({
    address: {
      type: "dict",
      schema: {
        city: { type: "string", required: true },
        geo: { type: "dict", schema: { lat: { type: "number", min: -90, max: 90 } } },
      },
    },
  });
  assert.equal(await issuesOf(s, { address: { city: "Rome", geo: { lat: 41.9 } } }), null);
  assert.deepEqual(await issuesOf(s, { address: { geo: { lat: 100 } } }), {
    address: { city: "required field", geo: { lat: "max value is 90" } },
  });
  assert.deepEqual(await issuesOf(s, { address: "Rome" }), { address: "must be of dict type" });
});

Deno.test("list schema: member rules; items: per position", async () => {
  const s = compile({
    tags: { type: "list", schema: { type: "string", maxlength: 3 } },
    people: {
      type: "list",
      schema: { type: "dict", schema: { name: { type: "string", required: true } } },
    },
    pair: { type: "list", items: [{ type: "string" }, { type: "integer" }] },
  });
  assert.equal(
    await issuesOf(s, { tags: ["a", "bc"], people: [{ name: "x" }], pair: ["a", 1] }),
    null,
  );
  assert.deepEqual(await issuesOf(s, { tags: ["a", 5, "long"] }), {
    tags: { 1: "must be of string type", 2: "max length is 3" },
  });
  assert.deepEqual(await issuesOf(s, { people: [{ name: "x" }, {}] }), {
    people: { 1: { name: "required field" } },
  });
  assert.deepEqual(await issuesOf(s, { pair: [1, 1] }), { pair: { 0: "must be of string type" } });
  assert.deepEqual(await issuesOf(s, { pair: ["a"] }), {
    pair: "length of list should be 2, it is 1",
  });
});

Deno.test("dependencies: list form and dict form, against siblings", async () => {
  const s = compile({
    a: { type: "string", dependencies: ["b"] },
    b: { type: "string" },
    c: { type: "string", dependencies: { b: ["x", "y"] } },
  });
  assert.equal(await issuesOf(s, { a: "1", b: "z" }), null);
  assert.deepEqual(await issuesOf(s, { a: "1" }), { a: "field 'b' is required" });
  assert.equal(await issuesOf(s, { c: "1", b: "x" }), null);
  assert.deepEqual(await issuesOf(s, { c: "1", b: "z" }), {
    c: "depends on these values: b in x, y",
  });
  assert.equal(await issuesOf(s, { b: "z" }), null);
});

Deno.test("excludes: fields that may not appear together; required lifted by the exclusion", async () => {
  const s = compile({
    a: { type: "string", excludes: "b", required: true },
    b: { type: "string", excludes: ["a"], required: true },
  });
  assert.equal(await issuesOf(s, { a: "1" }), null);
  assert.equal(await issuesOf(s, { b: "1" }), null);
  assert.deepEqual(await issuesOf(s, { a: "1", b: "2" }), {
    a: "'b' must not be present with 'a'",
    b: "'a' must not be present with 'b'",
  });
  assert.deepEqual(await issuesOf(s, {}), { a: "required field", b: "required field" });
});

Deno.test("keysrules/valuesrules and the old keyschema/valueschema names", async () => {
  for (const [k, v] of [["keysrules", "valuesrules"], ["keyschema", "valueschema"]]) {
    const s = compile({
      m: { type: "dict", [k]: { type: "string", regex: "[a-z]+" }, [v]: { type: "integer" } },
    });
    assert.equal(await issuesOf(s, { m: { ab: 1, c: 2 } }), null);
    assert.deepEqual(await issuesOf(s, { m: { ab: "x", B1: 2 } }), {
      m: { ab: "must be of integer type", B1: "value does not match regex '[a-z]+'" },
    });
  }
});

Deno.test("anyof/oneof/allof/noneof and the anyof_type shorthand", async () => {
  const s = compile({
    any: { type: "integer", anyof: [{ min: 0, max: 10 }, { min: 100 }] },
    one: { type: "integer", oneof: [{ min: 0 }, { max: 10 }] },
    all: { type: "integer", allof: [{ min: 0 }, { max: 10 }] },
    none: { type: "integer", noneof: [{ min: 100 }, { max: -100 }] },
    short: { anyof_type: ["string", "integer"] },
  });
  assert.equal(await issuesOf(s, { any: 5, one: 20, all: 5, none: 0, short: "x" }), null);
  assert.equal(await issuesOf(s, { any: 200, short: 3 }), null);
  assert.deepEqual(await issuesOf(s, { any: 50, one: 5, all: 11, none: 150, short: 1.5 }), {
    any: "no definitions validate",
    one: "none or more than one rule validate",
    all: "max value is 10",
    none: "one or more definitions validate",
    short: "no definitions validate",
  });
});

Deno.test("forbidden and contains", async () => {
  const s = compile({
    u: { type: "string", forbidden: ["root"] },
    l: { type: "list", contains: ["a", "b"] },
  });
  assert.equal(await issuesOf(s, { u: "bob", l: ["b", "a", "c"] }), null);
  assert.deepEqual(await issuesOf(s, { u: "root", l: ["a"] }), {
    u: "unallowed value root",
    l: "missing members b",
  });
});

Deno.test("several problems on one field are joined", async () => {
  const s = compile({ s: { type: "string", maxlength: 2, regex: "[0-9]+" } });
  assert.deepEqual(await issuesOf(s, { s: "abc" }), {
    s: "value does not match regex '[0-9]+'; max length is 2",
  });
});

Deno.test("field names starting with $ or containing dots are refused", async () => {
  const s = compile({ d: { type: "dict" } }, { allowUnknown: true });
  assert.deepEqual(await issuesOf(s, { $where: "1", d: { "a.b": 1, ok: { $gt: 1 } } }), {
    $where: "invalid field name",
    d: { "a.b": "invalid field name", ok: { $gt: "invalid field name" } },
  });
});

Deno.test("non-object documents are refused", async () => {
  const s = compile({});
  const r = await s.validate([] as unknown as Record<string, unknown>, ctx());
  assert.deepEqual(r.issues, { _document: "document must be an object" });
});
