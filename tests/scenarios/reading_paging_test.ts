/** Reading: sort, default_sort, pagination (_meta, _links), pagination off, fast pagination. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q, refused } from "../support/assertions.ts";
import type { Client } from "../support/client.ts";

const SCHEMA = { name: { type: "string" }, age: { type: "integer" }, city: { type: "string" } };

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  PAGINATION_LIMIT: 4,
  PAGINATION_DEFAULT: 3,
  DOMAIN: {
    people: { schema: SCHEMA },
    sorted: {
      schema: SCHEMA,
      datasource: { source: "people", default_sort: [["age", -1], ["name", 1]] },
    },
    unsortable: { schema: SCHEMA, sorting: false, datasource: { source: "people" } },
    all: { schema: SCHEMA, pagination: false, datasource: { source: "people" } },
  },
};

const PEOPLE = [
  { name: "ann", age: 30, city: "Rome" },
  { name: "bob", age: 17, city: "Oslo" },
  { name: "cid", age: 45, city: "Rome" },
  { name: "dee", age: 30, city: "Oslo" },
  { name: "eve", age: 22, city: "Rome" },
];

async function seed(api: Client, docs: object[] = PEOPLE) {
  const res = await api.post("people", docs);
  assert.equal(res.status, 201, res.text);
}

const namesOf = (res: { body: { _items: Array<{ name: string }> } }) =>
  res.body._items.map((p) => p.name);

async function listed(api: Client, path: string): Promise<string[]> {
  const res = await api.get(path);
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  return namesOf(res);
}

scenario("sort: comma form with - for descending", SETTINGS, async (api) => {
  await seed(api);
  assert.deepEqual(await listed(api, "people?sort=age,name&max_results=4"), [
    "bob",
    "eve",
    "ann",
    "dee",
  ]);
  assert.deepEqual(await listed(api, "people?sort=-age,name&max_results=4"), [
    "cid",
    "ann",
    "dee",
    "eve",
  ]);
  assert.deepEqual(await listed(api, "people?sort=-name&max_results=2"), ["eve", "dee"]);
  assert.deepEqual(await listed(api, `people?sort=${q("city,-age")}&max_results=4`), [
    "dee",
    "bob",
    "cid",
    "ann",
  ]);
});

scenario(
  "sort on a list field: smallest element ascending, largest descending, [] first",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: { scores: { schema: { name: { type: "string" }, s: { type: "list" } } } },
  },
  async (api) => {
    const res = await api.post("scores", [
      { name: "a", s: [5] },
      { name: "b", s: [1, 9] },
      { name: "c", s: [] },
      { name: "d" },
      { name: "e", s: [3, 7] },
    ]);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(await listed(api, "scores?sort=s,name"), ["c", "d", "b", "e", "a"]);
    assert.deepEqual(await listed(api, "scores?sort=-s,name"), ["b", "e", "a", "d", "c"]);
  },
  { gaps: ["array-sort"] },
);

scenario("sort: list of (field, direction) pairs", SETTINGS, async (api) => {
  await seed(api);
  assert.deepEqual(
    await listed(api, `people?sort=${q('[("age", -1), ("name", -1)]')}&max_results=4`),
    ["cid", "dee", "ann", "eve"],
  );
  assert.deepEqual(await listed(api, `people?sort=${q('[["age", 1]]')}&max_results=2`), [
    "bob",
    "eve",
  ]);
});

scenario("sort: default_sort applies unless the client sorts", SETTINGS, async (api) => {
  await seed(api);
  assert.deepEqual(await listed(api, "sorted?max_results=4"), ["cid", "ann", "dee", "eve"]);
  assert.deepEqual(await listed(api, "sorted?sort=name&max_results=4"), [
    "ann",
    "bob",
    "cid",
    "dee",
  ]);
});

scenario("sort: bad syntax answers 400", SETTINGS, async (api) => {
  await seed(api);
  await refused(api, `people?sort=${q('[("age", 2)]')}`, "direction must be 1 or -1");
  await refused(api, `people?sort=${q("[('age', 1)]")}`, "single quotes");
  await refused(api, `people?sort=${q('[("age", 1)')}`, "position");
  await refused(api, `people?sort=${q("age,,name")}`, "empty field name");
  await refused(api, `people?sort=${q("age,-age")}`, "duplicate");
  await refused(api, `people?sort=${q("$where")}`, "invalid field name");
  await refused(api, `people?sort=${q("-")}`, "empty field name");
});

scenario(
  "sort: sorting false on the resource ignores client sorts (as Eve)",
  SETTINGS,
  async (api) => {
    await seed(api);
    const plain = await api.get("unsortable");
    for (const sort of ["name", "-name", "-age"]) {
      const res = await api.get(`unsortable?sort=${sort}`);
      assert.equal(res.status, 200);
      assert.deepEqual(namesOf(res), namesOf(plain));
    }
  },
);

scenario(
  "sort: SORTING false ignores client sorts everywhere",
  { ...SETTINGS, SORTING: false },
  async (api) => {
    await seed(api);
    const plain = await api.get("people");
    const res = await api.get("people?sort=-name");
    assert.equal(res.status, 200);
    assert.deepEqual(namesOf(res), namesOf(plain));
  },
);

scenario("pagination: _meta and page slices", SETTINGS, async (api) => {
  await seed(api);
  const first = await api.get("people?sort=name");
  assert.deepEqual(first.body._meta, { page: 1, max_results: 3, total: 5 });
  assert.deepEqual(namesOf(first), ["ann", "bob", "cid"]);
  const second = await api.get("people?sort=name&page=2");
  assert.deepEqual(second.body._meta, { page: 2, max_results: 3, total: 5 });
  assert.deepEqual(namesOf(second), ["dee", "eve"]);
  const small = await api.get("people?sort=name&max_results=2&page=3");
  assert.deepEqual(small.body._meta, { page: 3, max_results: 2, total: 5 });
  assert.deepEqual(namesOf(small), ["eve"]);
  const beyond = await api.get("people?sort=name&page=9");
  assert.equal(beyond.status, 200);
  assert.deepEqual(beyond.body._items, []);
  assert.deepEqual(beyond.body._meta, { page: 9, max_results: 3, total: 5 });
});

scenario("pagination: max_results is capped by PAGINATION_LIMIT", SETTINGS, async (api) => {
  await seed(api);
  const res = await api.get("people?max_results=100");
  assert.equal(res.status, 200);
  assert.deepEqual(res.body._meta, { page: 1, max_results: 4, total: 5 });
  assert.equal(res.body._items.length, 4);
});

scenario("pagination: bad page and max_results answer 400", SETTINGS, async (api) => {
  await refused(api, "people?page=0", "page");
  await refused(api, "people?page=-1", "page");
  await refused(api, "people?page=abc", "page must be an integer");
  await refused(api, "people?page=1.5", "page must be an integer");
  await refused(api, "people?max_results=0", "max_results");
  await refused(api, "people?max_results=-3", "max_results");
  await refused(api, "people?max_results=ten", "max_results must be an integer");
});

scenario("pagination: too large a page is one 400 on both stores", SETTINGS, async (api) => {
  await seed(api);
  // PAGINATION_DEFAULT 3: the last page there can be skips at most 2^31 - 1 documents.
  const last = Math.floor((2 ** 31 - 1) / 3) + 1;
  const message = `page is too large: with max_results 3 the last page there can be is ${last}`;
  for (const page of [String(last + 1), "2147483648", "99999999999999999999", "9007199254740993"]) {
    const res = await api.get(`people?page=${page}`);
    assert.equal(res.status, 400, `page=${page}: ${res.text}`);
    assert.equal(res.body._error.message, message);
  }
  const furthest = await api.get(`people?page=${last}`);
  assert.equal(furthest.status, 200, furthest.text);
  assert.deepEqual(furthest.body._items, []);
  const smaller = await api.get(`people?page=${last}&max_results=4`);
  assert.equal(smaller.status, 400);
  assert.match(smaller.body._error.message, /with max_results 4 the last page there can be is/);
});

scenario("pagination: next/prev/last links only where they apply", SETTINGS, async (api) => {
  await seed(api);
  const one = await api.get("people?max_results=2");
  assert.deepEqual(one.body._links, {
    parent: { href: "/", title: "home" },
    // As in Eve, `self` keeps the query and `last` comes only with a next page.
    self: { href: "people?max_results=2", title: "people" },
    next: { href: "people?max_results=2&page=2", title: "next page" },
    last: { href: "people?max_results=2&page=3", title: "last page" },
  });
  const two = await api.get("people?max_results=2&page=2");
  assert.deepEqual(two.body._links.next, {
    href: "people?max_results=2&page=3",
    title: "next page",
  });
  assert.deepEqual(two.body._links.prev, {
    href: "people?max_results=2&page=1",
    title: "previous page",
  });
  assert.deepEqual(two.body._links.last, {
    href: "people?max_results=2&page=3",
    title: "last page",
  });
  const three = await api.get("people?max_results=2&page=3");
  assert.equal(three.body._links.next, undefined);
  assert.deepEqual(three.body._links.prev, {
    href: "people?max_results=2&page=2",
    title: "previous page",
  });
  assert.equal(three.body._links.last, undefined);
  assert.deepEqual(three.body._links.self, {
    href: "people?max_results=2&page=3",
    title: "people",
  });
  const whole = await api.get("people?max_results=4&page=1&sort=name");
  assert.ok(whole.body._links.next);
  const single = await api.get(`people?where=${q('{"city": "Oslo"}')}`);
  assert.deepEqual(Object.keys(single.body._links).sort(), ["parent", "self"]);
});

scenario("pagination: links keep the other query parameters", SETTINGS, async (api) => {
  await seed(api);
  const res = await api.get(`people?where=${q('{"city": "Rome"}')}&sort=-age&max_results=1`);
  assert.equal(res.body._meta.total, 3);
  const next = new URL(res.body._links.next.href, "http://x/");
  assert.equal(next.pathname, "/people");
  assert.equal(next.searchParams.get("where"), '{"city": "Rome"}');
  assert.equal(next.searchParams.get("sort"), "-age");
  assert.equal(next.searchParams.get("max_results"), "1");
  assert.equal(next.searchParams.get("page"), "2");
  const followed = await api.get(res.body._links.next.href);
  assert.deepEqual(namesOf(followed), ["ann"]);
});

scenario("pagination false: every item, no _meta, no paging links", SETTINGS, async (api) => {
  const many = Array.from(
    { length: 12 },
    (_, i) => ({ name: `p${String(i).padStart(2, "0")}`, age: i }),
  );
  await seed(api, many);
  const res = await api.get("all?sort=name&max_results=2&page=2");
  assert.equal(res.status, 200);
  assert.equal(res.body._items.length, 12);
  assert.equal(res.body._meta, undefined);
  assert.deepEqual(res.body._links, {
    parent: { href: "/", title: "home" },
    self: { href: "all?sort=name&max_results=2&page=2", title: "all" },
  });
});

scenario("OPTIMIZE_PAGINATION_FOR_SPEED: no total, next link from one extra document", {
  ...SETTINGS,
  OPTIMIZE_PAGINATION_FOR_SPEED: true,
}, async (api) => {
  await seed(api);
  const first = await api.get("people?sort=name&max_results=2");
  assert.deepEqual(first.body._meta, { page: 1, max_results: 2 });
  assert.deepEqual(namesOf(first), ["ann", "bob"]);
  assert.deepEqual(first.body._links.next, {
    href: "people?sort=name&max_results=2&page=2",
    title: "next page",
  });
  assert.equal(first.body._links.last, undefined);
  const last = await api.get("people?sort=name&max_results=2&page=3");
  assert.deepEqual(namesOf(last), ["eve"]);
  assert.equal(last.body._links.next, undefined);
  assert.ok(last.body._links.prev);
  const exact = await api.get("people?sort=name&max_results=4&page=1");
  assert.ok(exact.body._links.next);
  const four = await api.get(`people?where=${q('{"name": {"$ne": "eve"}}')}&max_results=4`);
  assert.equal(four.body._items.length, 4);
  assert.equal(four.body._links.next, undefined);
});

scenario(
  "pagination: pages of a where filter, read again after writes, add up to the whole listing",
  { ...SETTINGS, PAGINATION_LIMIT: 100, ITEM_METHODS: ["GET", "PATCH", "DELETE"] },
  async (api) => {
    const docs = Array.from({ length: 40 }, (_, n) => ({
      name: `p${n}`,
      age: 10 + (n * 7) % 50,
      city: n % 3 ? "Rome" : "Oslo",
    }));
    await seed(api, docs);
    const where = encodeURIComponent(
      JSON.stringify({ city: { $ne: "Oslo" }, name: { $ne: "p7" } }),
    );
    // The whole listing in one page, then the same filter a page of 4 at a time, each page's
    // total read as well, deep pages included.
    const check = async (label: string) => {
      const whole = await api.get(`people?where=${where}&max_results=100`);
      assert.equal(whole.status, 200, whole.text);
      const all = namesOf(whole);
      const paged: string[] = [];
      for (let page = 1; page <= Math.ceil(all.length / 4) + 1; page++) {
        const res = await api.get(`people?where=${where}&max_results=4&page=${page}`);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body._meta.total, all.length, `${label}: total of page ${page}`);
        paged.push(...namesOf(res));
      }
      assert.deepEqual(paged, all, label);
      return all;
    };
    const before = await check("fresh");
    assert.ok(before.length > 8, `${before.length} people match`);
    const first = (await api.get(`people?where=${where}&max_results=1`)).body._items[0];
    const patched = await api.patch(`people/${first._id}`, { city: "Oslo" }, {
      "if-match": first._etag,
    });
    assert.equal(patched.status, 200, patched.text);
    const after = await check("after a PATCH");
    assert.deepEqual(after, before.slice(1));
    const added = await api.post("people", { name: "late", age: 99, city: "Rome" });
    assert.equal(added.status, 201, added.text);
    assert.deepEqual(await check("after a POST"), [...after, "late"]);
  },
);

scenario(
  "sort: fields under one list sort by one member's values; two lists cannot be sorted on together",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      boxes: {
        schema: {
          label: { type: "string" },
          parts: {
            type: "list",
            schema: { type: "dict", schema: { w: { type: "integer" }, h: { type: "integer" } } },
          },
          xs: { type: "list", schema: { type: "integer" } },
          ys: { type: "list", schema: { type: "integer" } },
        },
      },
    },
  },
  async (api) => {
    const posted = await api.post("boxes", [
      // Member by member (w, h): (2, 1) and (3, 0); the first in sort order is (2, 1).
      { label: "one", parts: [{ w: 1, h: 2 }, { w: 0, h: 3 }] },
      { label: "two", parts: [{ w: 1, h: 1 }] },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const sorted = await api.get(`boxes?sort=${q('[("parts.h", 1), ("parts.w", 1)]')}`);
    assert.equal(sorted.status, 200, sorted.text);
    assert.deepEqual(sorted.body._items.map((d: { label: string }) => d.label), ["two", "one"]);
    const lists = await api.post("boxes", { label: "lists", xs: [1, 2], ys: [3, 4] });
    assert.equal(lists.status, 201, lists.text);
    // A 400 naming the parameters, as for any query the database refuses.
    await refused(api, "boxes?sort=xs,ys", "sort");
  },
  { gaps: ["array-sort"] },
);
