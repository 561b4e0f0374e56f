/**
 * Reading: how `embedded` finds the referenced documents. One reference is looked up by
 * equality and several by `$in`; both apply the target's read policy (its datasource filter,
 * soft delete and projection, hidden fields removed) and match references through a
 * `data_relation.field` by value. The `embedded` text a resource has seen before is
 * answered alike, and a malformed one is refused every time.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q } from "../support/assertions.ts";
import type { Client } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  IF_MATCH: false,
  DOMAIN: {
    people: {
      item_title: "person",
      soft_delete: true,
      hidden_fields: ["secret"],
      schema: {
        name: { type: "string" },
        code: { type: "string" },
        num: { type: "integer" },
        active: { type: "boolean" },
        secret: { type: "string" },
        address: { type: "dict", schema: { city: { type: "string" } } },
      },
    },
    // A view of the same people: only the active ones, only their names.
    actives: {
      item_title: "active person",
      datasource: { source: "people", filter: { active: true }, projection: { name: 1 } },
      schema: { name: { type: "string" } },
    },
    orders: {
      embedded_fields: ["buyer"],
      schema: {
        n: { type: "integer" },
        buyer: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
        seller: { type: "objectid", data_relation: { resource: "actives", embeddable: true } },
        by_code: {
          type: "string",
          data_relation: { resource: "people", field: "code", embeddable: true },
        },
        by_num: {
          type: "integer",
          data_relation: { resource: "people", field: "num", embeddable: true },
        },
        codes: {
          type: "list",
          schema: {
            type: "string",
            data_relation: { resource: "people", field: "code", embeddable: true },
          },
        },
      },
    },
    // The same orders without default embedding: the same `embedded` text asks for less.
    bare: {
      datasource: { source: "orders" },
      schema: {
        n: { type: "integer" },
        buyer: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
        seller: { type: "objectid", data_relation: { resource: "actives", embeddable: true } },
      },
    },
  },
};

interface Seeded {
  ann: string;
  bob: string;
  cid: string;
  order: string;
}

async function seed(api: Client): Promise<Seeded> {
  const people = await api.post("people", [
    { name: "ann", code: "A-1", num: 1, active: true, secret: "ann-s", address: { city: "Oslo" } },
    { name: "bob", code: "B-2", num: 2, active: false, secret: "bob-s" },
    { name: "cid", code: "C-3", num: 3, active: true, secret: "cid-s" },
  ]);
  assert.equal(people.status, 201, people.text);
  const [ann, bob, cid] = people.body._items.map((p: { _id: string }) => p._id);
  const order = await api.create("orders", {
    n: 1,
    buyer: ann,
    seller: cid,
    by_code: "B-2",
    by_num: 3,
    codes: ["C-3", "A-1", "C-3"],
  });
  return { ann, bob, cid, order: order._id };
}

const embed = (fields: Record<string, number>) => q(JSON.stringify(fields));

scenario(
  "embedded lookup: one reference is embedded with the target's policy, hidden fields out",
  SETTINGS,
  async (api) => {
    const s = await seed(api);
    const res = await api.get(`orders/${s.order}?embedded=${embed({ buyer: 1 })}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.buyer._id, s.ann);
    assert.equal(res.body.buyer.name, "ann");
    assert.deepEqual(res.body.buyer.address, { city: "Oslo" });
    assert.equal("secret" in res.body.buyer, false, "a hidden field is never embedded");
    assert.doesNotMatch(res.text, /ann-s/);
    // The view's projection and filter: cid is active and shows only her name.
    const seller = await api.get(`orders/${s.order}?embedded=${embed({ seller: 1 })}`);
    assert.equal(seller.body.seller._id, s.cid);
    assert.equal(seller.body.seller.name, "cid");
    assert.equal("code" in seller.body.seller, false, "the view's projection applies");
    // Two more orders for the pages below (named before cid leaves the view).
    const other = await api.post("people", { name: "dan", active: true });
    await api.create("orders", { n: 2, buyer: other.body._id, seller: other.body._id });
    await api.create("orders", { n: 3, buyer: other.body._id, seller: s.cid });
    // Once cid is inactive, the view holds her no more: nothing is embedded (null).
    assert.equal((await api.patch(`people/${s.cid}`, { active: false })).status, 200);
    const inactive = await api.get(`orders/${s.order}?embedded=${embed({ seller: 1 })}`);
    assert.equal(inactive.status, 200);
    assert.equal(inactive.body.seller, null, "the view's filter applies");
    // A soft-deleted target is not embedded (null), as with several references.
    assert.equal((await api.delete(`people/${s.ann}`)).status, 204);
    const gone = await api.get(`orders/${s.order}?embedded=${embed({ buyer: 1 })}`);
    assert.equal(gone.status, 200);
    assert.equal(gone.body.buyer, null);
    // Pages: one reference across the page (every order names ann) and several alike.
    const page = await api.get(`orders?sort=n&embedded=${embed({ buyer: 1, seller: 1 })}`);
    assert.equal(page.status, 200);
    const name = (p: { name: string } | null) => p?.name ?? null;
    assert.deepEqual(page.body._items.map((o: { buyer: null }) => name(o.buyer)), [
      null,
      "dan",
      "dan",
    ]);
    assert.deepEqual(page.body._items.map((o: { seller: null }) => name(o.seller)), [
      null,
      "dan",
      null,
    ]);
  },
);

scenario(
  "embedded lookup: references through another field match by value",
  SETTINGS,
  async (api) => {
    const s = await seed(api);
    const res = await api.get(
      `orders/${s.order}?embedded=${embed({ by_code: 1, by_num: 1, codes: 1 })}`,
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.by_code._id, s.bob);
    assert.equal(res.body.by_code.code, "B-2");
    assert.equal(res.body.by_num._id, s.cid);
    assert.equal(res.body.by_num.num, 3);
    assert.deepEqual(res.body.codes.map((p: { name: string }) => p.name), ["cid", "ann", "cid"]);
    for (const person of [res.body.by_code, res.body.by_num, ...res.body.codes]) {
      assert.equal("secret" in person, false);
    }
    // Once no document holds the value, the reference becomes null.
    assert.equal((await api.patch(`people/${s.bob}`, { code: "Z-9", num: 9 })).status, 200);
    assert.equal((await api.patch(`people/${s.cid}`, { num: 4 })).status, 200);
    const none = await api.get(`orders/${s.order}?embedded=${embed({ by_code: 1, by_num: 1 })}`);
    assert.equal(none.status, 200);
    assert.equal(none.body.by_code, null);
    assert.equal(none.body.by_num, null);
    // The soft-deleted document named by value is not embedded.
    assert.equal((await api.patch(`orders/${s.order}`, { by_code: "C-3" })).status, 200);
    assert.equal((await api.delete(`people/${s.cid}`)).status, 204);
    const deleted = await api.get(`orders/${s.order}?embedded=${embed({ by_code: 1, codes: 1 })}`);
    assert.equal(deleted.body.by_code, null);
    assert.deepEqual(
      deleted.body.codes.map((p: { name: string } | null) => p?.name ?? null),
      [null, "ann", null],
    );
  },
);

scenario(
  "embedded lookup: a text seen before is answered alike, per resource; malformed is 400",
  SETTINGS,
  async (api) => {
    const s = await seed(api);
    const text = embed({ seller: 1 });
    for (let round = 0; round < 3; round++) {
      // `orders` embeds `buyer` by default: the same text embeds both there, `seller` alone
      // on `bare`.
      const orders = await api.get(`orders/${s.order}?embedded=${text}`);
      assert.equal(orders.body.buyer.name, "ann", `round ${round}`);
      assert.equal(orders.body.seller.name, "cid", `round ${round}`);
      const bare = await api.get(`bare/${s.order}?embedded=${text}`);
      assert.equal(bare.body.buyer, s.ann, `round ${round}`);
      assert.equal(bare.body.seller.name, "cid", `round ${round}`);
      const optOut = await api.get(`orders/${s.order}?embedded=${embed({ buyer: 0 })}`);
      assert.equal(optOut.body.buyer, s.ann, `round ${round}`);
      const plain = await api.get(`orders/${s.order}`);
      assert.equal(plain.body.buyer.name, "ann", `round ${round}`);
      assert.equal(plain.body.seller, s.cid, `round ${round}`);
      for (const path of [`orders/${s.order}`, "orders", `bare/${s.order}`]) {
        const bad = await api.get(`${path}?embedded=${q('{"seller": 1')}`);
        assert.equal(bad.status, 400, `round ${round}: ${path}`);
        assert.match(bad.body._error.message, /Unable to parse `embedded` clause/);
      }
    }
  },
);

scenario(
  "an id within $and is looked up, and the rest of the filter still applies",
  SETTINGS,
  async (api) => {
    const s = await seed(api);
    const where = (filter: unknown) => `people?where=${q(JSON.stringify(filter))}`;
    const names = (res: { body: { _items: Array<{ name: string }> } }) =>
      res.body._items.map((p) => p.name);
    const both = await api.get(where({ $and: [{ _id: s.ann }, { name: "ann" }] }));
    assert.equal(both.status, 200, both.text);
    assert.deepEqual(names(both), ["ann"]);
    const other = await api.get(where({ $and: [{ _id: s.ann }, { name: "bob" }] }));
    assert.deepEqual(names(other), []);
    const twoIds = await api.get(where({ $and: [{ name: "ann" }, { _id: s.bob }] }));
    assert.deepEqual(names(twoIds), []);
    const sorted = await api.get(
      `${where({ $and: [{ _id: s.cid }, { active: true }] })}&sort=-name`,
    );
    assert.deepEqual(names(sorted), ["cid"]);
    // Item reads of a soft-deletable resource look up the id and the live flag.
    assert.equal((await api.patch(`people/${s.bob}`, { name: "rob" })).status, 200);
    assert.equal((await api.delete(`people/${s.bob}`)).status, 204);
    const gone = await api.get(`people/${s.bob}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.name, "rob", "as in Eve, the 404 carries the deleted document");
    const live = await api.get(where({ $and: [{ _id: s.bob }, { name: "rob" }] }));
    assert.deepEqual(names(live), [], "a soft-deleted document is not listed");
    const shown = await api.get(
      `${where({ $and: [{ _id: s.bob }, { name: "rob" }] })}&show_deleted=true`,
    );
    assert.deepEqual(names(shown), ["rob"]);
  },
);

scenario(
  "embedding a top-level list of references leaves the stored references as they were",
  SETTINGS,
  async (api) => {
    const s = await seed(api);
    await api.create("orders", { n: 2, buyer: s.bob, codes: ["A-1", "B-2"] });
    const asked = embed({ codes: 1, buyer: 1 });
    for (let round = 0; round < 2; round++) {
      const item = await api.get(`orders/${s.order}?embedded=${asked}`);
      assert.equal(item.status, 200, item.text);
      assert.deepEqual(item.body.codes.map((p: { name: string }) => p.name), [
        "cid",
        "ann",
        "cid",
      ]);
      const page = await api.get(`orders?sort=n&embedded=${asked}`);
      assert.deepEqual(
        page.body._items.map((o: { codes: Array<{ name: string }> }) => o.codes.map((p) => p.name)),
        [["cid", "ann", "cid"], ["ann", "bob"]],
      );
      assert.deepEqual(page.body._items.map((o: { buyer: { name: string } }) => o.buyer.name), [
        "ann",
        "bob",
      ]);
    }
    // Reads without embedding still see the references (ids and codes), not documents.
    const plain = await api.get(`orders/${s.order}?embedded=${embed({ buyer: 0 })}`);
    assert.deepEqual(plain.body.codes, ["C-3", "A-1", "C-3"]);
    assert.equal(plain.body.buyer, s.ann);
    const bare = await api.get("bare?sort=n");
    assert.deepEqual(bare.body._items.map((o: { buyer: string }) => o.buyer), [s.ann, s.bob]);
    const list = await api.get(`orders?sort=n&embedded=${embed({ buyer: 0 })}`);
    assert.deepEqual(list.body._items.map((o: { codes: string[] }) => o.codes), [
      ["C-3", "A-1", "C-3"],
      ["A-1", "B-2"],
    ]);
  },
);
