/**
 * `plainFields` turns the named top-level ids and dates of a document into their rendered
 * form in place, touches nothing else, and renders exactly as the untouched document does.
 */
import assert from "node:assert/strict";
import { plainFields, toPlain } from "../../src/render/convert.ts";
import { ObjectId } from "../../src/doc/bson.ts";

const formatDate = (d: Date) => d.toUTCString();

Deno.test("plainFields: named ids and dates in place, the same rendering", () => {
  const id = new ObjectId("6b092cafa9f41e9b0776ee05");
  const nested = { at: new Date(0), ref: new ObjectId("6b092cafa9f41e9b0776ee06") };
  const lookalike = { _bsontype: "ObjectId", id: "client data" };
  const make = () => ({
    _id: id,
    _created: new Date(86_400_000),
    bad: new Date(NaN),
    other: new Date(0),
    nested,
    list: [id],
    lookalike,
    n: 1,
    s: "x",
  });
  const doc: Record<string, unknown> = make();
  const named = ["_id", "_created", "bad", "nested", "list", "lookalike", "n", "s", "missing"];
  plainFields(doc, named, formatDate);
  assert.equal(doc._id, "6b092cafa9f41e9b0776ee05");
  assert.equal(doc._created, "Fri, 02 Jan 1970 00:00:00 GMT");
  assert.equal(doc.bad, null);
  assert.ok(!("missing" in doc));
  // A field not named stays; below the top level nothing changes; a plain object naming a
  // BSON type is data.
  assert.ok(doc.other instanceof Date);
  assert.equal(doc.nested, nested);
  assert.ok(nested.at instanceof Date && nested.ref instanceof ObjectId);
  assert.equal((doc.list as unknown[])[0], id);
  assert.equal(doc.lookalike, lookalike);
  assert.deepEqual(
    JSON.stringify(toPlain(doc, formatDate)),
    JSON.stringify(toPlain(make(), formatDate)),
  );
});
