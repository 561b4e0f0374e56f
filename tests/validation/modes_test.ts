import assert from "node:assert/strict";
import type { Doc } from "../../src/store/store.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import { compile, ctx, issuesOf } from "./helpers.ts";

const ID = "5f1d2c3b4a5f1d2c3b4a5f1d";

Deno.test("create applies defaults (also nested and into null non-nullable fields)", async () => {
  const s = compile({
    status: { type: "string", default: "new" },
    n: { type: "integer", default: 0 },
    at: { type: "datetime", default: "Tue, 02 Apr 2013 10:29:13 GMT" },
    d: { type: "dict", schema: { x: { type: "integer", default: 7 }, y: { type: "integer" } } },
  });
  const r = await s.validate({ n: null, d: { y: 1 } }, ctx());
  assert.equal(r.issues, null);
  assert.equal(r.doc.status, "new");
  assert.equal(r.doc.n, 0);
  assert.ok(r.doc.at instanceof Date);
  assert.deepEqual(r.doc.d, { x: 7, y: 1 });
});

Deno.test("defaults are copies: mutating a result does not change the schema default", async () => {
  const s = compile({ tags: { type: "list", default: ["a"] } });
  const r1 = await s.validate({}, ctx());
  (r1.doc.tags as string[]).push("b");
  const r2 = await s.validate({}, ctx());
  assert.deepEqual(r2.doc.tags, ["a"]);
});

Deno.test("readonly: refused when sent, but its default is applied on create", async () => {
  const s = compile({
    score: { type: "integer", readonly: true, default: 10 },
    name: { type: "string" },
  });
  assert.deepEqual(await issuesOf(s, { score: 3 }), { score: "field is read-only" });
  const r = await s.validate({ name: "a" }, ctx());
  assert.equal(r.issues, null);
  assert.equal(r.doc.score, 10);
});

Deno.test("replace: readonly fields survive a PUT that omits them, or sends them unchanged", async () => {
  const s = compile({ score: { type: "integer", readonly: true }, name: { type: "string" } });
  const original = { _id: new ObjectId(ID), score: 5, name: "a" };
  const r = await s.validate({ name: "b" }, ctx("replace", { original }));
  assert.equal(r.issues, null);
  assert.deepEqual(r.doc, { name: "b", score: 5 });
  assert.equal(await issuesOf(s, { name: "b", score: 5 }, ctx("replace", { original })), null);
  assert.deepEqual(await issuesOf(s, { score: 6 }, ctx("replace", { original })), {
    score: "field is read-only",
  });
});

Deno.test("meta fields sent by a client are read-only; the id may be sent on create", async () => {
  const s = compile({ name: { type: "string" } });
  assert.deepEqual(await issuesOf(s, { _created: "x", _etag: "y", name: "a" }), {
    _created: "field is read-only",
    _etag: "field is read-only",
  });
  const r = await s.validate({ _id: ID }, ctx());
  assert.equal(r.issues, null);
  assert.ok(r.doc._id instanceof ObjectId);
  assert.deepEqual(await issuesOf(s, { _id: "nope" }), { _id: "must be of objectid type" });
  const original = { _id: new ObjectId(ID), name: "a" };
  assert.equal(await issuesOf(s, { _id: ID, name: "b" }, ctx("replace", { original })), null);
  assert.deepEqual(
    await issuesOf(s, { _id: "aaaaaaaaaaaaaaaaaaaaaaaa" }, ctx("replace", { original })),
    { _id: "field is read-only" },
  );
  assert.deepEqual(await issuesOf(s, { _deleted: false }, ctx("patch", { original })), {
    _deleted: "field is read-only",
  });
});

Deno.test("custom id field declared in the schema (uuid)", async () => {
  const s = compile({ _id: { type: "uuid" }, name: { type: "string" } });
  const id = "123e4567-e89b-12d3-a456-426614174000";
  const r = await s.validate({ _id: id, name: "x" }, ctx());
  assert.equal(r.issues, null);
  assert.equal(r.doc._id, id);
  assert.deepEqual(await issuesOf(s, { _id: ID }), { _id: "must be of uuid type" });
});

Deno.test("patch: validates only what is sent; required fields not re-demanded", async () => {
  const s = compile({
    name: { type: "string", required: true },
    age: { type: "integer", min: 0 },
    legacy: { type: "integer" },
  });
  const original = {
    _id: new ObjectId(ID),
    name: "a",
    legacy: "stale",
    _etag: "e",
    _created: new Date(),
  };
  const ok = await s.validate({ age: 3 }, ctx("patch", { original }));
  assert.equal(ok.issues, null);
  assert.deepEqual(ok.doc, { age: 3 });
  assert.deepEqual(await issuesOf(s, { age: -1 }, ctx("patch", { original })), {
    age: "min value is 0",
  });
  assert.deepEqual(await issuesOf(s, { name: null }, ctx("patch", { original })), {
    name: "null value not allowed",
  });
  assert.deepEqual(await issuesOf(s, { bogus: 1 }, ctx("patch", { original })), {
    bogus: "unknown field",
  });
});

Deno.test("patch: dotted and nested keys update nested fields; values come back coerced", async () => {
  const s = compile({
    a: {
      type: "dict",
      schema: {
        b: { type: "datetime" },
        c: { type: "integer", required: true },
        o: { type: "objectid" },
      },
    },
  });
  const original = { a: { c: 1 } };
  const when = "Tue, 02 Apr 2013 10:29:13 GMT";
  const dotted = await s.validate({ "a.b": when }, ctx("patch", { original }));
  assert.equal(dotted.issues, null);
  assert.deepEqual(Object.keys(dotted.doc), ["a.b"]);
  assert.ok(dotted.doc["a.b"] instanceof Date);
  const nested = await s.validate({ a: { o: ID } }, ctx("patch", { original }));
  assert.equal(nested.issues, null);
  const a = nested.doc.a as Record<string, unknown>;
  assert.equal(a.c, 1, "merged with the stored dict");
  assert.ok(a.o instanceof ObjectId);
  assert.deepEqual(await issuesOf(s, { "a.c": "x" }, ctx("patch", { original })), {
    a: { c: "must be of integer type" },
  });
  assert.deepEqual(await issuesOf(s, { "a.zz": 1 }, ctx("patch", { original })), {
    a: { zz: "unknown field" },
  });
});

Deno.test("patch without nested merging: a sent dict replaces the stored one", async () => {
  const s = compile({
    a: { type: "dict", schema: { b: { type: "integer" }, c: { type: "integer", required: true } } },
  });
  const original = { a: { c: 1 } };
  assert.deepEqual(
    await issuesOf(s, { a: { b: 2 } }, ctx("patch", { original, mergeNested: false })),
    {
      a: { c: "required field" },
    },
  );
  assert.equal(await issuesOf(s, { a: { b: 2 } }, ctx("patch", { original })), null);
});

Deno.test("patch: conflicting keys, readonly, and dependencies checked against the stored document", async () => {
  const s = compile({
    a: { type: "dict", schema: { b: { type: "integer" } } },
    ro: { type: "string", readonly: true },
    x: { type: "string", dependencies: ["y"] },
    y: { type: "string" },
  });
  const original = { y: "present", ro: "r" };
  assert.deepEqual(await issuesOf(s, { a: 1, "a.b": 2 }, ctx("patch", { original })), {
    a: { b: "conflicting updates" },
  });
  assert.deepEqual(await issuesOf(s, { ro: "w" }, ctx("patch", { original })), {
    ro: "field is read-only",
  });
  assert.equal(await issuesOf(s, { x: "1" }, ctx("patch", { original })), null);
  assert.deepEqual(await issuesOf(s, { x: "1" }, ctx("patch", { original: {} })), {
    x: "field 'y' is required",
  });
});

Deno.test("patch: excludes and a required field's excludes read the stored document", async () => {
  const s = compile({
    a: { type: "string", excludes: "b" },
    b: { type: "string" },
    c: { type: "string", required: true, excludes: "d" },
    d: { type: "string" },
  });
  assert.deepEqual(await issuesOf(s, { a: "1" }, ctx("patch", { original: { b: "x", c: "y" } })), {
    a: "'b' must not be present with 'a'",
  });
  assert.equal(await issuesOf(s, { a: "1" }, ctx("patch", { original: { c: "y" } })), null);
});

Deno.test("patch: a nested field's dependency on a top-level one reads the stored document", async () => {
  const s = compile({
    d: { type: "dict", schema: { e: { type: "dict", schema: { x: { dependencies: "^y" } } } } },
    y: { type: "string" },
  });
  const stored = { d: { e: {} }, y: "here" };
  assert.equal(await issuesOf(s, { "d.e.x": 1 }, ctx("patch", { original: stored })), null);
  assert.deepEqual(await issuesOf(s, { "d.e.x": 1 }, ctx("patch", { original: { d: {} } })), {
    d: { e: { x: "field '^y' is required" } },
  });
});

Deno.test("patch: a custom rule sees the whole document the PATCH makes", async () => {
  const seen: Doc[] = [];
  const s = compile({ n: { type: "integer", spy: true }, m: { type: "integer" } }, {
    rules: { spy: { check: (_v, _arg, c) => (seen.push(c.doc), null) } },
  });
  assert.equal(await issuesOf(s, { n: 2 }, ctx("patch", { original: { n: 1, m: 7 } })), null);
  assert.deepEqual(seen, [{ n: 2, m: 7 }]);
});

Deno.test("patch: the fields it does not touch are not validated, nested ones neither", async () => {
  const s = compile({
    n: { type: "integer" },
    m: { type: "integer", max: 5 },
    d: { type: "dict", schema: { x: { type: "integer" }, y: { type: "integer", max: 5 } } },
  });
  // Stored before the schema said so: a PATCH of another field still goes through.
  const original = { n: 1, m: 9, d: { x: 1, y: 9 }, gone: true };
  const r = await s.validate({ n: 2, "d.x": 3 }, ctx("patch", { original }));
  assert.equal(r.issues, null);
  assert.deepEqual(r.doc, { n: 2, "d.x": 3 });
  const ok = await s.validate({ n: 2 }, ctx("patch", { original }));
  assert.equal(ok.issues, null);
  assert.deepEqual(ok.doc, { n: 2 });
  assert.deepEqual(await issuesOf(s, { m: 6 }, ctx("patch", { original })), {
    m: "max value is 5",
  });
});

Deno.test("defaults(): missing defaults for normalize_on_patch, nested ones dotted", () => {
  const s = compile({
    a: { type: "integer", default: 1 },
    b: { type: "integer" },
    at: { type: "datetime", default: "Tue, 02 Apr 2013 10:29:13 GMT" },
    d: { type: "dict", schema: { x: { type: "string", default: "dx" }, y: { type: "string" } } },
  });
  const out = s.defaults({ b: 2, d: { y: "1" } });
  assert.deepEqual(Object.keys(out).sort(), ["a", "at", "d.x"]);
  assert.equal(out.a, 1);
  assert.ok(out.at instanceof Date);
  assert.equal(out["d.x"], "dx");
  assert.deepEqual(s.defaults({ a: 5, at: new Date(), d: { x: "q" } }), {});
});

Deno.test("defaults(): read-only fields are never reset", () => {
  const s = compile({
    n: { type: "integer", readonly: true, default: 0 },
    m: { type: "integer", default: 1 },
  });
  assert.deepEqual(s.defaults({}), { m: 1 });
});
