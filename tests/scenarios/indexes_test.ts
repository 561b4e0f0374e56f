/**
 * Indexes change no result: the same documents stored in an indexed resource (declared
 * `mongo_indexes`, a unique field, an additional lookup, a default sort) and in a plain one
 * answer every query the same, before and after writes.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";

const SCHEMA = {
  n: { type: "integer" },
  email: { type: "string", unique: true },
  age: { type: "integer", nullable: true },
  code: { type: ["integer", "string"], nullable: true },
  tags: { type: "list", schema: { type: "string" } },
  born: { type: "datetime" },
  city: { type: "string" },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  IF_MATCH: false,
  PAGINATION_LIMIT: 100,
  DOMAIN: {
    indexed: {
      schema: SCHEMA,
      additional_lookup: { url: "regex('[\\w]+')", field: "city" },
      default_sort: [["age", -1]],
      mongo_indexes: {
        by_age: [["age", 1]],
        by_code: [["code", 1], ["n", -1]],
        by_tags: [["tags", 1]],
        by_born: [["born", 1]],
      },
    },
    plain: { schema: SCHEMA, default_sort: [["age", -1]] },
  },
};

const CITIES = ["rome", "oslo", "lima"];

function doc(n: number): Record<string, unknown> {
  const d: Record<string, unknown> = {
    n,
    email: `u${n}@example.org`,
    tags: n % 4 === 0 ? [] : [`t${n % 3}`, `t${n % 5}`],
    born: new Date(Date.UTC(1970 + (n % 40), n % 12, 1)).toUTCString(),
    city: CITIES[n % 3],
  };
  if (n % 7 !== 0) d.age = n % 7 === 1 ? null : (n * 13) % 50;
  if (n % 5 !== 0) d.code = n % 2 ? n % 9 : String(n % 9);
  return d;
}

/** What an answer says, without what differs between two resources (ids, links, stamps). */
function essence(body: { _items?: Array<Record<string, unknown>>; _meta?: unknown }) {
  return {
    meta: body._meta,
    items: (body._items ?? []).map((item) => {
      const { _id: _i, _links: _l, _created: _c, _updated: _u, _etag: _e, ...rest } = item;
      return rest;
    }),
  };
}

const QUERIES = [
  "",
  'where={"age":21}',
  'where={"age":null}',
  'where={"age":{"$in":[0,21,39,null]}}',
  'where={"age":{"$gt":20}}',
  'where={"age":{"$gte":10,"$lt":30}}&sort=age',
  'where={"code":"3"}',
  'where={"code":3}',
  'where={"code":{"$in":[3,"3",8]}}&sort=-n',
  'where={"tags":"t1"}',
  'where={"tags":{"$in":["t2","t4"]}}&sort=-age,n',
  'where={"email":"u17@example.org"}',
  'where={"email":"nobody@example.org"}',
  'where={"city":"oslo","age":{"$ne":null}}',
  'where={"$and":[{"city":"rome"},{"age":{"$lt":25}}]}',
  'where={"$or":[{"city":"rome"},{"age":3}]}',
  'where={"born":{"$gte":"Mon, 01 Jan 1990 00:00:00 GMT"}}&sort=born',
  "sort=age",
  "sort=-age&page=2&max_results=7",
  "sort=age,-n&max_results=100",
  "sort=code&max_results=100",
  "sort=-code,n&max_results=100",
  "sort=tags&max_results=100",
  "sort=-tags,n&max_results=100",
  "sort=born&page=3&max_results=9",
  "sort=city,n&max_results=100",
  'where={"city":"lima"}&sort=-age',
  // Ranges on indexed fields: counted from the sorted view when alone, narrowed to the
  // range's documents when it holds few of them, scanned otherwise; mixed types, nulls,
  // missing values and arrays (which a range cannot be read from the order for).
  'where={"age":{"$lt":20}}&max_results=5',
  'where={"age":{"$gte":10,"$lt":12}}',
  'where={"age":{"$gt":10,"$lte":12}}&page=2&max_results=2',
  'where={"age":{"$gte":48}}',
  'where={"age":{"$gt":49}}',
  'where={"age":{"$lte":-1}}',
  'where={"age":{"$gte":12,"$lte":12}}&sort=-n',
  'where={"age":{"$gt":"a"}}',
  'where={"age":{"$gt":5,"$lt":"z"}}',
  'where={"age":{"$gt":30,"$ne":40}}',
  'where={"age":{"$gt":30},"city":"rome"}',
  'where={"$and":[{"age":{"$gte":5}},{"age":{"$lt":7}}]}',
  'where={"code":{"$gt":6}}',
  'where={"code":{"$lt":"4"}}&sort=n',
  'where={"code":{"$gte":"0"}}',
  'where={"tags":{"$gt":"t3"}}',
  'where={"tags":{"$lt":"t1"}}&max_results=3',
  'where={"born":{"$lt":"Fri, 01 Jan 1971 00:00:00 GMT"}}',
  'where={"born":{"$gt":"Fri, 01 Jan 1971 00:00:00 GMT","$lt":"Sat, 01 Jan 1972 00:00:00 GMT"}}',
  // Both bounds of one side: the tighter one holds (the total was once read from the looser).
  'where={"age":{"$lte":40,"$lt":12}}',
  'where={"age":{"$gte":5,"$gt":30}}',
  'where={"age":{"$gt":12,"$gte":12,"$lt":20,"$lte":20}}',
  // Equalities on an indexed field, narrow (the index's candidates) and wide (a scan, which a
  // page stops early), paged past their first page, counted in the total.
  'where={"code":{"$in":[1,3,5,7,"0","2","4","6"]}}&page=2&max_results=5',
  'where={"code":{"$in":[1,3,5,7,"0","2","4","6"]}}&sort=-n&max_results=4',
  'where={"tags":"t2"}&page=3&max_results=4',
  'where={"tags":{"$in":["t0","t1","t2","t3"]}}&page=4&max_results=6',
  'where={"code":8}&page=2&max_results=2',
  'where={"age":{"$in":[21,0]}}&page=2&max_results=1',
];

async function compare(api: Client, stage: string): Promise<void> {
  for (const q of QUERIES) {
    const [a, b] = await Promise.all([api.get(`indexed?${q}`), api.get(`plain?${q}`)]);
    assert.equal(a.status, 200, `${stage} ${q}: ${a.text}`);
    assert.equal(b.status, 200, `${stage} ${q}: ${b.text}`);
    assert.deepEqual(essence(a.body), essence(b.body), `${stage}: ${q}`);
  }
  for (const city of CITIES) {
    const [a, b] = await Promise.all([
      api.get(`indexed/${city}`),
      api.get(`plain?where=${encodeURIComponent(JSON.stringify({ city }))}&sort=_id&max_results=1`),
    ]);
    assert.equal(a.status, 200, a.text);
    assert.equal(a.body.n, b.body._items[0].n, `${stage}: lookup ${city}`);
  }
}

scenario("indexes change no result, before and after writes", SETTINGS, async (api) => {
  const docs = Array.from({ length: 120 }, (_, i) => doc(i));
  for (const resource of ["indexed", "plain"]) {
    const res = await api.post(resource, docs);
    assert.equal(res.status, 201, res.text);
  }
  await compare(api, "seeded");

  // The same writes on both: updates that move documents between keys, deletes, inserts.
  for (const resource of ["indexed", "plain"]) {
    const page = await api.get(`${resource}?sort=n&max_results=100`);
    const ids = page.body._items.map((i: { _id: string }) => i._id);
    for (const k of [3, 10, 17, 44, 71]) {
      const res = await api.patch(`${resource}/${ids[k]}`, {
        age: k % 2 ? null : 21,
        code: "3",
        tags: ["t2"],
      });
      assert.equal(res.status, 200, res.text);
    }
    for (const k of [5, 6, 50]) {
      const res = await api.delete(`${resource}/${ids[k]}`);
      assert.equal(res.status, 204, res.text);
    }
    const res = await api.post(resource, [doc(500), doc(501), { ...doc(502), age: 21 }]);
    assert.equal(res.status, 201, res.text);
  }
  await compare(api, "after writes");

  // A duplicate is still refused through the index.
  const dup = await api.post("indexed", { n: 999, email: "u17@example.org" });
  assert.equal(dup.status, 422, dup.text);
});

scenario("a page's total over a range with both bounds of one side counts the tighter one", {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    rows: { schema: { n: { type: "integer" } }, mongo_indexes: { n_1: [["n", 1]] } },
  },
}, async (api) => {
  const created = await api.post("rows", Array.from({ length: 50 }, (_, n) => ({ n })));
  assert.equal(created.status, 201, created.text);
  const cases: Array<[unknown, number]> = [
    [{ n: { $lte: 40, $lt: 3 } }, 3],
    [{ n: { $gte: 5, $gt: 44 } }, 5],
    [{ n: { $gt: 10, $gte: 10, $lt: 20, $lte: 20 } }, 9],
  ];
  for (const [where, total] of cases) {
    const res = await api.get(`rows?where=${encodeURIComponent(JSON.stringify(where))}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body._meta.total, total, JSON.stringify(where));
    assert.equal(res.body._items.length, total, JSON.stringify(where));
  }
});

scenario("a sparse unique index from mongo_indexes: any number lack the code, each code once", {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    codes: {
      schema: { code: { type: "string", nullable: true }, note: { type: "string" } },
      mongo_indexes: { code_unique: [[["code", 1]], { unique: true, sparse: true }] },
    },
  },
}, async (api) => {
  // Sparse: any number of documents lack the code; a code (null included) is taken once.
  for (const body of [{ note: "a" }, { note: "b" }, { code: "x" }, { code: null }]) {
    const res = await api.post("codes", body);
    assert.equal(res.status, 201, res.text);
  }
  for (const body of [{ code: "x" }, { code: null }]) {
    const res = await api.post("codes", body);
    assert.equal(res.status, 422, res.text);
  }
});

scenario("a TTL index deletes the documents past it", {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    sessions: {
      schema: { user: { type: "string" }, seen: { type: "datetime" } },
      mongo_indexes: { seen_ttl: [[["seen", 1]], { expireAfterSeconds: 600 }] },
    },
  },
}, async (api, running) => {
  const hourAgo = new Date(Date.now() - 3_600_000).toUTCString();
  const posted = await api.post("sessions", [
    { user: "gone", seen: hourAgo },
    { user: "kept", seen: new Date().toUTCString() },
  ]);
  assert.equal(posted.status, 201, posted.text);
  // MongoDB's TTL monitor runs once a minute; the embedded store's sweep can be run at once.
  const store = running.service.store as { expire?: () => Promise<number> };
  if (store.expire) assert.equal(await store.expire(), 1);
  const deadline = Date.now() + 150_000;
  for (;;) {
    const res = await api.get("sessions");
    assert.equal(res.status, 200, res.text);
    const users = res.body._items.map((s: { user: string }) => s.user);
    if (!users.includes("gone")) {
      assert.deepEqual(users, ["kept"]);
      break;
    }
    assert.ok(Date.now() < deadline, "the expired session is still there after 150 s");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}, { gaps: ["ttl"] });
