/**
 * The cache of item texts stays within its bounds (entries and characters) however many
 * documents pass through it, keeps a few shapes per document, and does not keep documents alive.
 */
import assert from "node:assert/strict";
import {
  ItemTextCache,
  MAX_CHARS,
  MAX_ENTRIES,
  MAX_SHAPES_PER_DOC,
} from "../../src/services/item_text.ts";

Deno.test("item text cache: bounded by entries, oldest first", () => {
  const cache = new ItemTextCache(100, 1_000_000, 1000);
  const docs = Array.from({ length: 1000 }, (_, n) => ({ n }));
  for (const doc of docs) cache.set(doc, "s", `{"n":${doc.n}}`);
  assert.equal(cache.size, 100);
  assert.equal(cache.get(docs[899], "s"), undefined);
  assert.equal(cache.get(docs[900], "s"), '{"n":900}');
  assert.equal(cache.get(docs[999], "s"), '{"n":999}');
  assert.equal(cache.chars, docs.slice(900).reduce((sum, d) => sum + `{"n":${d.n}}`.length, 0));
});

Deno.test("item text cache: bounded by characters; a too long text is not kept", () => {
  const cache = new ItemTextCache(1_000_000, 10_000, 500);
  for (let n = 0; n < 10_000; n++) cache.set({ n }, "s", "x".repeat(400));
  assert.ok(cache.chars <= 10_000, String(cache.chars));
  assert.equal(cache.size, 25);
  const big = { big: true };
  cache.set(big, "s", "y".repeat(501));
  assert.equal(cache.get(big, "s"), undefined);
});

Deno.test("item text cache: a few shapes per document; another shape is a miss", () => {
  const cache = new ItemTextCache();
  const doc = { a: 1 };
  cache.set(doc, "page\u0000people\u0000people\u0000", "one");
  assert.equal(cache.get(doc, "page\u0000people\u0000people\u0000"), "one");
  assert.equal(cache.get(doc, 'page\u0000people\u0000people\u0000{"a":1}'), undefined);
  assert.equal(cache.get({ a: 1 }, "page\u0000people\u0000people\u0000"), undefined);
  cache.set(doc, "other", "two");
  assert.equal(cache.get(doc, "page\u0000people\u0000people\u0000"), "one");
  assert.equal(cache.get(doc, "other"), "two");
  // A new text of a shape replaces the old one.
  cache.set(doc, "other", "three");
  assert.equal(cache.get(doc, "other"), "three");
  assert.equal(cache.get(doc, "page\u0000people\u0000people\u0000"), "one");
  // Past MAX_SHAPES_PER_DOC shapes, the one cached first goes.
  for (let n = 0; n < MAX_SHAPES_PER_DOC - 1; n++) cache.set(doc, `s${n}`, `t${n}`);
  assert.equal(cache.get(doc, "page\u0000people\u0000people\u0000"), undefined);
  assert.equal(cache.get(doc, "other"), "three");
  for (let n = 0; n < MAX_SHAPES_PER_DOC - 1; n++) assert.equal(cache.get(doc, `s${n}`), `t${n}`);
});

Deno.test("item text cache: eviction takes out the evicted text only", () => {
  const cache = new ItemTextCache(3, 1_000_000, 1000);
  const doc = { a: 1 };
  cache.set(doc, "x", "x1");
  cache.set(doc, "y", "y1");
  cache.set(doc, "x", "x2");
  // Evicts "x1" (already replaced: "x2" stays), then "y1".
  cache.set({ b: 2 }, "z", "z1");
  assert.equal(cache.get(doc, "x"), "x2");
  assert.equal(cache.get(doc, "y"), "y1");
  cache.set({ c: 3 }, "z", "z2");
  assert.equal(cache.get(doc, "y"), undefined);
  assert.equal(cache.get(doc, "x"), "x2");
  assert.equal(cache.size, 3);
});

Deno.test("item text cache: a million documents pass through within the default bounds", () => {
  const cache = new ItemTextCache();
  const text = "z".repeat(600);
  for (let n = 0; n < 1_000_000; n++) cache.set({ n }, "s", text);
  assert.ok(cache.size <= MAX_ENTRIES);
  assert.ok(cache.chars <= MAX_CHARS);
});
