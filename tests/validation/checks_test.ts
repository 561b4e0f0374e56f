import assert from "node:assert/strict";
import { ObjectId } from "../../src/doc/bson.ts";
import { type CustomRule, findBatchDuplicates, SchemaError } from "../../src/validation/mod.ts";
import { compile, ctx, issuesOf } from "./helpers.ts";

const ID = "5f1d2c3b4a5f1d2c3b4a5f1d";

Deno.test("unique: collected (nested dotted) and checked through the context", async () => {
  const s = compile({
    email: { type: "string", unique: true },
    profile: { type: "dict", schema: { nick: { type: "string", unique: true } } },
  });
  assert.deepEqual(s.uniqueFields, ["email", "profile.nick"]);
  const c = ctx("create", { dups: ["email=a@b", "profile.nick=bob"] });
  assert.deepEqual(await issuesOf(s, { email: "a@b", profile: { nick: "bob" } }, c), {
    email: "value 'a@b' is not unique",
    profile: { nick: "value 'bob' is not unique" },
  });
  assert.equal(await issuesOf(s, { email: "c@d" }, c), null);
});

Deno.test("unique on replace/patch excludes the document itself; untouched fields not checked", async () => {
  const s = compile({ email: { type: "string", unique: true }, n: { type: "integer" } });
  const original = { _id: new ObjectId(ID), email: "a@b" };
  const c = ctx("patch", { original });
  await s.validate({ n: 1 }, c);
  assert.deepEqual(c.calls, []);
  const c2 = ctx("replace", { original });
  await s.validate({ email: "a@b" }, c2);
  assert.deepEqual(c2.calls, [`dup email=a@b excl=${ID}`]);
});

Deno.test("data_relation: value must exist; lists of references checked per member", async () => {
  const s = compile({
    owner: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
    tags: {
      type: "list",
      schema: { type: "string", data_relation: { resource: "tags", field: "name" } },
    },
  });
  assert.deepEqual(s.relations, {
    owner: { resource: "people", field: "_id", embeddable: true, version: false },
    tags: { resource: "tags", field: "name", embeddable: false, version: false },
  });
  const c = ctx("create", { exists: [`people=${ID}`, "tags=a"] });
  assert.equal(await issuesOf(s, { owner: ID, tags: ["a"] }, c), null);
  assert.deepEqual(await issuesOf(s, { owner: "aaaaaaaaaaaaaaaaaaaaaaaa", tags: ["a", "zz"] }, c), {
    owner: "value 'aaaaaaaaaaaaaaaaaaaaaaaa' must exist in resource 'people', field '_id'",
    tags: { 1: "value 'zz' must exist in resource 'tags', field 'name'" },
  });
});

Deno.test("data_relation with version: the value is {field, _version}", async () => {
  const s = compile({
    ref: {
      type: "dict",
      schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
      data_relation: { resource: "docs", version: true },
    },
  });
  const c = ctx("create", { exists: [`docs=${JSON.stringify({ _id: ID, _version: 2 })}`] });
  assert.equal(await issuesOf(s, { ref: { _id: ID, _version: 2 } }, c), null);
  assert.deepEqual(await issuesOf(s, { ref: { _id: ID, _version: 3 } }, c), {
    ref: `value '${ID}' must exist in resource 'docs', field '_id' at version '3'.`,
  });
});

Deno.test("no async checks for values that already failed structurally", async () => {
  const s = compile({ owner: { type: "objectid", data_relation: { resource: "people" } } });
  const c = ctx();
  assert.deepEqual(await issuesOf(s, { owner: "bad" }, c), { owner: "must be of objectid type" });
  assert.deepEqual(c.calls, []);
});

Deno.test("custom rules (sync and async) and custom types", async () => {
  const rules: Record<string, CustomRule> = {
    multiple_of: {
      check: (v, arg) =>
        typeof v === "number" && v % Number(arg) !== 0 ? `must be a multiple of ${arg}` : null,
    },
    not_taken: {
      check: async (v, _arg, c) => {
        await Promise.resolve();
        return v === "taken" && c.field === "nick" && c.doc.qty === 5 ? "is taken" : null;
      },
    },
  };
  const types = { even: { check: (v: unknown) => Number.isInteger(v) && (v as number) % 2 === 0 } };
  const s = compile({
    qty: { type: "integer", multiple_of: 5 },
    nick: { type: "string", not_taken: true },
    e: { type: "even" },
    e2: { type: ["even", "string"] },
  }, { rules, types });
  assert.equal(await issuesOf(s, { qty: 10, nick: "ok", e: 4, e2: "s" }), null);
  assert.deepEqual(await issuesOf(s, { qty: 5, nick: "taken", e: 3, e2: 1 }), {
    nick: "is taken",
    e: "must be of even type",
    e2: "must be of even or string type",
  });
  assert.deepEqual(await issuesOf(s, { qty: 7 }), { qty: "must be a multiple of 5" });
});

Deno.test("SchemaError lists every problem with its path", () => {
  try {
    compile({
      age: { type: "intger" },
      name: { type: "string", maxlenght: 3 },
      code: { type: "string", regex: "([a-z" },
      owner: { type: "objectid", data_relation: { field: "_id" } },
      n: { type: "integer", min: "1", required: "yes" },
      tags: { type: "list", schema: { type: "dict", schema: { x: { type: "nope" } } } },
      bad: "string",
      of: { anyof: [{ unique: true }] },
    } as never);
    assert.fail("should throw");
  } catch (e) {
    assert.ok(e instanceof SchemaError);
    const p = "DOMAIN.test.schema";
    assert.deepEqual(e.problems.sort(), [
      `${p}.age.type: unknown type 'intger'`,
      `${p}.bad: field rules must be an object`,
      `${p}.code.regex: invalid regex: unsupported regular expression: missing closing ]: \`[a-z)\``,
      `${p}.n.min: must be a number`,
      `${p}.n.required: must be a boolean`,
      `${p}.name.maxlenght: unknown rule 'maxlenght'`,
      `${p}.of.anyof[0].unique: not allowed inside rule branches`,
      `${p}.owner.data_relation.resource: a resource name is required`,
      `${p}.tags.schema.schema.x.type: unknown type 'nope'`,
    ]);
    assert.match(e.message, /unknown type 'intger'/);
  }
});

Deno.test("SchemaError for relations to unknown resources and bad DATE_FORMAT", () => {
  assert.throws(
    () => compile({ o: { data_relation: { resource: "ghosts" } } }, { resources: ["people"] }),
    (e: unknown) => e instanceof SchemaError && e.problems[0].includes("unknown resource 'ghosts'"),
  );
  assert.throws(
    () => compile({}, { dateFormat: "%Q" }),
    (e: unknown) => e instanceof SchemaError && e.problems[0].startsWith("DATE_FORMAT"),
  );
});

Deno.test("findBatchDuplicates marks later repeats of unique values", () => {
  const docs = [
    { email: "a", p: { nick: "x" } },
    { email: "b", p: { nick: "x" } },
    { email: "a" },
    { email: null },
    { email: null },
    { _id: 1, email: new ObjectId(ID) },
    { email: new ObjectId(ID) },
  ];
  const dups = findBatchDuplicates(docs, ["email", "p.nick"]);
  assert.deepEqual([...dups.keys()].sort(), [1, 2, 6]);
  assert.deepEqual(dups.get(1), { p: { nick: "value 'x' is not unique" } });
  assert.deepEqual(dups.get(2), { email: "value 'a' is not unique" });
  assert.deepEqual(dups.get(6), { email: `value '${ID}' is not unique` });
});

Deno.test("describe() returns the JSON schema as written, frozen", () => {
  const schema = { name: { type: "string", regex: "[a-z]+", default: "x" } };
  const s = compile(schema);
  const d = s.describe() as Record<string, unknown>;
  assert.deepEqual(d, schema);
  assert.ok(Object.isFrozen(d));
  assert.notEqual(d, schema);
});
