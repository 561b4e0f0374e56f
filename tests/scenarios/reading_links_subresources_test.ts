/** Reading: HATEOAS links and titles, hateoas switches, sub-resources, additional_lookup. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";

const INVOICE = { owner: { type: "objectid" }, number: { type: "integer" } };

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  IF_MATCH: false,
  DOMAIN: {
    people: {
      resource_title: "folks",
      item_title: "person",
      additional_lookup: { url: 'regex("[a-z]+")', field: "name" },
      schema: { name: { type: "string", unique: true } },
    },
    invoices: { url: 'people/<regex("[a-f0-9]{24}"):owner>/invoices', schema: INVOICE },
    ledger: { datasource: { source: "invoices" }, schema: INVOICE },
    quiet: {
      hateoas: false,
      datasource: { source: "people" },
      schema: { name: { type: "string" } },
    },
  },
};

const HOME = { href: "/", title: "home" };

async function twoOwners(api: Client) {
  const people = await api.post("people", [{ name: "ann" }, { name: "bob" }]);
  assert.equal(people.status, 201, people.text);
  const [ann, bob] = people.body._items.map((p: { _id: string }) => p._id);
  return { ann, bob };
}

scenario(
  "links: collection and item links use resource_title and item_title",
  SETTINGS,
  async (api) => {
    const { ann } = await twoOwners(api);
    const list = await api.get("people?sort=name");
    assert.deepEqual(list.body._links, {
      parent: HOME,
      self: { href: "people?sort=name", title: "folks" },
    });
    assert.deepEqual(list.body._items[0]._links, {
      self: { href: `people/${ann}`, title: "person" },
      parent: HOME,
      collection: { href: "people", title: "folks" },
    });
    const item = await api.get(`people/${ann}`);
    assert.deepEqual(item.body._links, list.body._items[0]._links);
    const ledger = await api.get("ledger");
    assert.deepEqual(ledger.body._links.self, { href: "ledger", title: "ledger" });
    const inv = await api.create(`people/${ann}/invoices`, { number: 1 });
    const entry = await api.get(`ledger/${inv._id}`);
    assert.deepEqual(entry.body._links.self, { href: `ledger/${inv._id}`, title: "ledger" });
  },
);

scenario("links: the home endpoint lists every resource with its title", SETTINGS, async (api) => {
  const res = await api.get("/");
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    _links: {
      child: [
        { href: "people", title: "folks" },
        { href: "people/<owner>/invoices", title: "invoices" },
        { href: "ledger", title: "ledger" },
        { href: "quiet", title: "quiet" },
      ],
      "service-desc": { href: "openapi.json", title: "OpenAPI description" },
      "service-doc": { href: "docs", title: "API docs" },
    },
  });
});

scenario("hateoas false on a resource: no _links on collection or items", SETTINGS, async (api) => {
  const { ann } = await twoOwners(api);
  const list = await api.get("quiet?max_results=1");
  assert.equal(list.status, 200);
  assert.equal(list.body._links, undefined);
  assert.deepEqual(list.body._meta, { page: 1, max_results: 1, total: 2 });
  for (const item of list.body._items) assert.equal(item._links, undefined);
  const item = await api.get(`quiet/${ann}`);
  assert.equal(item.body._links, undefined);
  assert.equal(item.body.name, "ann");
});

scenario("HATEOAS false: no links anywhere", { ...SETTINGS, HATEOAS: false }, async (api) => {
  const { ann } = await twoOwners(api);
  const list = await api.get("people?max_results=1");
  assert.equal(list.body._links, undefined);
  assert.equal(list.body._items[0]._links, undefined);
  assert.equal((await api.get(`people/${ann}`)).body._links, undefined);
  const home = await api.get("/");
  assert.equal(home.status, 200);
  assert.deepEqual(home.body, {});
});

scenario(
  "sub-resource: the URL variable filters reads and is set on POST",
  SETTINGS,
  async (api) => {
    const { ann, bob } = await twoOwners(api);
    const posted = await api.post(`people/${ann}/invoices`, { number: 1 });
    assert.equal(posted.status, 201, posted.text);
    assert.equal(posted.body._links.self.href, `people/${ann}/invoices/${posted.body._id}`);
    await api.create(`people/${ann}/invoices`, { number: 2 });
    await api.create(`people/${bob}/invoices`, { number: 3 });
    const ledger = await api.get("ledger?sort=number");
    assert.deepEqual(ledger.body._items.map((i: { owner: string }) => i.owner), [ann, ann, bob]);
    const anns = await api.get(`people/${ann}/invoices?sort=number`);
    assert.equal(anns.status, 200);
    assert.deepEqual(anns.body._items.map((i: { number: number }) => i.number), [1, 2]);
    assert.equal(anns.body._meta.total, 2);
    assert.deepEqual(anns.body._links.self, {
      href: `people/${ann}/invoices?sort=number`,
      title: "invoices",
    });
    const item = anns.body._items[0];
    assert.deepEqual(item._links, {
      self: { href: `people/${ann}/invoices/${item._id}`, title: "invoice" },
      parent: HOME,
      collection: { href: `people/${ann}/invoices`, title: "invoices" },
    });
    const filtered = await api.get(
      `people/${ann}/invoices?where=${encodeURIComponent('{"number": 3}')}`,
    );
    assert.deepEqual(filtered.body._items, []);
  },
);

scenario("sub-resource: items of another owner are not found", SETTINGS, async (api) => {
  const { ann, bob } = await twoOwners(api);
  const inv = await api.create(`people/${ann}/invoices`, { number: 1 });
  assert.equal((await api.get(`people/${ann}/invoices/${inv._id}`)).status, 200);
  assert.equal((await api.get(`people/${bob}/invoices/${inv._id}`)).status, 404);
  assert.equal((await api.patch(`people/${bob}/invoices/${inv._id}`, { number: 9 })).status, 404);
  assert.equal((await api.delete(`people/${bob}/invoices/${inv._id}`)).status, 404);
  assert.equal((await api.get(`people/${ann}/invoices/${inv._id}`)).body.number, 1);
  assert.equal((await api.get("people/nothex/invoices")).status, 404);
});

scenario(
  "sub-resource: resource DELETE removes only the owner's documents",
  SETTINGS,
  async (api) => {
    const { ann, bob } = await twoOwners(api);
    await api.create(`people/${ann}/invoices`, { number: 1 });
    await api.create(`people/${ann}/invoices`, { number: 2 });
    await api.create(`people/${bob}/invoices`, { number: 3 });
    assert.equal((await api.delete(`people/${ann}/invoices`)).status, 204);
    assert.deepEqual((await api.get(`people/${ann}/invoices`)).body._items, []);
    const left = await api.get("ledger");
    assert.deepEqual(left.body._items.map((i: { number: number }) => i.number), [3]);
  },
);

scenario(
  "additional_lookup: a read-only item endpoint by a unique field",
  SETTINGS,
  async (api) => {
    const { ann } = await twoOwners(api);
    const res = await api.get("people/ann");
    assert.equal(res.status, 200);
    assert.equal(res.body._id, ann);
    assert.equal(res.body.name, "ann");
    assert.ok(res.headers.get("etag") === null, "IF_MATCH false: no ETag");
    assert.deepEqual(res.body._links.self, { href: `people/${ann}`, title: "person" });
    assert.equal((await api.head("people/ann")).status, 200);
    assert.equal((await api.get("people/zed")).status, 404);
    const patch = await api.patch("people/ann", { name: "anna" });
    assert.equal(patch.status, 405);
    assert.equal(patch.headers.get("allow"), "GET, HEAD, OPTIONS");
    assert.equal((await api.delete("people/ann")).status, 405);
    assert.equal(
      (await api.get("people/Ann")).status,
      404,
      "the lookup regex decides what matches",
    );
  },
);
