import assert from "node:assert/strict";
import { parseWhere } from "../../src/query/where.ts";
import { parseExpression } from "../../src/query/expression.ts";
import { QueryError } from "../../src/query/errors.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import { DATE, OID, opts, parseRfc1123 } from "./helpers.ts";

const x = (s: string) => parseWhere(s, opts());

function refused(raw: string, pattern: RegExp, o = opts()): QueryError {
  try {
    parseWhere(raw, o);
  } catch (e) {
    assert.ok(e instanceof QueryError, String(e));
    assert.equal(e.status, 400);
    assert.match(e.message, pattern);
    return e;
  }
  assert.fail(`expected a QueryError for ${raw}`);
}

Deno.test("expression: comparisons map to MongoDB operators", () => {
  assert.deepEqual(x('name == "x"'), { name: "x" });
  assert.deepEqual(x("age != 3"), { age: { $ne: 3 } });
  assert.deepEqual(x("age < 3"), { age: { $lt: 3 } });
  assert.deepEqual(x("age <= 3"), { age: { $lte: 3 } });
  assert.deepEqual(x("age > -3.5"), { age: { $gt: -3.5 } });
  assert.deepEqual(x("age >= 1e3"), { age: { $gte: 1000 } });
  assert.deepEqual(x("active == true"), { active: true });
  assert.deepEqual(x("active == False"), { active: false });
  assert.deepEqual(x("name == null"), { name: null });
  assert.deepEqual(x("name == None"), { name: null });
  assert.deepEqual(x('address.city == "Rome"'), { "address.city": "Rome" });
  assert.deepEqual(x('tags.0 == "a"'), { "tags.0": "a" });
});

Deno.test("expression: and/or precedence and case-insensitive keywords", () => {
  assert.deepEqual(x('name == "x" and age > 3 or not (active != null)'), {
    $or: [
      { $and: [{ name: "x" }, { age: { $gt: 3 } }] },
      { active: { $not: { $ne: null } } },
    ],
  });
  assert.deepEqual(x("a == 1 AND b == 2 Or c == 3"), {
    $or: [{ $and: [{ a: 1 }, { b: 2 }] }, { c: 3 }],
  });
  assert.deepEqual(x("a == 1 && (b == 2 || c == 3)"), {
    $and: [{ a: 1 }, { $or: [{ b: 2 }, { c: 3 }] }],
  });
  assert.deepEqual(x("a == 1 and b == 2 and c == 3"), { $and: [{ a: 1 }, { b: 2 }, { c: 3 }] });
});

Deno.test("expression: not per field uses $not, on groups $nor", () => {
  assert.deepEqual(x("not a == 1"), { a: { $not: { $eq: 1 } } });
  assert.deepEqual(x("!(a > 1)"), { a: { $not: { $gt: 1 } } });
  assert.deepEqual(x("not (a == 1 or b == 2)"), { $nor: [{ $or: [{ a: 1 }, { b: 2 }] }] });
  assert.deepEqual(x("not not a == 1"), { a: { $eq: 1 } });
  assert.deepEqual(x("not (a == 1 and b == 2)"), { $nor: [{ $and: [{ a: 1 }, { b: 2 }] }] });
});

Deno.test("expression: in / not in lists", () => {
  assert.deepEqual(x("age in [1, 2, 3]"), { age: { $in: [1, 2, 3] } });
  assert.deepEqual(x('name not in ["a", "b",]'), { name: { $nin: ["a", "b"] } });
  assert.deepEqual(x("age in []"), { age: { $in: [] } });
  assert.deepEqual(x("tags == [1, [2]]"), { tags: [1, [2]] });
});

Deno.test("expression: datetime() produces Dates", () => {
  const f = x(`born > datetime("${DATE}")`);
  const gt = (f.born as Record<string, unknown>).$gt;
  assert.ok(gt instanceof Date);
  assert.equal(gt.toISOString(), "2013-04-02T10:29:13.000Z");
  refused('born > datetime("2013-04-02")', /does not match DATE_FORMAT/);
  refused("born > datetime(3)", /double-quoted date string/);
});

Deno.test("expression: strings are converted by field type like the JSON form", () => {
  const f = x(`born == "${DATE}" and _id == "${OID}" and owner in ["${OID}"]`);
  const parts = f.$and as Record<string, unknown>[];
  assert.ok(parts[0].born instanceof Date);
  assert.ok(parts[1]._id instanceof ObjectId);
  assert.ok((parts[2].owner as Record<string, unknown[]>).$in[0] instanceof ObjectId);
});

Deno.test("expression: escapes in double-quoted strings", () => {
  assert.deepEqual(x('name == "a \\"q\\" \\u00e9"'), { name: 'a "q" é' });
});

Deno.test("expression: errors carry the position", () => {
  const e = refused("name == 'x'", /single quotes are not allowed at position 8/);
  assert.equal(e.position, 8);
  refused("name = 3", /use '==' to compare at position 5/);
  refused("name ==", /expected a value, found end of expression at position 7/);
  refused("(a == 1", /expected '\)'.* at position 7/);
  refused("a == 1)", /expected end of expression.* at position 6/);
  refused("a == 1 b == 2", /position 7/);
  refused("3 == a", /expected a field name.* at position 0/);
  refused("a not 3", /expected 'in'/);
  refused("a in 3", /expected '\['/);
  refused("a == [1 2]", /expected ',' or '\]'/);
  refused('a == "unterminated', /unterminated string at position 5/);
  refused("a == 1 ; drop()", /unexpected character ";" at position 7/);
  refused("$where == 1", /unexpected character "\$" at position 0/);
});

Deno.test("expression: no code evaluation is possible", () => {
  refused("this.constructor.constructor('return 1')()", /QueryError|position/);
  refused("a == process.exit(1)", /expected end of expression, found "\(" at position 17/);
});

Deno.test("expression: a bare name as a value is its text, as in Eve", () => {
  assert.deepEqual(x("ref == abc"), { ref: "abc" });
  assert.deepEqual(x("role == agent and a.b != c.d"), {
    $and: [{ role: "agent" }, { "a.b": { $ne: "c.d" } }],
  });
});

Deno.test("expression: nesting is bounded", () => {
  refused("(".repeat(40) + "a == 1" + ")".repeat(40), /nesting deeper than 32 levels/);
  refused("not ".repeat(40) + "a == 1", /nesting deeper/);
  refused("a in " + "[".repeat(40) + "]".repeat(40), /nesting deeper/);
  const ok = "(".repeat(10) + "a == 1" + ")".repeat(10);
  assert.deepEqual(x(ok), { a: 1 });
});

Deno.test("expression: checks apply (blacklist via allowed filters, validation)", () => {
  refused("age == 1", /not allowed/, opts({ allowedFilters: ["name"] }));
  refused('age == "3"', /not a valid integer/, opts({ validateFiltering: true }));
  refused("nope == 1", /'nope' is invalid/, opts({ validateFiltering: true }));
});

Deno.test("parseExpression: usable on its own", () => {
  const f = parseExpression("a == 1", { parseDate: parseRfc1123, dateFormat: "x", maxDepth: 5 });
  assert.deepEqual(f, { a: 1 });
});
