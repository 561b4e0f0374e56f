/**
 * The cache of returned items' JSON text (src/services/item_text.ts) changes no answer: every
 * read is answered byte for byte as without it (compared with the cache off), whatever the
 * projection, endpoint path, soft delete, IF_MATCH, HATEOAS, versioning or embedding, after
 * writes too (to embedded documents as well); and it answers from cached texts on the
 * embedded store only (MongoDB returns fresh documents).
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Answer, Client } from "../support/client.ts";
import { itemTextHits, setItemTextCaching } from "../../src/services/item_text.ts";

const PERSON = {
  name: { type: "string" },
  age: { type: "integer" },
  secret: { type: "string" },
  born: { type: "datetime" },
  tags: { type: "list" },
  address: { type: "dict", schema: { city: { type: "string" } } },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  SOFT_DELETE: true,
  PAGINATION_DEFAULT: 3,
  JSONP_ARGUMENT: "callback",
  DOMAIN: {
    people: {
      schema: PERSON,
      hidden_fields: ["secret"],
      additional_lookup: { url: 'regex("p[0-9]+")', field: "name" },
    },
    // The same documents under other rules: each must get its own text, never another's.
    named: { datasource: { source: "people", projection: { name: 1 } }, schema: PERSON },
    quiet: { hateoas: false, datasource: { source: "people" }, schema: PERSON },
    loose: { if_match: false, datasource: { source: "people" }, schema: PERSON },
    invoices: {
      url: 'people/<regex("[a-f0-9]{24}"):owner>/invoices',
      schema: { owner: { type: "objectid" }, number: { type: "integer" } },
    },
    // Embedding: an item's text also depends on the documents embedded into it.
    orders: {
      versioning: true,
      schema: {
        buyer: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
        seller: { type: "objectid", data_relation: { resource: "named", embeddable: true } },
        helpers: {
          type: "list",
          schema: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
        },
        note: { type: "string" },
      },
    },
  },
};

const embedded = (e: Record<string, number>) => `embedded=${encodeURIComponent(JSON.stringify(e))}`;

const projection = (p: Record<string, number>) =>
  `projection=${encodeURIComponent(JSON.stringify(p))}`;

/** GETs `path` with the cache off, then twice with it on; all three must be the same bytes. */
async function sameAnswers(api: Client, path: string, headers?: Record<string, string>) {
  setItemTextCaching(false);
  let plain: Answer;
  try {
    plain = await api.get(path, headers);
  } finally {
    setItemTextCaching(true);
  }
  const first = await api.get(path, headers);
  const again = await api.get(path, headers);
  for (const answer of [first, again]) {
    assert.equal(answer.status, plain.status, path);
    assert.equal(answer.text, plain.text, path);
    assert.deepEqual(fieldsOf(answer), fieldsOf(plain), path);
  }
  return again;
}

/** The answer's header fields, but those naming the time of the answer (Date, Expires). */
function fieldsOf(answer: Answer): Array<[string, string]> {
  return [...answer.headers].filter(([name]) => name !== "date" && name !== "expires");
}

/** DELETEs the item at `path` with the ETag it is read with now. */
async function deleteAsRead(api: Client, path: string) {
  const current = await api.get(path);
  const deleted = await api.delete(path, { "if-match": current.headers.get("etag")! });
  assert.equal(deleted.status, 204, deleted.text);
}

async function seed(api: Client) {
  const docs = Array.from({ length: 7 }, (_, n) => ({
    name: `p${n}`,
    age: 20 + n,
    secret: `s${n}`,
    born: "Tue, 02 Apr 2013 10:29:13 GMT",
    tags: ["a", `t${n}`],
    address: { city: `c${n}` },
  }));
  const res = await api.post("people", docs);
  assert.equal(res.status, 201, res.text);
  const ids: string[] = res.body._items.map((p: { _id: string }) => p._id);
  const inv = await api.post(`people/${ids[0]}/invoices`, [{ number: 1 }, { number: 2 }]);
  assert.equal(inv.status, 201, inv.text);
  return ids;
}

scenario(
  "item text cache: every read answers the same bytes as without it",
  SETTINGS,
  async (api, running) => {
    const ids = await seed(api);
    const hitsBefore = itemTextHits();
    const paths = [
      "people",
      "people?page=2",
      "people?page=3",
      `people?where=${encodeURIComponent(JSON.stringify({ age: { $gt: 22 } }))}`,
      `people?${projection({ name: 1 })}`,
      `people?${projection({ age: 0 })}`,
      `people?${projection({ secret: 1, name: 1 })}`,
      "people?max_results=25",
      "named",
      "quiet",
      "loose",
      `people/${ids[1]}`,
      `people/${ids[1]}?${projection({ name: 1 })}`,
      "people/p4",
      `named/${ids[1]}`,
      `quiet/${ids[1]}`,
      `loose/${ids[1]}`,
      `people/${ids[0]}/invoices`,
      "invoices",
      "people?pretty",
      "people?callback=cb",
      `people/${ids[2]}?callback=cb`,
    ];
    for (const path of paths) await sameAnswers(api, path);
    // Other renderings of the same documents, after their compact texts were cached.
    await sameAnswers(api, "people", { accept: "application/xml" });
    await sameAnswers(api, `people/${ids[1]}`, { accept: "application/xml" });
    const hidden = await sameAnswers(api, "people?max_results=25");
    assert.ok(!hidden.text.includes("secret"), "a hidden field is never shown");
    const named = await sameAnswers(api, `named/${ids[1]}`);
    assert.deepEqual(Object.keys(named.body).filter((k) => !k.startsWith("_")), ["name"]);
    const quiet = await sameAnswers(api, `quiet/${ids[1]}`);
    assert.equal(quiet.body._links, undefined);
    const loose = await sameAnswers(api, `loose/${ids[1]}`);
    assert.equal(loose.body._etag, undefined);
    const sub = await sameAnswers(api, `people/${ids[0]}/invoices`);
    assert.match(sub.body._items[0]._links.self.href, new RegExp(`^people/${ids[0]}/invoices/`));

    // A write replaces the stored document: the next read shows the new value.
    const item = await api.get(`people/${ids[1]}`);
    const patched = await api.patch(`people/${ids[1]}`, { age: 99 }, {
      "if-match": item.headers.get("etag")!,
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await sameAnswers(api, `people/${ids[1]}`)).body.age, 99);
    const page = await sameAnswers(api, "people?max_results=25");
    assert.equal(page.body._items.find((p: { _id: string }) => p._id === ids[1]).age, 99);
    // A soft delete: the item answers 404 (with the document), pages leave it out or flag it.
    await deleteAsRead(api, `people/${ids[2]}`);
    assert.equal((await sameAnswers(api, `people/${ids[2]}`)).status, 404);
    const shown = await sameAnswers(api, "people?max_results=25&show_deleted");
    assert.equal(shown.body._items.find((p: { _id: string }) => p._id === ids[2])._deleted, true);
    const live = await sameAnswers(api, "people?max_results=25");
    assert.ok(!live.body._items.some((p: { _id: string }) => p._id === ids[2]));
    // The deleted document's text was cached by the page showing it: its item is still a 404.
    assert.equal((await sameAnswers(api, `people/${ids[2]}`)).status, 404);
    // Conditional reads of cached items: 304 on the ETag or the date, 200 on another ETag.
    const cached = await sameAnswers(api, `people/${ids[3]}`);
    const etag = cached.headers.get("etag")!;
    const modified = cached.headers.get("last-modified")!;
    const conditionals: Record<string, string>[] = [
      { "if-none-match": etag },
      { "if-modified-since": modified },
    ];
    for (const conditional of conditionals) {
      assert.equal((await sameAnswers(api, `people/${ids[3]}`, conditional)).status, 304);
      assert.equal((await sameAnswers(api, "people/p3", conditional)).status, 304);
    }
    const other = await sameAnswers(api, `people/${ids[3]}`, { "if-none-match": '"other"' });
    assert.equal(other.status, 200);
    assert.equal(
      (await sameAnswers(api, `people/${ids[2]}`, { "if-none-match": "*" })).status,
      304,
    );
    for (const path of paths) await sameAnswers(api, path);

    // Items with embedded documents: the same bytes, and a write to an embedded document (or
    // its removal) shows in the next read of every item embedding it.
    const posted = await api.post("orders", [
      { buyer: ids[4], seller: ids[5], helpers: [ids[4], ids[6]], note: "n1" },
      { buyer: ids[4], note: "n2" },
    ]);
    assert.equal(posted.status, 201, posted.text);
    const orders: string[] = posted.body._items.map((o: { _id: string }) => o._id);
    const embeddedPaths = (order: string) => [
      `orders/${order}?${embedded({ buyer: 1 })}`,
      `orders/${order}?${embedded({ buyer: 1, seller: 1 })}`,
      `orders/${order}?${embedded({ seller: 1, buyer: 1 })}`,
      `orders/${order}?${embedded({ helpers: 1 })}`,
      `orders/${order}?${embedded({ note: 1 })}`,
      `orders/${order}?${embedded({ buyer: 1 })}&${projection({ buyer: 1 })}`,
      `orders/${order}`,
    ];
    const buyerAge = async (order: string) =>
      (await sameAnswers(api, `orders/${order}?${embedded({ buyer: 1 })}`)).body.buyer?.age;
    for (const order of orders) {
      for (const path of embeddedPaths(order)) await sameAnswers(api, path);
    }
    assert.equal(await buyerAge(orders[0]), 24);
    const seller = await sameAnswers(api, `orders/${orders[0]}?${embedded({ seller: 1 })}`);
    assert.deepEqual(Object.keys(seller.body.seller).filter((k) => !k.startsWith("_")), ["name"]);
    assert.ok(!seller.text.includes("secret"), "a hidden field is never shown");
    const buyer = await api.get(`people/${ids[4]}`);
    const edited = await api.patch(`people/${ids[4]}`, { age: 77 }, {
      "if-match": buyer.headers.get("etag")!,
    });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(await buyerAge(orders[0]), 77);
    assert.equal(await buyerAge(orders[1]), 77);
    const helpers = await sameAnswers(api, `orders/${orders[0]}?${embedded({ helpers: 1 })}`);
    assert.equal(helpers.body.helpers[0].age, 77);
    // An order read with and without embedding keeps both texts.
    const hitsMixed = itemTextHits();
    for (let n = 0; n < 3; n++) {
      await api.get(`orders/${orders[1]}`);
      await api.get(`orders/${orders[1]}?${embedded({ buyer: 1 })}`);
    }
    if (running.kind === "embedded") assert.ok(itemTextHits() - hitsMixed >= 4);
    // A versioned item: its current text after an edit; its versions, never cached.
    const order = await api.get(`orders/${orders[1]}`);
    const noted = await api.patch(`orders/${orders[1]}`, { note: "n3" }, {
      "if-match": order.headers.get("etag")!,
    });
    assert.equal(noted.status, 200, noted.text);
    assert.equal((await sameAnswers(api, `orders/${orders[1]}`)).body._version, 2);
    assert.equal(
      (await sameAnswers(api, `orders/${orders[1]}?${embedded({ buyer: 1 })}`)).body
        .note,
      "n3",
    );
    for (const version of ["1", "2", "all", "diffs"]) {
      await sameAnswers(api, `orders/${orders[1]}?version=${version}`);
    }
    assert.equal((await sameAnswers(api, `orders/${orders[1]}?version=1`)).body.note, "n2");
    const ordersPage = await sameAnswers(api, "orders?max_results=25");
    assert.deepEqual(ordersPage.body._items.map((o: { _version: number }) => o._version), [1, 2]);
    // Soft-deleted: no longer embedded.
    await deleteAsRead(api, `people/${ids[4]}`);
    const gone = await sameAnswers(api, `orders/${orders[0]}?${embedded({ buyer: 1 })}`);
    assert.equal(gone.body.buyer, null);
    for (const order of orders) {
      for (const path of embeddedPaths(order)) await sameAnswers(api, path);
    }

    // Only the embedded store hands out stored documents whose identity stands for their content.
    const hits = itemTextHits() - hitsBefore;
    if (running.kind === "embedded") assert.ok(hits > 100, `cached texts served: ${hits}`);
    else assert.equal(hits, 0);
  },
);

scenario("item text cache: a hard DELETE answers 404 after cached reads", {
  ...SETTINGS,
  SOFT_DELETE: false,
}, async (api) => {
  const ids = await seed(api);
  await sameAnswers(api, `people/${ids[3]}`);
  await sameAnswers(api, "people?max_results=25");
  await deleteAsRead(api, `people/${ids[3]}`);
  assert.equal((await sameAnswers(api, `people/${ids[3]}`)).status, 404);
  const page = await sameAnswers(api, "people?max_results=25");
  assert.equal(page.body._items.length, 6);
});
