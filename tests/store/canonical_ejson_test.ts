/**
 * `canonicalEjson` writes what `EJSON.stringify(value, { relaxed: false })` writes: ETags
 * and stored texts depend on it, byte for byte.
 */
import assert from "node:assert/strict";
import { Long } from "mongodb";
import {
  Binary,
  canonicalEjson,
  canonicalEjsonWithout,
  compactEjson,
  compactEjsonWithout,
  Decimal128,
  EJSON,
  ObjectId,
} from "../../src/doc/bson.ts";
import { decodeDoc } from "../../src/store/embedded/codec.ts";

const library = (v: unknown) => EJSON.stringify(v, { relaxed: false });

/** A small deterministic generator (xorshift), so a failure can be replayed. */
function generator(seed: number, options: { huge?: boolean } = {}) {
  let x = Math.imul(seed, 2654435761) | 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x100000000;
  };
  for (let i = 0; i < 8; i++) next(); // small seeds start with small draws
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
  const NUMBERS = [
    0,
    -0,
    1,
    -1,
    37,
    2147483647,
    2147483648,
    -2147483648,
    -2147483649,
    1.5,
    -2.25,
    1e21,
    2 ** 53,
    -(2 ** 63),
    2 ** 63,
    2 ** 64,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    NaN,
    Infinity,
    -Infinity,
    0.1 + 0.2,
  ].filter((n) => options.huge !== false || Math.abs(n) < 2 ** 63 || !Number.isFinite(n));
  const STRINGS = ["", "a", 'q"uote', "back\\slash", "line\nbreak", "\u0000", "é", "😀", "\ud800"];
  const KEYS = ["a", "b", "__proto__", "$x", "a.b", "é", "", "_bsontype_not", "0"];
  const value = (depth: number): unknown => {
    const kind = Math.floor(next() * (depth > 3 ? 7 : 10));
    switch (kind) {
      case 0:
        return pick(NUMBERS);
      case 1:
        return pick(STRINGS);
      case 2:
        return pick([true, false, null, undefined]);
      case 3:
        return new Date(pick([0, 1795437737000, -1, 253402318800000, NaN]));
      case 4:
        return new ObjectId();
      case 5:
        return pick([
          Decimal128.fromString("12.50"),
          new Binary(new Uint8Array([1, 2, 3])),
          Long.fromNumber(7),
          /ab+c/i,
          () => 1,
        ]);
      case 6:
        return Math.floor(next() * 1000) - 500;
      case 7:
      case 8: {
        const out: Record<string, unknown> = {};
        const n = Math.floor(next() * 4);
        for (let i = 0; i < n; i++) {
          Object.defineProperty(out, pick(KEYS), {
            value: value(depth + 1),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return out;
      }
      default:
        return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    }
  };
  return value;
}

Deno.test("canonicalEjson: the library's text for 5,000 generated documents", () => {
  for (let seed = 1; seed <= 5000; seed++) {
    const doc = { _id: new ObjectId(), v: generator(seed)(0), n: seed };
    assert.equal(canonicalEjson(doc), library(doc), `seed ${seed}`);
  }
});

/** A generated document with `_etag` and (mostly) `_links`, and a copy without them. */
function withAndWithout(seed: number) {
  const value = generator(seed)(0);
  const doc: Record<string, unknown> = { _etag: "x", _id: new ObjectId(), v: value, _links: {} };
  if (seed % 3 === 0) delete doc._links;
  if (seed % 5 === 0) doc.after = value;
  const { _etag: _e, _links: _l, ...rest } = doc;
  return { doc, rest };
}

Deno.test("canonicalEjsonWithout: the text of the document without the two members", () => {
  for (let seed = 1; seed <= 500; seed++) {
    const { doc, rest } = withAndWithout(seed);
    assert.equal(canonicalEjsonWithout(doc, "_etag", "_links"), library(rest), `seed ${seed}`);
  }
  const nullProto = Object.assign(Object.create(null), { a: 1, _etag: "x" });
  assert.equal(canonicalEjsonWithout(nullProto, "_etag", "_links"), library({ a: 1 }));
  assert.equal(canonicalEjsonWithout({ _etag: "x" }, "_etag", "_links"), "{}");
});

Deno.test("compactEjsonWithout: the compact text of the document without the two members", () => {
  for (let seed = 1; seed <= 500; seed++) {
    const { doc, rest } = withAndWithout(seed);
    assert.equal(compactEjsonWithout(doc, "_etag", "_links"), compactEjson(rest), `seed ${seed}`);
  }
  const nullProto = Object.assign(Object.create(null), { a: 1, _etag: "x", d: new Date(5) });
  assert.equal(compactEjsonWithout(nullProto, "_etag", "_links"), '{"a":1,"d":{"$date":5}}');
  assert.equal(compactEjsonWithout({ _etag: "x" }, "_etag", "_links"), "{}");
});

Deno.test("canonicalEjson: edge values one by one", () => {
  const sparse = [1, , 3]; // a hole: JSON writes null
  const nullProto = Object.assign(Object.create(null), { a: 1 });
  const cases: unknown[] = [
    sparse,
    nullProto,
    { _bsontype: undefined, a: 1 },
    { a: undefined, b: () => 1, c: Symbol("s") },
    [undefined, () => 1],
    new Map([["k", 1]]),
    { deep: JSON.parse("[".repeat(100) + "1" + "]".repeat(100)) },
    "text",
    42,
    null,
  ];
  for (const value of cases) assert.equal(canonicalEjson(value), library(value));
});

Deno.test("canonicalEjson: a cycle is refused as the library refuses it", () => {
  const doc: Record<string, unknown> = { a: { b: {} } };
  (doc.a as Record<string, Record<string, unknown>>).b.back = doc;
  assert.throws(() => library(doc));
  assert.throws(() => canonicalEjson(doc));
});

Deno.test("compactEjson: reads back as the canonical text does, for 5,000 generated documents", () => {
  for (let seed = 1; seed <= 5000; seed++) {
    // (2^63 and 2^64 aside: canonical text reads them back wrapped, see below.)
    const v = generator(seed, { huge: false })(0);
    const doc = { _id: new ObjectId(), v, n: seed, at: new Date(seed * 1000) };
    let canonical: unknown;
    try {
      canonical = decodeDoc(canonicalEjson(doc));
    } catch {
      // The library cannot read back what it wrote for an invalid date: neither can we.
      assert.throws(() => decodeDoc(compactEjson(doc)), `seed ${seed}`);
      continue;
    }
    assert.deepStrictEqual(decodeDoc(compactEjson(doc)), canonical, `seed ${seed}`);
  }
  // Canonical text calls 2^63 a 64-bit integer, which reads back as -2^63; compact keeps it.
  assert.equal(decodeDoc(canonicalEjson({ n: 2 ** 63 })).n, -(2 ** 63));
  assert.equal(decodeDoc(compactEjson({ n: 2 ** 63 })).n, 2 ** 63);
  // Shorter where it matters: numbers and dates.
  const sample = { n: 37, x: 1.5, at: new Date(1795437737000) };
  assert.equal(compactEjson(sample), '{"n":37,"x":1.5,"at":{"$date":1795437737000}}');
});
