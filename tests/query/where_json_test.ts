import assert from "node:assert/strict";
import { parseWhere } from "../../src/query/where.ts";
import { QueryError } from "../../src/query/errors.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import { DATE, OID, opts } from "./helpers.ts";

function refused(raw: string, pattern: RegExp, o = opts()): QueryError {
  let caught: unknown;
  try {
    parseWhere(raw, o);
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof QueryError, `expected QueryError for ${raw}, got ${caught}`);
  assert.equal(caught.status, 400);
  assert.match(caught.message, pattern);
  return caught;
}

Deno.test("where JSON: plain object passes through", () => {
  assert.deepEqual(parseWhere('{"name": "john", "age": {"$gt": 3}}', opts()), {
    name: "john",
    age: { $gt: 3 },
  });
});

Deno.test("where JSON: empty parameter is the empty filter", () => {
  assert.deepEqual(parseWhere("", opts()), {});
  assert.deepEqual(parseWhere("   ", opts()), {});
});

Deno.test("where JSON: single quotes answer 400 naming them and the position", () => {
  const e = refused("{'name': 'john'}", /single quotes are not allowed at position 1/);
  assert.equal(e.param, "where");
  assert.equal(e.position, 1);
  refused("{\"name\": 'john'}", /single quotes are not allowed at position 9/);
});

Deno.test("where JSON: malformed JSON gives the position", () => {
  refused('{"name": "john",}', /where.*position 16/);
  refused('{"name" "john"}', /expected ':' at position 8/);
  refused('{"name": "jo', /unterminated string at position 9/);
  refused('{"a": 1} x', /trailing characters at position 9/);
  refused('{"a": tru}', /position 6/);
});

Deno.test("where JSON: must be an object", () => {
  refused("[1, 2]", /JSON object/);
});

Deno.test("where JSON: datetime fields become Dates, also inside operators", () => {
  const f = parseWhere(
    `{"born": {"$gt": "${DATE}", "$in": ["${DATE}"]}, "_updated": "${DATE}"}`,
    opts(),
  );
  const born = f.born as Record<string, unknown>;
  assert.ok(born.$gt instanceof Date);
  assert.equal((born.$gt as Date).toISOString(), "2013-04-02T10:29:13.000Z");
  assert.ok((born.$in as unknown[])[0] instanceof Date);
  assert.ok(f._updated instanceof Date);
});

Deno.test("where JSON: list-of-datetime members are converted", () => {
  const f = parseWhere(`{"visits": "${DATE}"}`, opts());
  assert.ok(f.visits instanceof Date);
});

Deno.test("where JSON: strings not matching DATE_FORMAT stay strings without validation", () => {
  const f = parseWhere('{"born": "yesterday", "name": "' + DATE + '"}', opts());
  assert.equal(f.born, "yesterday");
  assert.equal(f.name, DATE, "a string field is never converted");
});

Deno.test("where JSON: objectid fields and _id become ObjectIds", () => {
  const f = parseWhere(`{"_id": "${OID}", "owner": {"$in": ["${OID}"]}}`, opts());
  assert.ok(f._id instanceof ObjectId);
  assert.equal((f._id as ObjectId).toHexString(), OID);
  assert.ok((f.owner as Record<string, unknown[]>).$in[0] instanceof ObjectId);
});

Deno.test("where JSON: _id declared as string stays a string; custom idField", () => {
  const o = opts({ schema: { _id: { type: "string" } } });
  assert.equal(parseWhere(`{"_id": "${OID}"}`, o)._id, OID);
  const c = parseWhere(`{"uid": "${OID}"}`, opts({ idField: "uid" }));
  assert.ok(c.uid instanceof ObjectId);
});

Deno.test("where JSON: non-hex ids stay strings", () => {
  assert.equal(parseWhere('{"_id": "not-an-id"}', opts())._id, "not-an-id");
});

Deno.test("where JSON: blacklisted operators refused at any depth", () => {
  refused('{"$where": "this.a == 1"}', /operator \$where is not allowed/);
  refused('{"name": {"$regex": "^j"}}', /operator \$regex is not allowed/);
  refused('{"$and": [{"$or": [{"name": {"$regex": "x"}}]}]}', /\$regex is not allowed/);
  refused('{"rows": {"$elemMatch": {"sku": {"$regex": "x"}}}}', /\$regex is not allowed/);
  refused('{"$expr": {"$function": {"body": "x", "args": [], "lang": "js"}}}', /\$function/);
  refused('{"address": {"city": {"$where": "1"}}}', /\$where is not allowed/);
});

Deno.test("where JSON: operators allowed when not blacklisted", () => {
  const f = parseWhere('{"name": {"$regex": "^j", "$options": "i"}}', opts({ blacklist: [] }));
  assert.deepEqual(f, { name: { $regex: "^j", $options: "i" } });
});

Deno.test("where JSON: unknown operators refused", () => {
  refused('{"a": {"$foo": 1}}', /unknown operator \$foo/);
  refused('{"$foo": 1}', /unknown operator \$foo/);
  refused('{"$and": [{"a": {"$eq": 1, "$bar": 2}}]}', /unknown operator \$bar/);
});

Deno.test("where JSON: aggregation operators inside $expr are accepted", () => {
  const f = parseWhere('{"$expr": {"$gt": [{"$add": ["$a", 1]}, "$b"]}}', opts());
  assert.deepEqual(f, { $expr: { $gt: [{ $add: ["$a", 1] }, "$b"] } });
});

Deno.test("where JSON: field-level operators misplaced are refused", () => {
  refused('{"$gt": 3}', /not valid at query level/);
  refused('{"$near": [1, 2]}', /operator \$near is not valid at query level/);
  refused('{"$or": [{"$geoWithin": {}}]}', /operator \$geoWithin is not valid at query level/);
  refused('{"age": {"$gt": 3, "x": 1}}', /mixes operators and field names/);
  refused('{"$and": {"a": 1}}', /\$and needs a non-empty list/);
  refused('{"$or": []}', /\$or needs a non-empty list/);
  refused('{"age": {"$in": 3}}', /\$in on 'age' needs a list/);
  refused('{"age": {"$not": 3}}', /\$not on 'age' needs an operator document/);
});

Deno.test("where JSON: whole-query operators and argument keywords are refused inside a field", () => {
  const o = opts({ blacklist: [] });
  for (const op of ["$text", "$where", "$expr", "$comment", "$search", "$geometry", "$box"]) {
    refused(`{"age": {"${op}": 1}}`, new RegExp(`\\${op} is not valid inside 'age'`), o);
  }
  refused(
    '{"$or": [{"age": {"$gt": 1, "$search": "x"}}]}',
    /\$search is not valid inside 'age'/,
    o,
  );
  refused('{"loc": {"$maxDistance": 3}}', /\$maxDistance is not valid inside 'loc'/, o);
  // Beside $near they are its legacy distance bounds; $text and $where stay whole-query.
  const near = parseWhere('{"loc": {"$near": [1, 2], "$maxDistance": 3}}', o);
  assert.deepEqual(near, { loc: { $near: [1, 2], $maxDistance: 3 } });
  const text = parseWhere('{"$text": {"$search": "x", "$language": "en"}}', o);
  assert.deepEqual(text, { $text: { $search: "x", $language: "en" } });
});

Deno.test("where JSON: __proto__ keys are refused", () => {
  refused('{"__proto__": {"a": 1}}', /__proto__/);
  refused('{"a": {"__proto__": 1}}', /__proto__/);
});

Deno.test("where JSON: ALLOWED_FILTERS restricts fields, dotted paths and inside $or", () => {
  const o = opts({ allowedFilters: ["name", "address"] });
  assert.deepEqual(parseWhere('{"name": "x", "address.city": "R"}', o), {
    name: "x",
    "address.city": "R",
  });
  refused('{"age": 3}', /filter on 'age' not allowed/, o);
  refused('{"$or": [{"name": "x"}, {"age": 3}]}', /filter on 'age' not allowed/, o);
  refused('{"name.first": "x", "tags": "a"}', /'tags' not allowed/, o);
});

Deno.test("where JSON: ALLOWED_FILTERS empty refuses every field", () => {
  refused('{"name": "x"}', /not allowed/, opts({ allowedFilters: [] }));
});

Deno.test("where JSON: VALIDATE_FILTERING refuses unknown fields and bad values", () => {
  const o = opts({ validateFiltering: true });
  refused('{"nope": 1}', /filter on 'nope' is invalid/, o);
  refused('{"age": "3"}', /filter on 'age' is invalid: not a valid integer/, o);
  refused('{"age": 3.5}', /not a valid integer/, o);
  refused('{"age": {"$in": [1, "2"]}}', /not a valid integer/, o);
  refused('{"name": 3}', /not a valid string/, o);
  refused('{"active": "yes"}', /not a valid boolean/, o);
  refused('{"born": "yesterday"}', /not a valid datetime \(DATE_FORMAT/, o);
  refused('{"owner": "xyz"}', /not a valid objectid/, o);
  refused('{"address.zip": "x"}', /'address.zip'/, o);
  refused('{"address.nope": 1}', /'address.nope' is invalid/, o);
  refused('{"rows.qty": "x"}', /'rows.qty'/, o);
  refused('{"tags": 3}', /'tags' is invalid: not a valid string/, o);
  refused('{"$or": [{"age": 1}, {"zzz": 1}]}', /'zzz' is invalid/, o);
});

Deno.test("where JSON: VALIDATE_FILTERING accepts well-typed filters", () => {
  const o = opts({ validateFiltering: true });
  const f = parseWhere(
    `{"age": {"$gte": 1, "$lt": 9}, "score": 1.5, "active": true, "born": "${DATE}",
      "address.city": "R", "rows.qty": 3, "tags": "a", "rows.0.sku": "x",
      "extra.anything": 1, "name": null, "_id": "${OID}", "_deleted": false,
      "tags": {"$all": ["a", "b"]}, "age": {"$exists": true}}`,
    o,
  );
  assert.ok(f.born instanceof Date);
  assert.ok(f._id instanceof ObjectId);
});

Deno.test("where JSON: $elemMatch walks list member schemas", () => {
  const o = opts({ validateFiltering: true });
  const f = parseWhere('{"rows": {"$elemMatch": {"sku": "a", "qty": {"$gt": 2}}}}', o);
  assert.deepEqual(f, { rows: { $elemMatch: { sku: "a", qty: { $gt: 2 } } } });
  refused(
    '{"rows": {"$elemMatch": {"qty": "x"}}}',
    /'rows.qty' is invalid: not a valid integer/,
    o,
  );
  refused('{"rows": {"$elemMatch": {"nope": 1}}}', /'rows.nope' is invalid/, o);
  const v = parseWhere(`{"visits": {"$elemMatch": {"$gt": "${DATE}"}}}`, o);
  const em = (v.visits as Record<string, Record<string, unknown>>).$elemMatch;
  assert.ok(em.$gt instanceof Date);
});

Deno.test("where JSON: $not recurses and converts", () => {
  const f = parseWhere(`{"born": {"$not": {"$gt": "${DATE}"}}}`, opts());
  const not = (f.born as Record<string, Record<string, unknown>>).$not;
  assert.ok(not.$gt instanceof Date);
});

Deno.test("where JSON: hostile input: deep nesting, huge strings", () => {
  const deep = '{"a":'.repeat(100) + "1" + "}".repeat(100);
  refused(deep, /nesting deeper than 32 levels/);
  const deepOr = '{"$or": ['.repeat(40) + '{"a": 1}' + "]}".repeat(40);
  refused(deepOr, /nesting deeper/);
  const huge = `{"name": "${"x".repeat(20_000)}"}`;
  refused(huge, /too long/);
  assert.throws(() => parseWhere("{".repeat(200_000), opts()), QueryError);
  const custom = opts({ maxLength: 50, maxDepth: 2 });
  refused('{"a": {"b": {"c": 1}}}', /nesting deeper than 2/, custom);
});

Deno.test("where JSON: control characters and bad escapes in strings", () => {
  refused('{"a": "x\ny"}', /control character/);
  refused('{"a": "\\q"}', /invalid escape/);
  assert.deepEqual(parseWhere('{"a": "\\u0041\\n"}', opts()), { a: "A\n" });
});
