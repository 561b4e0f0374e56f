import assert from "node:assert/strict";
import { firstSorted } from "../../src/store/embedded/first_sorted.ts";
import { sortDocs } from "../../src/doc/match/compare.ts";
import type { Doc, Sort } from "../../src/store/store.ts";

/** A small deterministic generator (the same cases every run). */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

Deno.test("first sorted: the first documents of a sort are those a full sort puts first, ties in natural order", () => {
  const next = random(7);
  const values = [
    1,
    2,
    2.5,
    -0,
    NaN,
    -Infinity,
    "a",
    "b",
    // Code point order, not UTF-16 order: the emoji's surrogates sort after U+FFFD.
    "\u{1F600}",
    "\uFFFD",
    "ab",
    null,
    true,
    [3, 1],
    [],
    ["b", "\u{1F600}"],
    { x: 1 },
    new Date(5),
    undefined,
  ];
  const pick = () => values[Math.floor(next() * values.length)];
  const sorts: Sort[] = [
    { a: 1 },
    { a: -1 },
    { a: 1, b: -1 },
    { "c.d": 1 },
    { b: -1, a: 1 },
    // Two fields under one list: one member's values (compare.ts, memberKeys).
    { "c.d": 1, "c.e": -1 },
    { "c.e": -1, a: 1, "c.d": 1 },
  ];
  for (let round = 0; round < 60; round++) {
    const docs: Doc[] = Array.from({ length: Math.floor(next() * 80) }, (_, n) => {
      const doc: Doc = { n };
      const a = pick(), b = pick(), d = pick();
      if (a !== undefined) doc.a = a;
      if (b !== undefined) doc.b = b;
      let e = pick();
      // c.d and c.e both lists of one plain c: two lists again.
      if (Array.isArray(d) && Array.isArray(e)) e = 0;
      if (d !== undefined) doc.c = next() < 0.5 ? { d, e } : [{ d, e }, { d: pick() ?? 0 }];
      // Two lists in one document cannot be sorted on together (tested below).
      const cLists = [doc.c, d, e].some(Array.isArray);
      if (Array.isArray(doc.a) && (Array.isArray(doc.b) || cLists)) doc.a = 0;
      return doc;
    });
    const sort = sorts[round % sorts.length];
    const all = sortDocs(docs, sort).map((d) => d.n);
    for (const count of [0, 1, 5, 25, 100]) {
      assert.deepEqual(
        firstSorted(docs, sort, count).map((d) => d.n),
        all.slice(0, count),
        `round ${round}, ${JSON.stringify(sort)}, first ${count}`,
      );
    }
  }
});

Deno.test("first sorted: two lists in one document cannot be sorted on together, as in a full sort", () => {
  const docs: Doc[] = [{ n: 1, a: [1, 2], b: [3, 4] }, { n: 2, a: 0, b: 0 }];
  assert.throws(() => sortDocs(docs, { a: 1, b: 1 }), /parallel arrays/);
  assert.throws(() => firstSorted(docs, { a: 1, b: 1 }, 1), /parallel arrays/);
  // One list and plain values sort as ever.
  assert.deepEqual(
    sortDocs([{ n: 1, a: [5, 1], b: 2 }, { n: 2, a: 3, b: 1 }], { a: 1, b: 1 })
      .map((d) => d.n),
    [1, 2],
  );
});
