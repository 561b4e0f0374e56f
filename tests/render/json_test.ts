import assert from "node:assert/strict";
import { renderJson } from "../../src/render/json.ts";
import { JSON_READY, toPlain } from "../../src/render/convert.ts";
import { Binary, Decimal128, ObjectId, objectIdHex, parseObjectId } from "../../src/doc/bson.ts";
import { Int32, Long } from "mongodb";

const fmt = (d: Date) => d.toUTCString();
const OID = "507f1f77bcf86cd799439011";

Deno.test("renderJson: BSON values and dates", () => {
  const body = {
    _id: new ObjectId(OID),
    when: new Date(Date.UTC(2013, 3, 2, 10, 29, 13)),
    price: Decimal128.fromString("10.50"),
    blob: new Binary(new Uint8Array([1, 2, 3])),
    raw: new Uint8Array([255]),
    n: new Long(7),
    i: new Int32(3),
    nested: [{ ref: new ObjectId(OID), at: [new Date(0)] }],
  };
  assert.deepEqual(JSON.parse(renderJson(body, { pretty: false, formatDate: fmt })), {
    _id: OID,
    when: "Tue, 02 Apr 2013 10:29:13 GMT",
    price: "10.50",
    blob: "AQID",
    raw: "/w==",
    n: 7,
    i: 3,
    nested: [{ ref: OID, at: ["Thu, 01 Jan 1970 00:00:00 GMT"] }],
  });
});

Deno.test("renderJson: the formatter is used, never Date.toJSON", () => {
  const out = renderJson({ d: new Date(0) }, { pretty: false, formatDate: () => "X" });
  assert.equal(out, '{"d":"X"}');
});

Deno.test("renderJson: pretty indents by 4", () => {
  assert.equal(renderJson({ a: 1 }, { pretty: true, formatDate: fmt }), '{\n    "a": 1\n}');
  assert.equal(renderJson({ a: [1] }, { pretty: false, formatDate: fmt }), '{"a":[1]}');
});

Deno.test("renderJson: JSON-unsafe values", () => {
  const out = renderJson(
    {
      u: undefined,
      f: () => 1,
      nan: NaN,
      inf: Infinity,
      big: 5n,
      arr: [undefined],
      bad: new Date(NaN),
    },
    { pretty: false, formatDate: fmt },
  );
  assert.equal(out, '{"nan":null,"inf":null,"big":5,"arr":[null],"bad":null}');
  assert.equal(renderJson(undefined, { pretty: false, formatDate: fmt }), "null");
  assert.equal(renderJson("x", { pretty: false, formatDate: fmt }), '"x"');
});

Deno.test("toPlain: an undefined member costs no copy; every rendering drops it", () => {
  // An item of an endpoint without IF_MATCH, its `_etag` unset, the rest plain already.
  const item = { name: "a", tags: ["x"], _etag: undefined, address: { city: "Rome" } };
  assert.equal(toPlain(item, fmt), item);
  const page = { _items: [item], _meta: { total: 1, extra: undefined } };
  assert.equal(toPlain(page, fmt), page);
  const compact = '{"_items":[{"name":"a","tags":["x"],"address":{"city":"Rome"}}],' +
    '"_meta":{"total":1}}';
  assert.equal(renderJson(page, { pretty: false, formatDate: fmt }), compact);
  assert.equal(
    renderJson(page, { pretty: true, formatDate: fmt }),
    JSON.stringify(JSON.parse(compact), null, 4),
  );
  assert.equal(
    renderJson(page, { pretty: false, formatDate: fmt, sortKeys: true }),
    '{"_items": [{"address": {"city": "Rome"}, "name": "a", "tags": ["x"]}], ' +
      '"_meta": {"total": 1}}',
  );
  // A member that needs converting after an undefined one: the copy keeps neither.
  const later = { a: undefined, d: new Date(0) };
  assert.equal(
    renderJson(later, { pretty: false, formatDate: fmt }),
    '{"d":"Thu, 01 Jan 1970 00:00:00 GMT"}',
  );
});

Deno.test("renderJson: does not mutate its input", () => {
  const body = { _id: new ObjectId(OID), d: new Date(0) };
  renderJson(body, { pretty: false, formatDate: fmt });
  assert.ok(body._id instanceof ObjectId);
  assert.ok(body.d instanceof Date);
});

Deno.test("renderJson: a cyclic body fails instead of hanging", () => {
  const a: Record<string, unknown> = {};
  a.self = a;
  assert.throws(() => renderJson(a, { pretty: false, formatDate: fmt }), /too deeply/);
});

Deno.test("renderJson: strings with quotes and unicode round-trip", () => {
  const s = 'a"b\\c\n</script>\u2028é';
  const out = renderJson({ s }, { pretty: false, formatDate: fmt });
  assert.equal(JSON.parse(out).s, s);
});

Deno.test("renderJson: a stored `__proto__` key is rendered as data, never as a prototype", () => {
  const body = JSON.parse('{"a": 1, "__proto__": {"polluted": true}, "n": {"__proto__": [1]}}');
  const text = renderJson(body, { pretty: false, formatDate: fmt });
  assert.deepEqual(JSON.parse(text), body);
  assert.match(text, /"__proto__":\{"polluted":true\}/);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("renderJson: an enumerable member added to Object.prototype never reaches a body", () => {
  const body = {
    a: 1,
    nested: { b: [{ c: 2 }] },
    none: Object.assign(Object.create(null), { d: 3 }),
  };
  Object.defineProperty(Object.prototype, "polluted", {
    value: "leak",
    enumerable: true,
    configurable: true,
    writable: true,
  });
  try {
    const text = renderJson(body, { pretty: false, formatDate: fmt });
    assert.deepEqual(text, '{"a":1,"nested":{"b":[{"c":2}]},"none":{"d":3}}');
  } finally {
    delete (Object.prototype as Record<string, unknown>).polluted;
  }
  // And the fast walk is back once the prototype is clean.
  assert.equal(
    renderJson(body, { pretty: false, formatDate: fmt }),
    '{"a":1,"nested":{"b":[{"c":2}]},"none":{"d":3}}',
  );
});

Deno.test("objectIdHex and parseObjectId agree with the driver", () => {
  for (let i = 0; i < 200; i++) {
    const id = new ObjectId();
    assert.equal(objectIdHex(id), id.toHexString());
    assert.ok(parseObjectId(id.toHexString())!.equals(id));
    assert.ok(parseObjectId(id.toHexString().toUpperCase())!.equals(id));
  }
  for (
    const bad of [
      "",
      "zz".repeat(12),
      "507f1f77bcf86cd79943901",
      "507f1f77bcf86cd7994390111",
      "507f1f77bcf86cd79943901\u00e9",
    ]
  ) {
    assert.equal(parseObjectId(bad), null, bad);
  }
});

Deno.test("json: an object marked JSON_READY is rendered as it is, unmarked ones converted", () => {
  const ready: Record<string | symbol, unknown> = { self: { href: "a/1", title: "a" } };
  ready[JSON_READY] = true;
  const body = { _links: ready, other: { when: new Date(0) } };
  assert.equal(
    renderJson(body, { pretty: false, formatDate: () => "formatted" }),
    '{"_links":{"self":{"href":"a/1","title":"a"}},"other":{"when":"formatted"}}',
  );
});
