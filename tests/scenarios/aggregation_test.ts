/** Aggregation endpoints: substitution, empty stages, links, no items, sort ignored. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q } from "../support/assertions.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    rows: { schema: { tag: { type: "string" }, n: { type: "integer" } } },
    picked: {
      datasource: {
        source: "rows",
        aggregation: {
          pipeline: [{ $match: { tag: "$tag", n: "$n" } }, { $sort: { n: 1 } }, {
            $match: "$extra",
          }],
        },
      },
      pagination_default: 2,
    },
  },
};

async function seed(api: Json) {
  await api.post("rows", [
    { tag: "a", n: 1 },
    { tag: "a", n: 2 },
    { tag: "a", n: 3 },
    { tag: "b", n: 4 },
  ]);
}

scenario(
  "a value substitutes its key; {} drops it; an empty stage is skipped",
  SETTINGS,
  async (api) => {
    await seed(api);
    const tagged = await api.get(`picked?aggregate=${q('{"$tag": "a", "$n": {}, "$extra": {}}')}`);
    assert.equal(tagged.status, 200, tagged.text);
    assert.equal(tagged.body._meta.total, 3);
    assert.deepEqual(tagged.body._items.map((d: Json) => d.n), [1, 2]);
    const all = await api.get(`picked?aggregate=${q('{"$tag": {}, "$n": {}, "$extra": {}}')}`);
    assert.equal(all.body._meta.total, 4);
  },
);

scenario("the aggregation envelope carries _links with paging", SETTINGS, async (api) => {
  await seed(api);
  const agg = q('{"$tag": {}, "$n": {}, "$extra": {}}');
  const res = await api.get(`picked?aggregate=${agg}`);
  const links = res.body._links;
  // As in Eve, `self` keeps the request's query.
  assert.equal(links.self.href, `picked?aggregate={"$tag": {}, "$n": {}, "$extra": {}}`);
  assert.equal(links.parent.href, "/");
  assert.match(links.next.href, /^picked\?.*page=2/);
  assert.match(links.last.href, /page=2/);
  assert.ok(!links.prev);
  const second = await api.get(links.next.href);
  assert.deepEqual(second.body._items.map((d: Json) => d.n), [3, 4]);
  assert.match(second.body._links.prev.href, /page=1/);
});

scenario("an aggregation endpoint has no item endpoint and ignores sort", SETTINGS, async (api) => {
  await seed(api);
  const [row] = (await api.get("rows")).body._items;
  assert.equal((await api.get(`picked/${row._id}`)).status, 404);
  const agg = q('{"$tag": {}, "$n": {}, "$extra": {}}');
  const sorted = await api.get(`picked?aggregate=${agg}&sort=-n`);
  assert.equal(sorted.status, 200);
  assert.deepEqual(sorted.body._items.map((d: Json) => d.n), [1, 2]);
});

scenario("an aggregation endpoint is read-only even when RESOURCE_METHODS allows writes", {
  ...SETTINGS,
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
}, async (api) => {
  await seed(api);
  const post = await api.post("picked", { tag: "z", n: 9 });
  assert.equal(post.status, 405, post.text);
  const del = await api.delete("picked");
  assert.equal(del.status, 405, del.text);
  assert.equal((await api.get("rows")).body._meta.total, 4);
});

scenario("with pagination off all results come back with links", {
  ...SETTINGS,
  DOMAIN: { ...SETTINGS.DOMAIN, picked: { ...SETTINGS.DOMAIN.picked, pagination: false } },
}, async (api) => {
  await seed(api);
  const res = await api.get(`picked?aggregate=${q('{"$tag": "a", "$n": {}, "$extra": {}}')}`);
  assert.equal(res.body._items.length, 3);
  assert.ok(res.body._links.self.href.startsWith("picked?aggregate="), res.text);
  assert.ok(!("_meta" in res.body));
});

scenario(
  "a grouped aggregation follows every write and keeps the endpoint's filter",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH", "DELETE"],
    IF_MATCH: false,
    DOMAIN: {
      rows: { schema: { tag: { type: "string" }, n: { type: "integer" } } },
      by_tag: {
        datasource: {
          source: "rows",
          // The endpoint's own filter comes first, before the pipeline's `$match`.
          filter: { tag: { $ne: "hidden" } },
          aggregation: {
            pipeline: [
              { $match: { n: { $gte: "$min" } } },
              { $group: { _id: "$tag", rows: { $sum: 1 }, total: { $sum: "$n" } } },
              { $sort: { _id: 1 } },
            ],
          },
        },
      },
    },
  },
  async (api) => {
    const groups = async (min: number) => {
      const res = await api.get(`by_tag?aggregate=${q(JSON.stringify({ $min: min }))}`);
      assert.equal(res.status, 200, res.text);
      return res.body._items.map((g: Json) => [g._id, g.rows, g.total]);
    };
    const posted = await api.post("rows", [
      { tag: "a", n: 1 },
      { tag: "a", n: 5 },
      { tag: "b", n: 7 },
      { tag: "hidden", n: 9 },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const [one, , seven] = posted.body._items.map((i: Json) => i._id);
    assert.deepEqual(await groups(0), [["a", 2, 6], ["b", 1, 7]]);
    assert.deepEqual(await groups(5), [["a", 1, 5], ["b", 1, 7]]);
    // Each write shows in the next answer: an insert, an update, a deletion.
    assert.equal((await api.post("rows", { tag: "b", n: 10 })).status, 201);
    assert.deepEqual(await groups(5), [["a", 1, 5], ["b", 2, 17]]);
    assert.equal((await api.patch(`rows/${one}`, { n: 20 })).status, 200);
    assert.deepEqual(await groups(5), [["a", 2, 25], ["b", 2, 17]]);
    assert.equal((await api.delete(`rows/${seven}`)).status, 204);
    assert.deepEqual(await groups(0), [["a", 2, 25], ["b", 1, 10]]);
    assert.equal((await api.patch(`rows/${one}`, { tag: "hidden" })).status, 200);
    assert.deepEqual(await groups(0), [["a", 1, 5], ["b", 1, 10]]);
  },
);

scenario("an aggregation endpoint's answer follows every write between two reads", {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  DOMAIN: {
    rows: { schema: { tag: { type: "string" }, n: { type: "integer" } } },
    sums: {
      datasource: {
        source: "rows",
        aggregation: {
          pipeline: [
            { $match: { n: { $gte: "$min" } } },
            { $group: { _id: "$tag", total: { $sum: "$n" } } },
            { $sort: { _id: 1 } },
          ],
        },
      },
    },
  },
}, async (api) => {
  await seed(api);
  const sums = async () => {
    const res = await api.get(`sums?aggregate=${q('{"$min": 2}')}`);
    assert.equal(res.status, 200, res.text);
    return res.body._items.map((i: { _id: string; total: number }) => [i._id, i.total]);
  };
  assert.deepEqual(await sums(), [["a", 5], ["b", 4]]);
  assert.deepEqual(await sums(), [["a", 5], ["b", 4]]);
  assert.equal((await api.post("rows", { tag: "b", n: 6 })).status, 201);
  assert.deepEqual(await sums(), [["a", 5], ["b", 10]]);
  const rows = await api.get(`rows?where=${q('{"n": 3}')}`);
  const row = rows.body._items[0];
  const patched = await api.patch(`rows/${row._id}`, { tag: "b" }, { "if-match": row._etag });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual(await sums(), [["a", 2], ["b", 13]]);
  const deleted = await api.delete(`rows/${row._id}`, { "if-match": patched.body._etag });
  assert.equal(deleted.status, 204, deleted.text);
  assert.deepEqual(await sums(), [["a", 2], ["b", 10]]);
});

scenario(
  "an aggregation's sums of a decimal field are exact decimals, its rounding half to even",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      sales: { schema: { shop: { type: "string" }, price: { type: "decimal" } } },
      by_shop: {
        datasource: {
          source: "sales",
          aggregation: {
            pipeline: [
              { $group: { _id: "$shop", total: { $sum: "$price" }, mean: { $avg: "$price" } } },
              { $addFields: { rounded: { $round: ["$total", 1] } } },
              { $sort: { _id: 1 } },
            ],
          },
        },
      },
    },
  },
  async (api) => {
    const posted = await api.post("sales", [
      { shop: "a", price: "0.10" },
      { shop: "a", price: "0.20" },
      { shop: "a", price: "0.05" },
      { shop: "b", price: "2.25" },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const res = await api.get("by_shop");
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body._items.map((d: Json) => [d._id, d.total, d.mean, d.rounded]),
      [["a", "0.35", "0.1166666666666666666666666666666667", "0.4"], ["b", "2.25", "2.25", "2.2"]],
    );
  },
  { gaps: ["decimal-sums", "$avg", "$project-expressions"] },
);

scenario(
  "an aggregation groups by ISO week and numbers days and weeks as MongoDB does",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      visits: { schema: { at: { type: "datetime" } } },
      by_week: {
        datasource: {
          source: "visits",
          aggregation: {
            pipeline: [
              {
                $group: {
                  _id: { $dateToString: { date: "$at", format: "%G-W%V" } },
                  n: { $sum: 1 },
                },
              },
              { $sort: { _id: 1 } },
            ],
          },
        },
      },
      weekdays: {
        datasource: {
          source: "visits",
          aggregation: {
            pipeline: [
              { $sort: { at: 1 } },
              {
                $project: {
                  _id: 0,
                  day: { $dateToString: { date: "$at", format: "%w %u %U %%" } },
                  week: { $week: "$at" },
                  isoYear: { $isoWeekYear: "$at" },
                },
              },
            ],
          },
        },
      },
      misformatted: {
        datasource: {
          source: "visits",
          aggregation: {
            pipeline: [{ $project: { day: { $dateToString: { date: "$at", format: "%Y %x" } } } }],
          },
        },
      },
    },
  },
  async (api) => {
    const posted = await api.post("visits", [
      { at: "Thu, 31 Dec 2020 10:00:00 GMT" },
      { at: "Fri, 01 Jan 2021 10:00:00 GMT" },
      { at: "Sun, 03 Jan 2021 10:00:00 GMT" },
      { at: "Mon, 04 Jan 2021 10:00:00 GMT" },
    ]);
    assert.equal(posted.status, 201, posted.text);
    // Days of the week from 1 (Sunday), ISO days from 1 (Monday), weeks from the first Sunday.
    const days = await api.get("weekdays");
    assert.equal(days.status, 200, days.text);
    assert.deepEqual(days.body._items.map((d: Json) => d.day), [
      "5 4 52 %",
      "6 5 00 %",
      "1 7 01 %",
      "2 1 01 %",
    ]);
    assert.deepEqual(days.body._items.map((d: Json) => [d.week, d.isoYear]), [
      [52, 2020],
      [0, 2020],
      [1, 2020],
      [1, 2021],
    ]);
    // Three days of ISO week 53 of 2020, one of week 1 of 2021.
    const weeks = await api.get("by_week");
    assert.equal(weeks.status, 200, weeks.text);
    assert.deepEqual(weeks.body._items.map((d: Json) => [d._id, d.n]), [
      ["2020-W53", 3],
      ["2021-W01", 1],
    ]);
    // A format MongoDB refuses is refused here too: a 400, as for any query the database refuses.
    const refused = await api.get("misformatted");
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body._error.code, 400);
  },
  { gaps: ["date-operators"] },
);

scenario(
  "an aggregation counts per local day with $dateTrunc and reads texts with $dateFromString",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      calls: { schema: { at: { type: "datetime" }, logged: { type: "string" } } },
      per_day: {
        datasource: {
          source: "calls",
          aggregation: {
            pipeline: [
              {
                $group: {
                  _id: { $dateTrunc: { date: "$at", unit: "day", timezone: "America/New_York" } },
                  n: { $sum: 1 },
                },
              },
              { $sort: { _id: 1 } },
            ],
          },
        },
      },
      parsed: {
        datasource: {
          source: "calls",
          aggregation: {
            pipeline: [
              { $sort: { at: 1 } },
              {
                $project: {
                  _id: 0,
                  same: {
                    $eq: [
                      "$at",
                      { $dateFromString: { dateString: "$logged", onError: null } },
                    ],
                  },
                },
              },
            ],
          },
        },
      },
    },
  },
  async (api) => {
    // 03:00 GMT on the 5th is 22:00 on the 4th in New York.
    const posted = await api.post("calls", [
      { at: "Mon, 04 Jan 2021 15:00:00 GMT", logged: "2021-01-04T10:00:00-05:00" },
      { at: "Tue, 05 Jan 2021 03:00:00 GMT", logged: "2021-01-05 03:00:00Z" },
      { at: "Tue, 05 Jan 2021 15:00:00 GMT", logged: "2021-01-05T15:00" },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const days = await api.get("per_day");
    assert.equal(days.status, 200, days.text);
    assert.deepEqual(days.body._items.map((d: Json) => [d._id, d.n]), [
      ["Mon, 04 Jan 2021 05:00:00 GMT", 2],
      ["Tue, 05 Jan 2021 05:00:00 GMT", 1],
    ]);
    const parsed = await api.get("parsed");
    assert.equal(parsed.status, 200, parsed.text);
    assert.deepEqual(parsed.body._items.map((d: Json) => d.same), [true, true, true]);
  },
  { gaps: ["date-operators"] },
);

scenario(
  "an aggregation's math, string and list operators take the API's decimals and texts",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      items: {
        schema: {
          name: { type: "string" },
          price: { type: "decimal" },
          tags: { type: "list", schema: { type: "string" } },
        },
      },
      summary: {
        datasource: {
          source: "items",
          aggregation: {
            pipeline: [
              { $sort: { name: 1 } },
              {
                $project: {
                  _id: 0,
                  whole: { $floor: "$price" },
                  at: { $indexOfCP: ["$name", "é"] },
                  last: { $last: "$tags" },
                },
              },
            ],
          },
        },
      },
    },
  },
  async (api) => {
    const posted = await api.post("items", [
      { name: "café", price: "4.75", tags: ["hot", "drink"] },
      { name: "thé", price: "-1.25", tags: [] },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const res = await api.get("summary");
    assert.equal(res.status, 200, res.text);
    // An empty list has no last member: the field is left out, as MongoDB leaves it.
    assert.deepEqual(res.body._items, [
      { whole: "4", at: 3, last: "drink" },
      { whole: "-2", at: 2 },
    ]);
  },
  { gaps: ["$project-expressions"] },
);

scenario(
  "an aggregation's list operators order lists as MongoDB does, $push skips missing values",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      players: {
        schema: {
          name: { type: "string" },
          scores: { type: "list", schema: { type: "integer" } },
        },
      },
      ranked: {
        datasource: {
          source: "players",
          aggregation: {
            pipeline: [
              { $match: { scores: { $exists: true } } },
              { $sort: { name: 1 } },
              {
                $project: {
                  _id: 0,
                  name: 1,
                  best: { $maxN: { n: 2, input: "$scores" } },
                  ordered: { $sortArray: { input: "$scores", sortBy: -1 } },
                  reversed: { $reverseArray: "$scores" },
                },
              },
            ],
          },
        },
      },
      everyone: {
        datasource: {
          source: "players",
          aggregation: {
            pipeline: [{ $project: { top: { $firstN: { n: 1, input: "$scores" } } } }],
          },
        },
      },
      ranks: {
        datasource: {
          source: "players",
          aggregation: {
            pipeline: [
              { $match: { scores: { $exists: true } } },
              { $project: { name: 1, total: { $sum: "$scores" } } },
              { $setWindowFields: { sortBy: { total: -1 }, output: { rank: { $rank: {} } } } },
              { $sort: { rank: 1 } },
              { $project: { _id: 0, name: 1, rank: 1 } },
            ],
          },
        },
      },
      collected: {
        datasource: {
          source: "players",
          aggregation: {
            pipeline: [{ $sort: { name: 1 } }, {
              $group: { _id: null, names: { $push: "$name" }, scores: { $push: "$scores" } },
            }],
          },
        },
      },
    },
  },
  async (api) => {
    const posted = await api.post("players", [
      { name: "ann", scores: [3, 9, 4] },
      { name: "bob", scores: [7] },
      { name: "cid" },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const res = await api.get("ranked");
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body._items, [
      { name: "ann", best: [9, 4], ordered: [9, 4, 3], reversed: [4, 9, 3] },
      { name: "bob", best: [7], ordered: [7], reversed: [7] },
    ]);
    const ranks = await api.get("ranks");
    assert.equal(ranks.status, 200, ranks.text);
    assert.deepEqual(ranks.body._items, [{ name: "ann", rank: 1 }, { name: "bob", rank: 2 }]);
    // $push leaves out a missing value (cid has no scores).
    const collected = await api.get("collected");
    assert.equal(collected.status, 200, collected.text);
    assert.deepEqual(collected.body._items.map((g: Json) => [g.names, g.scores]), [
      [["ann", "bob", "cid"], [[3, 9, 4], [7]]],
    ]);
    // A player without scores has no list for $firstN: MongoDB refuses the pipeline.
    const refused = await api.get("everyone");
    assert.equal(refused.status, 400, refused.text);
  },
  { gaps: ["$project-expressions", "$setWindowFields"] },
);

scenario(
  "an aggregation's $graphLookup follows a reporting line as far as maxDepth",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      staff: { schema: { name: { type: "string" }, boss: { type: "string" } } },
      lines: {
        datasource: {
          source: "staff",
          aggregation: {
            pipeline: [
              { $match: { boss: { $exists: true } } },
              {
                $graphLookup: {
                  from: "staff",
                  startWith: "$boss",
                  connectFromField: "boss",
                  connectToField: "name",
                  as: "bosses",
                  maxDepth: "$depth",
                },
              },
              { $project: { _id: 0, name: 1, bosses: 1 } },
              { $sort: { name: 1 } },
            ],
          },
        },
      },
    },
  },
  async (api) => {
    const posted = await api.post("staff", [
      { name: "Dev" },
      { name: "Eliot", boss: "Dev" },
      { name: "Ron", boss: "Eliot" },
      { name: "Asya", boss: "Ron" },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const lines = async (depth: unknown) => {
      const res = await api.get(`lines?aggregate=${q(JSON.stringify({ $depth: depth }))}`);
      assert.equal(res.status, 200, res.text);
      // MongoDB gives the documents found in no particular order.
      return res.body._items.map((
        d: Json,
      ) => [d.name, (d.bosses as Json[]).map((b) => b.name).sort()]);
    };
    assert.deepEqual(await lines(1), [
      ["Asya", ["Eliot", "Ron"]],
      ["Eliot", ["Dev"]],
      ["Ron", ["Dev", "Eliot"]],
    ]);
    assert.deepEqual(await lines(0), [["Asya", ["Ron"]], ["Eliot", ["Dev"]], ["Ron", ["Eliot"]]]);
    // maxDepth is a whole number of 0 or more.
    const refused = await api.get(`lines?aggregate=${q(JSON.stringify({ $depth: -1 }))}`);
    assert.equal(refused.status, 400, refused.text);
  },
);

scenario(
  "an aggregation's $set reaches into lists, and $topN picks by a sort",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      carts: {
        schema: {
          owner: { type: "string" },
          lines: {
            type: "list",
            schema: {
              type: "dict",
              schema: { sku: { type: "string" }, price: { type: "number" } },
            },
          },
        },
      },
      priced: {
        datasource: {
          source: "carts",
          aggregation: {
            pipeline: [
              { $set: { "lines.currency": "$currency" } },
              { $project: { _id: 0, owner: 1, lines: 1 } },
              { $sort: { owner: 1 } },
            ],
          },
        },
      },
      dearest: {
        datasource: {
          source: "carts",
          aggregation: {
            pipeline: [
              { $unwind: "$lines" },
              {
                $group: {
                  _id: null,
                  top: { $top: { sortBy: { "lines.price": -1 }, output: "$lines.sku" } },
                  two: { $topN: { n: 2, sortBy: { "lines.price": -1 }, output: "$owner" } },
                },
              },
            ],
          },
        },
      },
    },
  },
  async (api) => {
    const posted = await api.post("carts", [
      { owner: "ann", lines: [{ sku: "a", price: 3 }, { sku: "b", price: 9 }] },
      { owner: "bob", lines: [{ sku: "c", price: 5 }] },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const res = await api.get(`priced?aggregate=${q(JSON.stringify({ $currency: "EUR" }))}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body._items, [
      {
        owner: "ann",
        lines: [
          { sku: "a", price: 3, currency: "EUR" },
          { sku: "b", price: 9, currency: "EUR" },
        ],
      },
      { owner: "bob", lines: [{ sku: "c", price: 5, currency: "EUR" }] },
    ]);
    const dearest = await api.get("dearest");
    assert.equal(dearest.status, 200, dearest.text);
    assert.deepEqual(dearest.body._items, [{ _id: null, top: "b", two: ["ann", "bob"] }]);
  },
  { gaps: ["set-through-lists", "$avg"] },
);

scenario(
  "an aggregation's $sample gives each document once, and none from an empty collection",
  {
    RESOURCE_METHODS: ["GET", "POST", "DELETE"],
    DOMAIN: {
      cards: { schema: { face: { type: "string" } } },
      drawn: {
        datasource: {
          source: "cards",
          aggregation: { pipeline: [{ $sample: { size: 3 } }, { $project: { _id: 0, face: 1 } }] },
        },
      },
    },
  },
  async (api) => {
    const empty = await api.get("drawn");
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body._items, []);
    const posted = await api.post("cards", [{ face: "ace" }, { face: "king" }]);
    assert.equal(posted.status, 201, posted.text);
    const drawn = await api.get("drawn");
    assert.equal(drawn.status, 200, drawn.text);
    assert.deepEqual(drawn.body._items.map((c: Json) => c.face).sort(), ["ace", "king"]);
  },
  { gaps: ["$sample"] },
);

scenario(
  "an aggregation endpoint's options reach the store: let variables bound for its pipeline",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      scores: { schema: { who: { type: "string" }, points: { type: "integer" } } },
      passed: {
        datasource: {
          source: "scores",
          aggregation: {
            pipeline: [
              { $match: { $expr: { $gte: ["$points", "$$pass"] } } },
              { $project: { _id: 0, who: 1 } },
              { $sort: { who: 1 } },
            ],
            options: { let: { pass: 50 }, allowDiskUse: true, comment: "passed" },
          },
        },
      },
    },
  },
  async (api) => {
    const posted = await api.post("scores", [
      { who: "ann", points: 70 },
      { who: "bob", points: 40 },
      { who: "cid", points: 50 },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const res = await api.get("passed");
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body._items, [{ who: "ann" }, { who: "cid" }]);
    assert.equal(res.body._meta.total, 2);
  },
  { gaps: ["aggregate-let"] },
);
