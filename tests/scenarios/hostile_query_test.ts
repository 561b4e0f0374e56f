/**
 * Hostile queries (issue 8): the `$expr` sandbox (operator allowlist, bounded arrays), regex
 * operators counted as `$regex`, linear-time regular expressions, and the query time bound.
 * Every refusal is a quick 4xx after which the service still answers within 100 ms.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client, Json } from "../support/client.ts";
import { q, refused } from "../support/assertions.ts";
import { answersQuickly } from "../support/hostile.ts";
import { createService, SettingsError } from "../../src/mod.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  // As in Eve, expression operators beyond its query operators need whitelisting; these
  // scenarios exercise the expression sandbox behind it.
  MONGO_QUERY_WHITELIST: [
    "$add",
    "$concatArrays",
    "$map",
    "$range",
    "$reduce",
    "$regexFind",
    "$regexFindAll",
    "$regexMatch",
  ],
  DOMAIN: {
    people: { schema: { name: { type: "string" }, age: { type: "integer" } } },
    codes: { schema: { code: { type: "string", regex: "(a+)+" } } },
  },
};

/** GETs people with `where` and asserts a quick 400 naming `fragment`. */
async function refusedQuickly(api: Client, where: unknown, fragment: string): Promise<void> {
  const t0 = performance.now();
  await refused(api, `people?where=${q(JSON.stringify(where))}`, fragment);
  const ms = performance.now() - t0;
  assert.ok(ms < 500, `refusal took ${ms.toFixed(0)} ms`);
  await answersQuickly(api, "people?max_results=1");
}

const LONG_A = "a".repeat(40) + "!";

scenario("hostile where: array-building expressions are bounded", SETTINGS, async (api) => {
  await api.create("people", { name: "ann", age: 3 });
  await refusedQuickly(api, {
    $expr: {
      $gt: [{ $size: { $map: { input: { $range: [0, 500] }, in: { $range: [0, 1000000] } } } }, 0],
    },
  }, "QUERY_MAX_RANGE");
  await refusedQuickly(api, {
    $expr: {
      $gt: [{ $size: { $map: { input: { $range: [0, 500] }, in: { $range: [0, 1000] } } } }, 0],
    },
  }, "QUERY_EXPR_MAX_ELEMENTS");
  await refusedQuickly(api, {
    $expr: {
      $gt: [{
        $reduce: { input: { $range: [0, 1000000] }, initialValue: 0, in: { $add: ["$$value", 1] } },
      }, 0],
    },
  }, "QUERY_MAX_RANGE");
  await refusedQuickly(api, {
    $expr: {
      $gt: [{
        $size: {
          $reduce: {
            input: { $range: [0, 60] },
            initialValue: [1],
            in: { $concatArrays: ["$$value", "$$value"] },
          },
        },
      }, 0],
    },
  }, "$$value may be used only once");
  await refusedQuickly(api, { $expr: { $gt: [{ $size: { $range: [0, "$age"] } }, 0] } }, "literal");
});

scenario("hostile where: only allowlisted operators", SETTINGS, async (api) => {
  await api.create("people", { name: "ann", age: 3 });
  await refusedQuickly(
    api,
    { $expr: { $function: { body: "function() { return true }", args: [], lang: "js" } } },
    "operator $function is not allowed",
  );
  await refusedQuickly(api, { $expr: { $eq: [{ $evil: "$name" }, 1] } }, "operator $evil");
  await refusedQuickly(api, { name: { $evil: 1 } }, "unknown operator $evil");
  // A small bounded expression still works.
  const ok = await api.get(
    `people?where=${q(JSON.stringify({ $expr: { $gt: ["$age", 1] } }))}`,
  );
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body._items.length, 1);
});

scenario("hostile where: regex expression operators count as $regex", SETTINGS, async (api) => {
  await api.create("people", { name: LONG_A });
  for (const op of ["$regexMatch", "$regexFind", "$regexFindAll"]) {
    await refusedQuickly(
      api,
      { $expr: { [op]: { input: "$name", regex: "^(a+)+$" } } },
      `operator ${op} is not allowed`,
    );
  }
  await refusedQuickly(api, { name: { $regex: "^(a+)+$" } }, "operator $regex is not allowed");
});

scenario(
  "hostile where: allowed regexes run in linear time or are refused",
  { ...SETTINGS, DB_QUERY_BLACKLIST: ["$where"] },
  async (api, running) => {
    await api.create("people", { name: LONG_A });
    await api.create("people", { name: "aaa" });
    // Back-references and look-around cannot run in linear time: refused up front.
    await refusedQuickly(api, { name: { $regex: "(a)\\1" } }, "unsupported regular expression");
    await refusedQuickly(api, { name: { $regex: "(?=a)a" } }, "unsupported regular expression");
    const ok = await api.get(`people?where=${q(JSON.stringify({ name: { $regex: "^a+$" } }))}`);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body._items.map((d: Json) => d.name), ["aaa"]);
    // Catastrophic patterns on long input: the embedded store evaluates them with the
    // linear-time engine. (MongoDB runs its own engine bounded by maxTimeMS; the emulator
    // has no such bound, so this part is for the embedded store.)
    if (running.kind !== "embedded") return;
    for (
      const where of [
        { name: { $regex: "^(a+)+$" } },
        { $expr: { $regexMatch: { input: "$name", regex: "^(a+)+$" } } },
        {
          $expr: { $gt: [{ $size: { $regexFindAll: { input: "$name", regex: "(a|aa)+$" } } }, 0] },
        },
      ]
    ) {
      const t0 = performance.now();
      const res = await api.get(`people?where=${q(JSON.stringify(where))}`);
      const ms = performance.now() - t0;
      assert.equal(res.status, 200, res.text);
      assert.ok(ms < 500, `${JSON.stringify(where)} took ${ms.toFixed(0)} ms`);
      await answersQuickly(api, "people?max_results=1");
    }
    const found = await api.get(
      `people?where=${
        q(JSON.stringify({
          $expr: { $regexMatch: { input: "$name", regex: "^A+$", options: "i" } },
        }))
      }`,
    );
    assert.deepEqual(found.body._items.map((d: Json) => d.name), ["aaa"]);
  },
);

scenario("schema regex rules run in linear time", SETTINGS, async (api) => {
  const t0 = performance.now();
  const res = await api.post("codes", { code: LONG_A });
  const ms = performance.now() - t0;
  assert.equal(res.status, 422, res.text);
  assert.match(JSON.stringify(res.body._issues), /does not match regex/);
  assert.ok(ms < 500, `validation took ${ms.toFixed(0)} ms`);
  assert.equal((await api.post("codes", { code: "aaaa" })).status, 201);
  await answersQuickly(api, "people?max_results=1");
});

Deno.test("schema regex rules the linear-time engine cannot run are refused at start-up", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await assert.rejects(
      createService({
        STORE: "embedded",
        DATA_DIR: dir,
        DOMAIN: { codes: { schema: { code: { type: "string", regex: "(a)\\1" } } } },
      }, { env: false }),
      (e: unknown) =>
        e instanceof SettingsError && /unsupported regular expression/.test(String(e.problems)),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

scenario(
  "an aggregation past QUERY_TIMEOUT_MS answers 503 and the service still answers",
  {
    ...SETTINGS,
    QUERY_TIMEOUT_MS: 50,
    DOMAIN: {
      ...SETTINGS.DOMAIN,
      // A configured pipeline that costs ~1,000 additions per document.
      sums: {
        datasource: {
          source: "people",
          aggregation: {
            pipeline: [
              { $match: { age: { $gte: "$min" } } },
              {
                $addFields: {
                  total: {
                    $reduce: {
                      input: { $range: [0, 1000] },
                      initialValue: 0,
                      in: { $add: ["$$value", "$age"] },
                    },
                  },
                },
              },
              { $group: { _id: null, total: { $sum: "$total" } } },
            ],
          },
        },
      },
    },
  },
  async (api) => {
    const docs = Array.from({ length: 1000 }, (_, i) => ({ name: `p${i}`, age: i }));
    for (let i = 0; i < 3; i++) assert.equal((await api.post("people", docs)).status, 201);
    const res = await api.get(`sums?aggregate=${q('{"$min": 0}')}`);
    assert.equal(res.status, 503, res.text);
    assert.match(res.body._error.message, /QUERY_TIMEOUT_MS/);
    await answersQuickly(api, "people?max_results=1");
  },
  { gaps: ["$project-expressions"] },
);

scenario(
  "a query past QUERY_TIMEOUT_MS answers 503 and the service still answers",
  { ...SETTINGS, QUERY_TIMEOUT_MS: 50 },
  async (api) => {
    const docs = Array.from({ length: 1000 }, (_, i) => ({ name: `p${i}`, age: i }));
    for (let i = 0; i < 3; i++) assert.equal((await api.post("people", docs)).status, 201);
    const heavy = {
      $expr: {
        $gt: [{
          $reduce: {
            input: { $range: [0, 1000] },
            initialValue: 0,
            in: { $add: ["$$value", "$age"] },
          },
        }, -1],
      },
    };
    const res = await api.get(`people?where=${q(JSON.stringify(heavy))}`);
    assert.equal(res.status, 503, res.text);
    assert.match(res.body._error.message, /QUERY_TIMEOUT_MS/);
    await answersQuickly(api, "people?max_results=1");
  },
  { gaps: ["$expr-operators"] },
);

scenario("field names holding a NUL character are a 400 on every store", {
  ...SETTINGS,
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "PUT"],
  IF_MATCH: false,
  DOMAIN: { people: { allow_unknown: true, schema: { name: { type: "string" } } } },
}, async (api) => {
  const nul = "a\u0000b";
  const created = await api.create("people", { name: "Ada" });
  const reads = [
    `people?sort=${q(nul)}`,
    `people?sort=${q(`-${nul}`)}`,
    `people?where=${q(JSON.stringify({ [nul]: 1 }))}`,
    `people?where=${q(JSON.stringify({ name: { $in: [1] }, $or: [{ [nul]: 1 }] }))}`,
    `people?projection=${q(JSON.stringify({ [nul]: 1 }))}`,
    `people/${created._id}?projection=${q(JSON.stringify({ [nul]: 0 }))}`,
  ];
  for (const path of reads) {
    const res = await api.get(path);
    assert.equal(res.status, 400, `${path}: ${res.status} ${res.text}`);
  }
  const writes = [
    await api.post("people", { [nul]: 1 }),
    await api.post("people", { name: "x", nested: { [nul]: 1 } }),
    await api.patch(`people/${created._id}`, { [nul]: 1 }),
    await api.put(`people/${created._id}`, { name: "y", list: [{ [nul]: 1 }] }),
  ];
  for (const res of writes) assert.ok([400, 422].includes(res.status), `${res.status} ${res.text}`);
  await answersQuickly(api, "people");
});
