/** Reading: `where` (JSON and expression forms), filter restrictions, predefined filters. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";

const PEOPLE_SCHEMA = {
  name: { type: "string" },
  age: { type: "integer" },
  born: { type: "datetime" },
  boss: { type: "objectid" },
  active: { type: "boolean" },
  tags: { type: "list", schema: { type: "string" } },
  address: { type: "dict", schema: { city: { type: "string" }, zip: { type: "string" } } },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  DOMAIN: { people: { schema: PEOPLE_SCHEMA } },
};

const BOSS = "5f0c1a2b3c4d5e6f7a8b9c0d";

/** Stores four people and returns their ids by name. */
async function seed(api: Client): Promise<Record<string, string>> {
  const res = await api.post("people", [
    {
      name: "ann",
      age: 30,
      born: "Tue, 01 Jan 1991 00:00:00 GMT",
      boss: BOSS,
      active: true,
      tags: ["a", "b"],
      address: { city: "Rome", zip: "00100" },
    },
    {
      name: "bob",
      age: 17,
      born: "Sat, 01 Jan 2005 00:00:00 GMT",
      active: false,
      tags: ["b"],
      address: { city: "Oslo" },
    },
    { name: "cid", age: 45, born: "Wed, 01 Jan 1975 00:00:00 GMT", active: true, tags: [] },
    { name: "dee", age: 30, address: { city: "Rome" } },
  ]);
  assert.equal(res.status, 201, res.text);
  return Object.fromEntries(
    res.body._items.map((
      item: { _id: string },
      i: number,
    ) => [["ann", "bob", "cid", "dee"][i], item._id]),
  );
}

/** Names matched by a `where`, sorted. */
async function names(api: Client, where: string, resource = "people"): Promise<string[]> {
  const res = await api.get(`${resource}?where=${encodeURIComponent(where)}`);
  assert.equal(res.status, 200, `${where}: ${res.text}`);
  return res.body._items.map((p: { name: string }) => p.name).sort();
}

/** Asserts a 400 whose message contains every fragment. */
async function refused(api: Client, where: string, ...fragments: string[]) {
  const res = await api.get(`people?where=${encodeURIComponent(where)}`);
  assert.equal(res.status, 400, `${where} answered ${res.status}: ${res.text}`);
  assert.equal(res.body._status, "ERR");
  assert.equal(res.body._error.code, 400);
  for (const f of fragments) {
    assert.ok(res.body._error.message.includes(f), `"${res.body._error.message}" lacks "${f}"`);
  }
}

scenario("where JSON: equality, operators, dotted names, lists", SETTINGS, async (api) => {
  await seed(api);
  assert.deepEqual(await names(api, '{"name": "ann"}'), ["ann"]);
  assert.deepEqual(await names(api, '{"age": 30}'), ["ann", "dee"]);
  assert.deepEqual(await names(api, '{"age": {"$gt": 20, "$lt": 40}}'), ["ann", "dee"]);
  assert.deepEqual(await names(api, '{"age": {"$in": [17, 45]}}'), ["bob", "cid"]);
  assert.deepEqual(await names(api, '{"address.city": "Rome"}'), ["ann", "dee"]);
  assert.deepEqual(await names(api, '{"tags": "b"}'), ["ann", "bob"]);
  assert.deepEqual(await names(api, '{"$or": [{"name": "bob"}, {"age": 45}]}'), ["bob", "cid"]);
  assert.deepEqual(await names(api, '{"active": false}'), ["bob"]);
  assert.deepEqual(await names(api, '{"name": "nobody"}'), []);
  assert.deepEqual(await names(api, "{}"), ["ann", "bob", "cid", "dee"]);
  const res = await api.get(`people?where=${encodeURIComponent('{"age": 30}')}`);
  assert.equal(res.body._meta.total, 2);
});

scenario(
  "where JSON: a $comment (allowed) is a note, matching every document; inside a field refused",
  { ...SETTINGS, MONGO_QUERY_WHITELIST: ["$comment"] },
  async (api) => {
    await seed(api);
    assert.deepEqual(await names(api, '{"$comment": "adults", "age": 30}'), ["ann", "dee"]);
    assert.deepEqual(
      await names(api, '{"$or": [{"name": "bob"}, {"$comment": "all"}]}'),
      ["ann", "bob", "cid", "dee"],
    );
    const refused = await api.get(`people?where=${encodeURIComponent('{"age": {"$comment": 1}}')}`);
    assert.equal(refused.status, 400, refused.text);
  },
  { gaps: ["$comment"] },
);

scenario("where JSON: DATE_FORMAT strings are dates, also on _created", SETTINGS, async (api) => {
  await seed(api);
  assert.deepEqual(await names(api, '{"born": {"$lt": "Mon, 01 Jan 1990 00:00:00 GMT"}}'), ["cid"]);
  assert.deepEqual(await names(api, '{"born": "Tue, 01 Jan 1991 00:00:00 GMT"}'), ["ann"]);
  const future = new Date(Date.now() + 3_600_000).toUTCString();
  assert.deepEqual(await names(api, JSON.stringify({ _created: { $lt: future } })), [
    "ann",
    "bob",
    "cid",
    "dee",
  ]);
  assert.deepEqual(await names(api, JSON.stringify({ _updated: { $gt: future } })), []);
});

scenario("where JSON: ObjectId strings match objectid fields and _id", SETTINGS, async (api) => {
  const ids = await seed(api);
  assert.deepEqual(await names(api, `{"boss": "${BOSS}"}`), ["ann"]);
  assert.deepEqual(await names(api, `{"_id": "${ids.bob}"}`), ["bob"]);
  assert.deepEqual(await names(api, JSON.stringify({ _id: { $in: [ids.ann, ids.cid] } })), [
    "ann",
    "cid",
  ]);
});

scenario(
  "where: a repeated query keeps its typed values and follows the documents; a refused one stays refused",
  SETTINGS,
  async (api) => {
    const ids = await seed(api);
    const queries: Array<[string, string[]]> = [
      [`{"boss": "${BOSS}"}`, ["ann"]],
      [JSON.stringify({ _id: { $in: [ids.ann, ids.cid] } }), ["ann", "cid"]],
      ['{"born": {"$lt": "Mon, 01 Jan 1990 00:00:00 GMT"}}', ["cid"]],
      ['{"age": {"$gt": 20}, "address.city": "Rome"}', ["ann", "dee"]],
      ['name == "bob" or age > 40', ["bob", "cid"]],
    ];
    // Parsed once, answered three times with the same ObjectIds, dates and values.
    for (let round = 0; round < 3; round++) {
      for (const [where, expected] of queries) {
        assert.deepEqual(await names(api, where), expected, `round ${round}: ${where}`);
      }
    }
    // The documents change; the same texts answer from them as they are now.
    const cid = await api.get(`people/${ids.cid}`);
    const moved = await api.patch(`people/${ids.cid}`, { boss: BOSS, address: { city: "Rome" } }, {
      "if-match": cid.headers.get("etag")!,
    });
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual(await names(api, queries[0][0]), ["ann", "cid"]);
    assert.deepEqual(await names(api, queries[3][0]), ["ann", "cid", "dee"]);
    // A refused text is refused each time.
    for (let round = 0; round < 2; round++) {
      await refused(api, '{"$where": "sleep(100)"}', "$where");
      await refused(api, '{"name": ', "where");
    }
  },
);

scenario("where JSON: custom ID_FIELD values are ObjectIds too", {
  ...SETTINGS,
  ID_FIELD: "uid",
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
}, async (api) => {
  const created = await api.create("people", { name: "zed" });
  assert.match(created.uid, /^[a-f0-9]{24}$/);
  assert.deepEqual(await names(api, `{"uid": "${created.uid}"}`), ["zed"]);
});

scenario("where JSON: values are read as their field's type, aliases included", {
  ...SETTINGS,
  VALIDATE_FILTERING: true,
  DOMAIN: {
    people: {
      schema: { name: "string", day: { type: "date" }, price: { type: "decimal" } },
    },
  },
}, async (api) => {
  await api.create("people", { name: "ann", day: "2013-04-02", price: "12.50" });
  await api.create("people", { name: "bob", day: "Wed, 03 Apr 2013 00:00:00 GMT", price: 3 });
  // `date` is a datetime: DATE_FORMAT text or a calendar day, as a POST reads it.
  assert.deepEqual(await names(api, '{"day": "Tue, 02 Apr 2013 00:00:00 GMT"}'), ["ann"]);
  assert.deepEqual(await names(api, '{"day": {"$gt": "2013-04-02"}}'), ["bob"]);
  // `decimal` is a decimal128: numbers and numeric text compare as numbers.
  assert.deepEqual(await names(api, '{"price": "12.50"}'), ["ann"]);
  assert.deepEqual(await names(api, '{"price": {"$lt": 10}}'), ["bob"]);
  assert.deepEqual(await names(api, '{"price": {"$lt": "12.5"}}'), ["bob"]);
  assert.deepEqual(await names(api, '{"price": {"$gte": "12.5"}}'), ["ann"]);
  const refused = await api.get(`people?where=${encodeURIComponent('{"day": "someday"}')}`);
  assert.equal(refused.status, 400);
  assert.match(refused.body._error.message, /not a valid date \(DATE_FORMAT/);
});

scenario("where expression: comparisons, and/or/not, parentheses", SETTINGS, async (api) => {
  await seed(api);
  assert.deepEqual(await names(api, 'name == "ann"'), ["ann"]);
  assert.deepEqual(await names(api, 'name != "ann"'), ["bob", "cid", "dee"]);
  assert.deepEqual(await names(api, "age > 30"), ["cid"]);
  assert.deepEqual(await names(api, "age >= 30"), ["ann", "cid", "dee"]);
  assert.deepEqual(await names(api, "age < 30"), ["bob"]);
  assert.deepEqual(await names(api, "age <= 30"), ["ann", "bob", "dee"]);
  assert.deepEqual(await names(api, 'name == "ann" and age > 3 or name == "bob"'), ["ann", "bob"]);
  assert.deepEqual(await names(api, 'name == "bob" or name == "ann" and age > 40'), ["bob"]);
  assert.deepEqual(await names(api, '(name == "bob" or name == "ann") and age > 20'), ["ann"]);
  assert.deepEqual(await names(api, "not (age > 20)"), ["bob"]);
  assert.deepEqual(await names(api, 'not name == "ann" and not name == "bob"'), ["cid", "dee"]);
  assert.deepEqual(await names(api, 'address.city == "Oslo"'), ["bob"]);
});

scenario(
  "where expression: booleans, null, numbers, lists, dates, ObjectIds",
  SETTINGS,
  async (api) => {
    const ids = await seed(api);
    assert.deepEqual(await names(api, "active == true"), ["ann", "cid"]);
    assert.deepEqual(await names(api, "active == false"), ["bob"]);
    assert.deepEqual(await names(api, "active == null"), ["dee"]);
    assert.deepEqual(await names(api, "age == 30.0"), ["ann", "dee"]);
    assert.deepEqual(await names(api, "age in [17, 45]"), ["bob", "cid"]);
    assert.deepEqual(await names(api, 'tags == ["a", "b"]'), ["ann"]);
    assert.deepEqual(await names(api, 'born > datetime("Sat, 01 Jan 2000 00:00:00 GMT")'), ["bob"]);
    assert.deepEqual(await names(api, `boss == "${BOSS}"`), ["ann"]);
    assert.deepEqual(await names(api, `_id == "${ids.cid}"`), ["cid"]);
  },
);

scenario("where: malformed queries answer 400 with the position", SETTINGS, async (api) => {
  await seed(api);
  await refused(api, "{'name': 'ann'}", "single quotes", "position 1");
  await refused(api, "{\"name\": 'ann'}", "single quotes", "position 9");
  await refused(api, "name == 'ann'", "single quote", "position 8");
  await refused(api, '{"name": "ann"', "position 14");
  await refused(api, '{"name" "ann"}', "expected ':'", "position 8");
  await refused(api, '{"name": "ann"} x', "position 16");
  await refused(api, "name ==", "position 7");
  await refused(api, 'name = "ann"', "position");
  await refused(api, '(name == "ann"', "expected ')'", "position 14");
  await refused(api, 'born > datetime("yesterday")', "DATE_FORMAT", "position 16");
  await refused(api, '["name"]', "where");
  await refused(api, '{"age": {"$bogus": 1}}', "unknown operator $bogus");
});

scenario("DB_QUERY_BLACKLIST: $where and $regex refused at any depth", SETTINGS, async (api) => {
  await seed(api);
  await refused(api, '{"name": {"$regex": "^a"}}', "$regex");
  await refused(api, '{"$where": "this.age > 1"}', "$where");
  await refused(api, '{"$or": [{"age": 1}, {"$and": [{"name": {"$regex": "a"}}]}]}', "$regex");
  await refused(api, '{"tags": {"$elemMatch": {"$regex": "a"}}}', "$regex");
  await refused(api, '{"age": {"$not": {"$regex": "a"}}}', "$regex");
  await refused(
    api,
    '{"$expr": {"$function": {"body": "x", "args": [], "lang": "js"}}}',
    "$function",
  );
});

scenario("DB_QUERY_BLACKLIST: an emptied blacklist allows $regex", {
  ...SETTINGS,
  DB_QUERY_BLACKLIST: ["$where"],
}, async (api) => {
  await seed(api);
  assert.deepEqual(await names(api, '{"name": {"$regex": "^[ab]"}}'), ["ann", "bob"]);
  await refused(api, '{"$where": "1"}', "$where");
});

scenario("ALLOWED_FILTERS: only listed fields (and their sub-fields) filter", {
  ...SETTINGS,
  ALLOWED_FILTERS: ["name", "address"],
}, async (api) => {
  await seed(api);
  assert.deepEqual(await names(api, '{"name": "ann"}'), ["ann"]);
  assert.deepEqual(await names(api, '{"address.city": "Oslo"}'), ["bob"]);
  assert.deepEqual(await names(api, 'name == "bob"'), ["bob"]);
  await refused(api, '{"age": 30}', "'age' not allowed");
  await refused(api, '{"$or": [{"name": "ann"}, {"age": 30}]}', "'age' not allowed");
  await refused(api, "age > 3", "'age' not allowed");
});

scenario(
  "ALLOWED_FILTERS: an empty list turns filtering off (where is ignored, as in Eve)",
  { ...SETTINGS, ALLOWED_FILTERS: [] },
  async (api) => {
    await seed(api);
    assert.equal((await names(api, '{"name": "ann"}')).length, 4);
    assert.equal((await names(api, "name == ann")).length, 4);
  },
);

scenario("VALIDATE_FILTERING: unknown fields and ill-typed values are refused", {
  ...SETTINGS,
  VALIDATE_FILTERING: true,
}, async (api) => {
  await seed(api);
  assert.deepEqual(await names(api, '{"age": {"$gte": 30}, "address.city": "Rome"}'), [
    "ann",
    "dee",
  ]);
  assert.deepEqual(await names(api, '{"born": {"$lt": "Mon, 01 Jan 1990 00:00:00 GMT"}}'), ["cid"]);
  await refused(api, '{"nickname": "x"}', "'nickname'", "unknown field");
  await refused(api, '{"age": "thirty"}', "'age'", "integer");
  await refused(api, '{"born": "yesterday"}', "'born'", "datetime");
  await refused(api, '{"boss": "not-an-id"}', "'boss'", "objectid");
  await refused(api, 'active == "yes"', "'active'", "boolean");
});

scenario("VALIDATE_FILTERING off: unknown fields filter freely", SETTINGS, async (api) => {
  await seed(api);
  assert.deepEqual(await names(api, '{"nickname": "x"}'), []);
  assert.deepEqual(await names(api, '{"age": "thirty"}'), []);
});

const SHARED = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  IF_MATCH: false,
  DOMAIN: {
    people: { schema: PEOPLE_SCHEMA },
    adults: {
      schema: PEOPLE_SCHEMA,
      datasource: { source: "people", filter: { age: { $gte: 18 } } },
    },
    romans: {
      schema: PEOPLE_SCHEMA,
      datasource: { source: "people", filter: { "address.city": "Rome" } },
    },
  },
};

scenario("predefined filter: reads and counts only matching documents", SHARED, async (api) => {
  const ids = await seed(api);
  const adults = await api.get("adults");
  assert.equal(adults.status, 200);
  assert.deepEqual(adults.body._items.map((p: { name: string }) => p.name).sort(), [
    "ann",
    "cid",
    "dee",
  ]);
  assert.equal(adults.body._meta.total, 3);
  assert.deepEqual(await names(api, '{"age": {"$lt": 40}}', "adults"), ["ann", "dee"]);
  assert.deepEqual(await names(api, '{"age": {"$lt": 18}}', "adults"), []);
  assert.deepEqual(await names(api, "{}", "romans"), ["ann", "dee"]);
  assert.equal((await api.get(`adults/${ids.ann}`)).status, 200);
  assert.equal((await api.get(`adults/${ids.bob}`)).status, 404);
  assert.equal((await api.get(`romans/${ids.cid}`)).status, 404);
});

scenario("predefined filter: updates and deletes only matching documents", SHARED, async (api) => {
  const ids = await seed(api);
  assert.equal((await api.patch(`adults/${ids.bob}`, { name: "bobby" })).status, 404);
  assert.equal((await api.delete(`adults/${ids.bob}`)).status, 404);
  assert.equal((await api.patch(`adults/${ids.ann}`, { active: false })).status, 200);
  assert.equal((await api.delete("romans")).status, 204);
  assert.deepEqual(await names(api, "{}"), ["bob", "cid"]);
  assert.equal((await api.delete(`adults/${ids.cid}`)).status, 204);
  assert.deepEqual(await names(api, "{}"), ["bob"]);
});

scenario(
  "where JSON: a name every object inherits is a field like any other",
  SETTINGS,
  async (api) => {
    await seed(api);
    const where = (filter: unknown) =>
      api.get(`people?where=${encodeURIComponent(JSON.stringify(filter))}&max_results=50`);
    // No document has these fields: the inherited members of a plain object never count
    // (`constructor` itself is refused as a field name).
    for (const field of ["toString", "hasOwnProperty", "valueOf", "isPrototypeOf"]) {
      const absent = await where({ [field]: { $exists: false } });
      assert.equal(absent.status, 200, absent.text);
      assert.equal(absent.body._meta.total, 4, `${field} $exists false`);
      const present = await where({ [field]: { $exists: true } });
      assert.equal(present.status, 200, present.text);
      assert.equal(present.body._meta.total, 0, `${field} $exists true`);
    }
  },
);

/** Boxes of parts: lists of dicts holding lists, for conditions on dotted paths. */
const BOXES = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    boxes: {
      schema: {
        name: { type: "string" },
        parts: {
          type: "list",
          schema: {
            type: "dict",
            schema: {
              sizes: { type: "list", schema: { type: "integer" } },
              label: { type: "string" },
              at: { type: "datetime" },
            },
          },
        },
      },
    },
  },
};

/**
 * Stores three boxes, then asserts that each `where` condition finds the boxes named, alone and
 * as a branch of an `$or` (which the embedded store's query engine tests rather than its direct
 * matcher).
 */
function findsBoxes(api: Client, cases: Cases): Promise<void> {
  return findsNamed(api, "boxes", {
    docs: [
      { name: "one", parts: [{ sizes: [1, 7], label: "b", at: "Thu, 01 Jan 2026 00:00:00 GMT" }] },
      { name: "two", parts: [{ sizes: [2] }, { sizes: [3], label: "a" }] },
      {
        name: "three",
        parts: [{ sizes: [] }, { label: "c", at: "Mon, 05 Jan 2026 00:00:00 GMT" }],
      },
    ],
    cases,
  });
}

/** `where` conditions and the names of the documents each finds, sorted. */
type Cases = Array<[Record<string, unknown>, string[]]>;

/**
 * Stores `docs` in `resource`, then asserts that each condition of `cases` finds the documents
 * of the names given, alone and as a branch of an `$or`.
 */
async function findsNamed(
  api: Client,
  resource: string,
  options: { docs: Array<{ name: string; [field: string]: unknown }>; cases: Cases },
): Promise<void> {
  const posted = await api.post(resource, options.docs);
  assert.equal(posted.status, 201, posted.text);
  const names = async (filter: unknown) => {
    const res = await api.get(`${resource}?where=${encodeURIComponent(JSON.stringify(filter))}`);
    assert.equal(res.status, 200, res.text);
    return (res.body._items as Array<{ name: string }>).map((b) => b.name).sort();
  };
  for (const [condition, expected] of options.cases) {
    assert.deepEqual(await names(condition), expected, JSON.stringify(condition));
    const either = { $or: [condition, { name: "none" }] };
    assert.deepEqual(await names(either), expected, JSON.stringify(either));
  }
}

scenario(
  "where JSON: ranges, members and $exists on dotted paths through lists of dicts, alone and in $or",
  BOXES,
  (api) =>
    findsBoxes(api, [
      [{ "parts.sizes": { $gt: 5 } }, ["one"]],
      // One size may meet one bound and another the other (no $elemMatch).
      [{ "parts.sizes": { $gte: 2, $lt: 3 } }, ["one", "two"]],
      [{ "parts.sizes": { $lte: 1 } }, ["one"]],
      [{ "parts.sizes": { $in: [7, 9] } }, ["one"]],
      [{ "parts.sizes": { $nin: [7, 9] } }, ["three", "two"]],
      [{ "parts.at": { $exists: false } }, ["two"]],
      [{ "parts.label": { $gte: "b" } }, ["one", "three"]],
      [{ "parts.at": { $gt: "Fri, 02 Jan 2026 00:00:00 GMT" } }, ["three"]],
    ]),
);

scenario(
  "where JSON: each member of $all on its own, through lists of dicts, alone and in $or",
  BOXES,
  (api) =>
    findsBoxes(api, [
      // One size in one part, the other in another.
      [{ "parts.sizes": { $all: [2, 3] } }, ["two"]],
      [{ "parts.sizes": { $all: [7] } }, ["one"]],
      [{ "parts.label": { $all: ["b"] } }, ["one"]],
    ]),
  { gaps: ["all-as-equalities"] },
);

scenario(
  "where JSON: $type by alias and number, list elements included, through lists of dicts",
  BOXES,
  (api) =>
    findsBoxes(api, [
      [{ "parts.sizes": { $type: "int" } }, ["one", "two"]],
      [{ "parts.sizes": { $type: "number" } }, ["one", "two"]],
      [{ "parts.sizes": { $type: "array" } }, ["one", "three", "two"]],
      [{ "parts.label": { $type: "string" } }, ["one", "three", "two"]],
      [{ "parts.label": { $type: 2 } }, ["one", "three", "two"]],
      [{ "parts.at": { $type: "date" } }, ["one", "three"]],
      [{ "parts.at": { $type: "string" } }, []],
      [{ _id: { $type: "objectId" } }, ["one", "three", "two"]],
    ]),
);

scenario(
  "where JSON: $type on a list field, and an unknown type refused",
  SETTINGS,
  async (api) => {
    await seed(api);
    assert.deepEqual(await names(api, '{"tags": {"$type": "string"}}'), ["ann", "bob"]);
    assert.deepEqual(await names(api, '{"tags": {"$type": "array"}}'), ["ann", "bob", "cid"]);
    assert.deepEqual(await names(api, '{"age": {"$type": "int"}}'), ["ann", "bob", "cid", "dee"]);
    assert.deepEqual(await names(api, '{"born": {"$type": 9}}'), ["ann", "bob", "cid"]);
    await refused(api, '{"tags": {"$type": "bogus"}}');
    await refused(api, '{"tags": {"$type": 99}}');
  },
);

/** Grids: a list of numbers and a list of lists, for `$elemMatch` on elements. */
const GRIDS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    grids: {
      schema: {
        name: { type: "string" },
        scores: { type: "list", schema: { type: "integer" } },
        rows: { type: "list", schema: { type: "list", schema: { type: "integer" } } },
      },
    },
  },
};

/**
 * Stores three grids, then asserts that each `where` condition finds the grids named, alone and
 * as a branch of an `$or`.
 */
function findsGrids(api: Client, cases: Cases): Promise<void> {
  return findsNamed(api, "grids", {
    docs: [
      { name: "a", scores: [82, 85, 88], rows: [[1, 2], [6]] },
      { name: "b", scores: [75, 88, 89], rows: [[7, 8, 9]] },
      { name: "c", scores: [], rows: [] },
    ],
    cases,
  });
}

scenario(
  "where JSON: $elemMatch on elements tests each element as one value, a list element included",
  GRIDS,
  (api) =>
    findsGrids(api, [
      // One element meets both bounds (82), as MongoDB's documentation has it.
      [{ scores: { $elemMatch: { $gte: 80, $lt: 85 } } }, ["a"]],
      // A row is one value: no number, so no row is >= 5; one row has two members.
      [{ rows: { $elemMatch: { $gte: 5 } } }, []],
      [{ rows: { $elemMatch: { $size: 2 } } }, ["a"]],
      [{ rows: { $elemMatch: { $elemMatch: { $gt: 5 } } } }, ["a", "b"]],
      [{ rows: { $elemMatch: { $eq: [6] } } }, ["a"]],
      [{ rows: { $elemMatch: { $type: "array" } } }, ["a", "b"]],
    ]),
  { gaps: ["elemmatch-values"] },
);

scenario(
  "where JSON: null through lists of dicts: a part lacking the field matches, as in MongoDB",
  BOXES,
  (api) =>
    findsBoxes(api, [
      [{ "parts.label": null }, ["three", "two"]],
      [{ "parts.label": { $in: [null, "x"] } }, ["three", "two"]],
      [{ "parts.label": { $ne: null } }, ["one"]],
      [{ "parts.label": { $nin: [null, "x"] } }, ["one"]],
      [{ "parts.at": { $exists: false } }, ["two"]],
    ]),
  { gaps: ["null-paths"] },
);

scenario(
  "where JSON: $size at the end of a path through lists of dicts, a bad size refused",
  BOXES,
  async (api) => {
    await findsBoxes(api, [
      [{ "parts.sizes": { $size: 2 } }, ["one"]],
      [{ "parts.sizes": { $size: 1 } }, ["two"]],
      [{ "parts.sizes": { $size: 0 } }, ["three"]],
      [{ parts: { $size: 2 } }, ["three", "two"]],
    ]);
    const res = await api.get(`boxes?where=${encodeURIComponent('{"parts": {"$size": -1}}')}`);
    assert.equal(res.status, 400, res.text);
  },
);

scenario("where JSON: filters MongoDB refuses answer 400", SETTINGS, async (api) => {
  await seed(api);
  for (
    const where of [
      '{"$or": []}',
      '{"$and": []}',
      '{"age": {"$not": {}}}',
      '{"age": {"$mod": [0, 1]}}',
      '{"age": {"$mod": [10]}}',
      '{"tags": {"$in": [{"$elemMatch": {"x": 1}}]}}',
      '{"tags": {"$all": [{"$gt": 1}]}}',
    ]
  ) {
    await refused(api, where);
  }
});

scenario(
  "where JSON: a number in a path names a list position, the member there one value",
  GRIDS,
  (api) =>
    findsGrids(api, [
      [{ "scores.0": { $gt: 80 } }, ["a"]],
      [{ "rows.0.1": 2 }, ["a"]],
      [{ "rows.0": [1, 2] }, ["a"]],
      // The first row is one value, a list: not equal to a number it holds.
      [{ "rows.0": 1 }, []],
      [{ "rows.0": { $size: 3 } }, ["b"]],
    ]),
  { gaps: ["array-positions"] },
);
