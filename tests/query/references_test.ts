import assert from "node:assert/strict";
import { visitReferences } from "../../src/query/references.ts";
import { QueryError } from "../../src/query/errors.ts";

/** The fields and whole-document reads `filter` reports, in order. */
function refs(filter: unknown): { fields: string[]; whole: string[] } {
  const fields: string[] = [];
  const whole: string[] = [];
  visitReferences(filter, "where", {
    field: (p) => fields.push(p),
    whole: (w) => whole.push(w),
  });
  return { fields, whole };
}

const expr = (e: unknown) => ({ $expr: e });

Deno.test("references: query field names, nested queries and $elemMatch", () => {
  assert.deepEqual(
    refs({ a: 1, $or: [{ "b.c": { $gt: 1 } }, { d: { $not: { $eq: 2 } } }], $comment: "$x" })
      .fields,
    ["a", "b.c", "d"],
  );
  assert.deepEqual(refs({ list: { $elemMatch: { x: 1, $or: [{ y: 2 }] } } }).fields, [
    "list",
    "list.x",
    "list.y",
  ]);
  assert.deepEqual(refs({ list: { $elemMatch: { $gt: 1 } } }).fields, ["list"]);
  // Values are data, whatever they spell.
  assert.deepEqual(refs({ a: "$$ROOT", b: { $in: ["$secret"] } }), {
    fields: ["a", "b"],
    whole: [],
  });
  for (const op of ["$where", "$jsonSchema", "$text"]) {
    assert.deepEqual(refs({ [op]: {} }).whole, [op]);
  }
});

Deno.test("references: $expr paths, $$ROOT and $$CURRENT", () => {
  assert.deepEqual(
    refs(expr({ $eq: ["$a.b", "$$ROOT.c", "$$CURRENT.d.e", "$$NOW", "plain"] })),
    { fields: ["a.b", "c", "d.e"], whole: [] },
  );
  assert.deepEqual(refs(expr({ $eq: ["$$ROOT", "$$CURRENT"] })).whole, ["$$ROOT", "$$CURRENT"]);
  assert.deepEqual(refs(expr({ $objectToArray: "$$ROOT" })).whole, ["$$ROOT"]);
  assert.deepEqual(refs(expr({ $mergeObjects: [{ k: "$$CURRENT" }] })).whole, ["$$CURRENT"]);
  assert.deepEqual(refs(expr({ $literal: { $getField: "$$ROOT" } })), { fields: [], whole: [] });
});

Deno.test("references: $getField, $setField and $unsetField", () => {
  assert.deepEqual(refs(expr({ $getField: "salary" })).fields, ["salary"]);
  assert.deepEqual(refs(expr({ $getField: { field: { $literal: "salary" } } })).fields, [
    "salary",
  ]);
  assert.deepEqual(refs(expr({ $getField: { field: "x", input: "$doc" } })), {
    fields: ["doc"],
    whole: [],
  });
  assert.deepEqual(refs(expr({ $getField: { field: "x", input: "$$ROOT" } })).whole, ["$$ROOT"]);
  for (const field of [{ $concat: ["a", "b"] }, "$name", "a.b", { $literal: "$x" }]) {
    assert.deepEqual(refs(expr({ $getField: { field } })).whole, ["$getField"], String(field));
  }
  assert.deepEqual(refs(expr({ $setField: { field: "k", input: "$$ROOT", value: "$v" } })), {
    fields: ["v"],
    whole: ["$$ROOT"],
  });
  assert.deepEqual(refs(expr({ $unsetField: { field: "k", input: "$sub" } })).fields, ["sub"]);
});

Deno.test("references: variables carry only what bound them", () => {
  assert.deepEqual(
    refs(expr({ $let: { vars: { d: "$$ROOT" }, in: "$$d.salary" } })),
    { fields: [], whole: ["$$ROOT"] },
  );
  assert.deepEqual(
    refs(expr({ $map: { input: "$tags", as: "t", in: { $concat: ["$$t", "$name"] } } })).fields,
    ["tags", "name"],
  );
  assert.deepEqual(
    refs(expr({ $filter: { input: "$xs", cond: { $gt: ["$$this.v", 1] } } })).fields,
    ["xs"],
  );
  assert.deepEqual(
    refs(expr({ $reduce: { input: "$xs", initialValue: 0, in: { $add: ["$$value", "$$this"] } } }))
      .fields,
    ["xs"],
  );
});

Deno.test("references: unknown operators and variables, bad names: 400", () => {
  const refused = (filter: unknown, pattern: RegExp) =>
    assert.throws(() => refs(filter), (e: unknown) => {
      assert.ok(e instanceof QueryError);
      assert.equal(e.status, 400);
      assert.match(e.message, /^where: /);
      assert.match(e.message, pattern);
      return true;
    });
  refused(expr({ $meta: "textScore" }), /not allowed/);
  refused(expr({ $function: { body: "", args: [], lang: "js" } }), /not allowed/);
  refused(expr("$$USER_ROLES"), /unknown variable/);
  refused(expr("$$SEARCH_META"), /unknown variable/);
  refused(expr({ $map: { input: "$a", in: "$$x" } }), /unknown variable/);
  // The variable exists only in its body.
  refused(expr({ $and: [{ $let: { vars: { d: 1 }, in: "$$d" } }, "$$d"] }), /unknown variable/);
  refused(expr({ $let: { vars: { CURRENT: "$a" }, in: "$b" } }), /invalid variable name/);
  refused(expr({ $map: { input: "$a", as: "ROOT", in: 1 } }), /invalid variable name/);
  refused(expr({ $getField: { field: "a", input: "$b", extra: 1 } }), /unknown argument/);
  refused(expr("$a..b"), /invalid field path/);
  refused(expr("$"), /invalid field path/);
});
