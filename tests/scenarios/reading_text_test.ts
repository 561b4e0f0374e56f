/**
 * Searching text: a `where` with `$text` reads the resource's text index (declared in
 * `mongo_indexes`) as MongoDB does, on both stores: stemmed terms, phrases, negations, the
 * page's total.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    articles: {
      schema: { title: { type: "string" }, body: { type: "string" } },
      mongo_indexes: {
        words: [[["title", "text"], ["body", "text"]], { weights: { title: 3 } }],
      },
    },
    plain: { schema: { title: { type: "string" } } },
  },
};

async function search(api: Client, text: string, resource = "articles") {
  const where = encodeURIComponent(JSON.stringify({ $text: { $search: text } }));
  return await api.get(`${resource}?where=${where}&sort=title`);
}

scenario("a $text where finds stemmed terms, phrases, and leaves out negations", SETTINGS, async (
  api,
) => {
  const posted = await api.post("articles", [
    { title: "Running shoes", body: "Great for runners" },
    { title: "Cooking", body: "Pasta recipes from the café" },
    { title: "Shoe care", body: "Polish, don't scrub" },
  ]);
  assert.equal(posted.status, 201, posted.text);
  const titles = async (text: string) => {
    const res = await search(api, text);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body._meta.total, res.body._items.length);
    return res.body._items.map((a: { title: string }) => a.title);
  };
  assert.deepEqual(await titles("run"), ["Running shoes"]);
  assert.deepEqual(await titles("shoes -polish"), ["Running shoes"]);
  assert.deepEqual(await titles('"pasta recipes" cafe'), ["Cooking"]);
  assert.deepEqual(await titles("the"), []);
}, { gaps: ["$text"] });

scenario("a $text where on a resource without a text index is answered 400", SETTINGS, async (
  api,
) => {
  await api.post("plain", { title: "Running shoes" });
  const res = await search(api, "run", "plain");
  assert.equal(res.status, 400, res.text);
  assert.match(res.body._error.message, /text index required/);
}, { gaps: ["$text"] });

scenario("an aggregation endpoint searches text in its first $match, its filter joined", {
  ...SETTINGS,
  DOMAIN: {
    ...SETTINGS.DOMAIN,
    published: {
      datasource: {
        source: "articles",
        filter: { draft: { $ne: true } },
        aggregation: {
          pipeline: [
            { $match: { $text: { $search: "$words" } } },
            { $project: { _id: 0, title: 1 } },
            { $sort: { title: 1 } },
          ],
        },
      },
    },
  },
}, async (api, running) => {
  const posted = await api.post("articles", [
    { title: "Running shoes", body: "Great for runners" },
    { title: "Running tips", body: "Keep going" },
  ]);
  assert.equal(posted.status, 201, posted.text);
  // A draft, written by another program: the endpoint's filter leaves it out.
  await running.service.store.collection("articles").insertMany([
    { title: "Running drafts", body: "unfinished", draft: true },
  ]);
  const res = await api.get(`published?aggregate=${encodeURIComponent('{"$words": "run"}')}`);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body._items.map((a: { title: string }) => a.title), [
    "Running shoes",
    "Running tips",
  ]);
}, { gaps: ["$text"] });

scenario("an aggregation endpoint answers a search by relevance (textScore)", {
  ...SETTINGS,
  DOMAIN: {
    ...SETTINGS.DOMAIN,
    search: {
      datasource: {
        source: "articles",
        aggregation: {
          pipeline: [
            { $match: { $text: { $search: "$words" } } },
            { $sort: { score: { $meta: "textScore" } } },
            { $project: { _id: 0, title: 1, score: { $meta: "textScore" } } },
          ],
        },
      },
    },
  },
}, async (api) => {
  const posted = await api.post("articles", [
    { title: "Shoes", body: "Shoes for every runner: shoes" },
    { title: "Running shoes", body: "Great for runners" },
    { title: "Cooking", body: "Pasta" },
  ]);
  assert.equal(posted.status, 201, posted.text);
  const res = await api.get(`search?aggregate=${encodeURIComponent('{"$words": "shoe"}')}`);
  assert.equal(res.status, 200, res.text);
  const items = res.body._items as Array<{ title: string; score: number }>;
  assert.deepEqual(items.map((a) => a.title), ["Shoes", "Running shoes"]);
  assert.ok(items[0].score > items[1].score, JSON.stringify(items));
}, { gaps: ["$text"] });

scenario("a hostile $text search is answered at once, never a 500", SETTINGS, async (api) => {
  await api.post("articles", { title: "Running shoes", body: "Great for runners" });
  const where = (text: unknown) =>
    api.get(`articles?where=${encodeURIComponent(JSON.stringify({ $text: text }))}`);
  const noisy = '"-" -"" ""- \u0000 \uFFFF'.repeat(300).slice(0, 3_000);
  const started = performance.now();
  const res = await where({ $search: noisy });
  assert.equal(res.status, 200, res.text);
  assert.ok(performance.now() - started < 10_000, "a noisy search took too long");
  for (const text of [{ $search: { $gt: "" } }, { $search: "a", $language: "__proto__" }, "run"]) {
    const refused = await where(text);
    assert.equal(refused.status, 400, `${JSON.stringify(text)}: ${refused.text}`);
  }
}, { gaps: ["$text"] });
