/** The embedded store's fast document decoding answers exactly as EJSON.parse (relaxed). */
import assert from "node:assert/strict";
import { decodeDoc, decodeJoined, encodeDoc, indexKey } from "../../src/store/embedded/codec.ts";
import { Binary, Decimal128, EJSON, ObjectId } from "../../src/doc/bson.ts";
import { BSON } from "mongodb";

Deno.test("decodeDoc equals EJSON.parse on every BSON type the store keeps", () => {
  const docs = [
    {
      _id: new ObjectId(),
      n: 37,
      neg: -2147483648,
      big: 2 ** 40,
      f: 1.5,
      nan: NaN,
      inf: -Infinity,
      s: "text $oid",
      b: true,
      nil: null,
      d: new Date(Date.UTC(2020, 1, 2, 3, 4, 5, 6)),
      old: new Date(-86400000 * 365 * 3000),
      dec: Decimal128.fromString("12.50"),
      long: BSON.Long.fromString("9007199254740993"),
      int32: new BSON.Int32(5),
      bin: new Binary(new Uint8Array([1, 2, 3])),
      re: new BSON.BSONRegExp("^a", "i"),
      ts: new BSON.Timestamp({ t: 1, i: 2 }),
      nested: { a: [1, { b: new ObjectId(), c: [new Date(0)] }], e: {} },
      list: [[], [null], ["x", 2.25]],
    },
    { _id: "plain", tricky: { $oid: "short" } },
    { _id: "iso", more: { $date: "2020-01-01T00:00:00Z" }, x: { $numberInt: "12345678901" } },
    JSON.parse('{"_id": 1, "__proto__": {"polluted": true}, "x": {"__proto__": {"y": 1}}}'),
  ];
  for (const doc of docs) {
    const text = encodeDoc(doc);
    let expected: unknown;
    try {
      expected = EJSON.parse(text, { relaxed: true });
    } catch {
      assert.throws(() => decodeDoc(text));
      continue;
    }
    const actual = decodeDoc(text);
    assert.equal(
      EJSON.stringify(actual, { relaxed: false }),
      EJSON.stringify(expected, { relaxed: false }),
    );
    assert.deepEqual(actual, expected);
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  const proto = decodeDoc('{"__proto__": {"polluted": true}}');
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.ok(Object.hasOwn(proto, "__proto__"));
});

Deno.test("indexKey keeps every kind of value apart; decodeJoined shares equal dates", () => {
  const id = new ObjectId();
  const values = [
    "plain",
    "",
    "\u0001",
    "\u0001s",
    "\u0001no" + id.toHexString(),
    "o" + id.toHexString(),
    id,
    1,
    -1,
    true,
    false,
    null,
    new Date(0),
  ];
  const keys = values.map(indexKey);
  assert.equal(new Set(keys).size, values.length);
  assert.equal(indexKey("plain"), "plain");
  const texts = [
    encodeDoc({ _id: id, a: new Date(5), b: new Date(5), c: new Date(6) }),
    encodeDoc({ _id: "7", a: new Date(6) }),
  ].join("\u0001");
  const got = decodeJoined(texts);
  assert.ok((got[0]._id as ObjectId).equals(id));
  assert.equal(got[1]._id, "7");
  assert.equal(got[0].a, got[0].b);
  assert.equal(got[0].c, got[1].a);
  assert.equal((got[1].a as Date).getTime(), 6);
  // Outside loading, dates are never shared.
  const doc = decodeDoc(encodeDoc({ a: new Date(5), b: new Date(5) }));
  assert.notEqual(doc.a, doc.b);
});
