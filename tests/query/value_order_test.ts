/** MongoDB's order of values across BSON types, as the embedded store sorts and compares. */
import assert from "node:assert/strict";
import {
  Binary,
  BSONRegExp,
  BSONSymbol,
  Code,
  Decimal128,
  Long,
  MaxKey,
  MinKey,
  ObjectId,
  Timestamp,
} from "mongodb";
import { compareValues } from "../../src/doc/match/compare.ts";

Deno.test("value order: every BSON type in MongoDB's order", () => {
  const ascending = [
    new MinKey(),
    null,
    Long.fromNumber(-1),
    2,
    Decimal128.fromString("2.5"),
    "a",
    new BSONSymbol("b"),
    { a: 1 },
    [1],
    new Binary(new Uint8Array([1])),
    new ObjectId("000000000000000000000001"),
    false,
    true,
    new Date(0),
    new Timestamp({ t: 1, i: 0 }),
    new BSONRegExp("a"),
    new Code("a"),
    new Code("b"),
    new Code("a", { x: 1 }),
    new MaxKey(),
  ];
  const shuffled = [...ascending].reverse();
  assert.deepEqual(shuffled.sort(compareValues), ascending);
  for (let i = 1; i < ascending.length; i++) {
    assert.equal(compareValues(ascending[i - 1], ascending[i]), -1, `at ${i}`);
    assert.equal(compareValues(ascending[i], ascending[i - 1]), 1, `at ${i}`);
  }
});

Deno.test("value order: a symbol compares with strings by its text, code by its source", () => {
  assert.equal(compareValues(new BSONSymbol("a"), "a"), 0);
  assert.equal(compareValues(new BSONSymbol("b"), "a"), 1);
  assert.equal(compareValues(new Code("x"), new Code("x")), 0);
  assert.equal(compareValues(new Code("x", { a: 1 }), new Code("x", { a: 2 })), -1);
});
