/** The compiled schema model: paths, aliases, relations, media paths, defaults, flags. */
import assert from "node:assert/strict";
import { TypeTable } from "../../src/domain/field-types.ts";
import {
  buildSchemaModel,
  expandShorthand,
  type FieldAt,
  type SchemaModel,
  singleType,
} from "../../src/domain/schema.ts";
import type { ResourceSchema } from "../../src/domain/types.ts";

function model(schema: Record<string, unknown>, idField = "_id"): SchemaModel {
  return buildSchemaModel(expandShorthand(schema) as ResourceSchema, {
    types: new TypeTable(),
    idField,
    allowUnknown: false,
    metaFields: { _created: "datetime" },
  });
}

/** The base types of what a path resolves to, `"free"`, or undefined. */
function typesAt(at: FieldAt): string[] | "free" | undefined {
  return at === undefined || at === "free" ? at : at.types.map((t) => t.base);
}

const SCHEMA = {
  name: "string",
  at: { type: "date" },
  price: { type: "decimal" },
  address: { type: "dict", schema: { city: "string", geo: { type: "dict" } } },
  tags: { type: "list", schema: "string" },
  rows: { type: "list", schema: { type: "dict", schema: { qty: "integer" } } },
  loose: { type: "list" },
  scores: { type: "dict", valuesrules: { type: "integer" } },
  open: { type: "dict", schema: { a: "string" }, allow_unknown: true },
  closed: { type: "dict", schema: { a: "string" } },
  checked: { type: "dict", allow_unknown: { type: "boolean" } },
};

Deno.test("schema model: dotted paths through dicts, lists, value rules and unknown names", () => {
  const m = model(SCHEMA);
  assert.deepEqual(typesAt(m.fieldAt("name")), ["string"]);
  assert.deepEqual(typesAt(m.fieldAt("address.city")), ["string"]);
  assert.equal(typesAt(m.fieldAt("address.geo.anything")), "free");
  assert.equal(typesAt(m.fieldAt("address.nope")), undefined);
  assert.equal(typesAt(m.fieldAt("name.first")), undefined);
  assert.deepEqual(typesAt(m.fieldAt("tags.0")), ["string"]);
  assert.deepEqual(typesAt(m.fieldAt("rows.qty")), ["integer"]);
  assert.deepEqual(typesAt(m.fieldAt("rows.3.qty")), ["integer"]);
  assert.equal(typesAt(m.fieldAt("loose.x")), "free");
  assert.deepEqual(typesAt(m.fieldAt("scores.math")), ["integer"]);
  assert.equal(typesAt(m.fieldAt("open.b")), "free");
  assert.equal(typesAt(m.fieldAt("closed.b")), undefined);
  assert.deepEqual(typesAt(m.fieldAt("checked.x")), ["boolean"]);
  // Only declared names count at the document level; inherited names never do.
  assert.equal(m.fieldAt("nope"), undefined);
  assert.equal(m.fieldAt("constructor"), undefined);
  assert.equal(m.fieldAt("toString.x"), undefined);
});

Deno.test("schema model: aliases resolved once, names kept for messages", () => {
  const m = model(SCHEMA);
  const at = m.fieldAt("at");
  assert.ok(at && at !== "free");
  assert.equal(at.types[0].name, "date");
  assert.equal(at.types[0].base, "datetime");
  assert.equal(singleType(m.fieldAt("price")), "decimal128");
  assert.equal(singleType(m.fieldAt("address.geo.x")), undefined);
});

Deno.test("schema model: the id field is an objectid unless declared; meta fields are typed", () => {
  assert.equal(singleType(model(SCHEMA).fieldAt("_id")), "objectid");
  assert.equal(singleType(model({ uid: { type: "uuid" } }, "uid").fieldAt("uid")), "uuid");
  assert.equal(singleType(model({}, "uid").fieldAt("uid")), "objectid");
  assert.equal(singleType(model(SCHEMA).fieldAt("_created")), "datetime");
  // A declared field wins over a meta field of the same name.
  assert.equal(singleType(model({ _created: "string" }).fieldAt("_created")), "string");
});

Deno.test("schema model: relations by path, list members through their list's path", () => {
  const m = model({
    author: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
    refs: { type: "list", schema: { type: "objectid", data_relation: { resource: "tags" } } },
    note: { type: "dict", schema: { by: { data_relation: { resource: "people" } } } },
    bad: { data_relation: { resource: "" } },
    branch: { anyof: [{ data_relation: { resource: "people" } }] },
  });
  assert.deepEqual(Object.keys(m.relations).sort(), ["author", "note.by", "refs"]);
  assert.deepEqual(m.relations.author, {
    resource: "people",
    field: "_id",
    embeddable: true,
    version: false,
  });
  const refs = m.fieldAt("refs");
  assert.ok(refs && refs !== "free" && refs.member?.relation?.resource === "tags");
});

Deno.test("schema model: media paths, defaults, flags and unversioned fields", () => {
  const m = model({
    photo: { type: "media" },
    album: { type: "list", schema: { type: "media" } },
    cover: { type: "dict", schema: { image: { type: "media" } } },
    count: { type: "integer", default: 0, readonly: true, nullable: true },
    notes: { type: "string", versioned: false },
    either: { anyof: [{ type: "string", readonly: true, default: "x" }] },
  });
  assert.deepEqual(m.mediaPaths, [["photo"], ["album", "[]"], ["cover", "image"]]);
  const count = m.fieldAt("count");
  assert.ok(count && count !== "free");
  assert.deepEqual(count.default, { value: 0 });
  assert.equal(count.readonly, true);
  assert.equal(count.nullable, true);
  assert.deepEqual(m.unversioned, ["notes"]);
  // Rule branches hold no read-only flag or default of their own.
  const either = m.fieldAt("either");
  assert.ok(either && either !== "free");
  const branch = either.branches[0].sets[0]!;
  assert.equal(branch.plain, false);
  assert.equal(branch.readonly, false);
  assert.equal(branch.default, undefined);
});

Deno.test("schema model: frozen", () => {
  const m = model(SCHEMA);
  assert.ok(Object.isFrozen(m));
  assert.ok(Object.isFrozen(m.relations));
  const name = m.fieldAt("name");
  assert.ok(name && name !== "free" && Object.isFrozen(name) && Object.isFrozen(name.types));
  assert.throws(() => (m.mediaPaths as string[][]).push(["x"]));
});

Deno.test("expandShorthand: type names stand for {type}, at any depth", () => {
  assert.deepEqual(expandShorthand({ a: "integer", l: { type: "list", schema: "string" } }), {
    a: { type: "integer" },
    l: { type: "list", schema: { type: "string" } },
  });
  assert.deepEqual(expandShorthand({ d: { type: "dict", schema: { x: "boolean" } } }), {
    d: { type: "dict", schema: { x: { type: "boolean" } } },
  });
});
