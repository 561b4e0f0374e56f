/** The one table of field types: coercion and checks shared by validation and queries. */
import assert from "node:assert/strict";
import { type CoerceContext, coerceTo, TypeTable } from "../../src/domain/field-types.ts";
import { parseDate } from "../../src/validation/dates.ts";
import { Decimal128, ObjectId } from "../../src/doc/bson.ts";

const FORMAT = "%a, %d %b %Y %H:%M:%S GMT";
const CTX: CoerceContext = { parseDate: (text, format) => parseDate(text, format ?? FORMAT) };
const table = new TypeTable({ custom: { even: { check: (v) => v === 2 } } });
const types = (...names: string[]) => names.map((n) => table.get(n)!);

Deno.test("field types: date and datetime read DATE_FORMAT; date also reads a calendar day", () => {
  const when = "Tue, 02 Apr 2013 10:29:13 GMT";
  for (const name of ["date", "datetime"]) {
    const d = coerceTo(when, types(name), CTX);
    assert.ok(d instanceof Date && d.toISOString() === "2013-04-02T10:29:13.000Z", name);
  }
  assert.ok(coerceTo("2013-04-02", types("date"), CTX) instanceof Date);
  assert.equal(coerceTo("2013-04-02", types("datetime"), CTX), "2013-04-02");
});

Deno.test("field types: objectid unless kept as a string; decimal is decimal128", () => {
  const hex = "507f1f77bcf86cd799439011";
  assert.ok(coerceTo(hex, types("objectid"), CTX) instanceof ObjectId);
  assert.equal(coerceTo(hex, types("objectid"), { ...CTX, objectIdAsString: true }), hex);
  assert.ok(coerceTo("1.50", types("decimal"), CTX) instanceof Decimal128);
  assert.ok(coerceTo(1.5, types("decimal"), CTX) instanceof Decimal128);
  // A filter compares numbers with stored decimals as they are.
  assert.equal(coerceTo(1.5, types("decimal"), { ...CTX, compared: true }), 1.5);
  assert.ok(coerceTo("1.50", types("decimal"), { ...CTX, compared: true }) instanceof Decimal128);
  assert.equal(table.get("decimal")!.base, "decimal128");
});

Deno.test("field types: a value some type accepts as it is stays as it is", () => {
  const hex = "507f1f77bcf86cd799439011";
  assert.equal(coerceTo(hex, types("string", "objectid"), CTX), hex);
  assert.equal(coerceTo(null, types("datetime"), CTX), null);
  assert.equal(coerceTo("nope", types("datetime"), CTX), "nope");
});

Deno.test("field types: checks, stored forms, custom and unknown types", () => {
  assert.equal(table.get("integer")!.is(2 ** 53), false);
  assert.equal(table.get("integer")!.is(3), true);
  const media = table.get("media")!;
  assert.equal(media.stored(new ObjectId()), true);
  assert.equal(media.is(new ObjectId()), false);
  assert.equal(table.get("even")!.is(2), true);
  assert.equal(table.get("nope"), undefined);
  assert.equal(table.get("point")!.is({ type: "Point", coordinates: [1, 2] }), true);
  assert.match(table.geoProblem({ type: "Point" }, table.get("point")!) ?? "", /coordinates/);
});
