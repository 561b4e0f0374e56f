/**
 * A page's total (`_meta.total`, `X-Total-Count`) follows every write between two reads of the
 * same query, on both stores (the embedded store remembers counts until its documents change).
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  PAGINATION_DEFAULT: 2,
  DOMAIN: {
    people: { schema: { name: { type: "string" }, age: { type: "integer" } } },
    adults: {
      datasource: { source: "people", filter: { age: { $gte: 18 } } },
      schema: { name: { type: "string" }, age: { type: "integer" } },
    },
  },
};

const where = (w: Record<string, unknown>) => `where=${encodeURIComponent(JSON.stringify(w))}`;

async function totals(api: Client): Promise<number[]> {
  const paths = [`people?${where({ age: { $gt: 30 } })}`, "adults", "people"];
  const out: number[] = [];
  for (const path of paths) {
    for (const page of [1, 2]) {
      const res = await api.get(`${path}${path.includes("?") ? "&" : "?"}page=${page}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get("x-total-count"), String(res.body._meta.total));
      if (page === 1) out.push(res.body._meta.total);
      else assert.equal(res.body._meta.total, out[out.length - 1]);
    }
  }
  return out;
}

scenario("page totals follow every write", SETTINGS, async (api) => {
  const posted = await api.post("people", [
    { name: "a", age: 10 },
    { name: "b", age: 20 },
    { name: "c", age: 40 },
  ]);
  assert.equal(posted.status, 201, posted.text);
  const [, b, c] = posted.body._items.map((i: { _id: string }) => i._id);
  assert.deepEqual(await totals(api), [1, 2, 3]);
  assert.equal((await api.post("people", { name: "d", age: 50 })).status, 201);
  assert.deepEqual(await totals(api), [2, 3, 4]);
  const item = await api.get(`people/${b}`);
  const aged = await api.patch(`people/${b}`, { age: 35 }, {
    "if-match": item.headers.get("etag")!,
  });
  assert.equal(aged.status, 200, aged.text);
  assert.deepEqual(await totals(api), [3, 3, 4]);
  const gone = await api.get(`people/${c}`);
  const deleted = await api.delete(`people/${c}`, { "if-match": gone.headers.get("etag")! });
  assert.equal(deleted.status, 204, deleted.text);
  assert.deepEqual(await totals(api), [2, 2, 3]);
});
