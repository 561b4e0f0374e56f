/** Reading: `embedded` (data_relation expansion), embedded_fields, switches, related links. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q } from "../support/assertions.ts";
import type { Client } from "../support/client.ts";
import { stubOperation } from "../support/store_stub.ts";

const REF = { type: "objectid", data_relation: { resource: "people", embeddable: true } };
const INVOICE = {
  number: { type: "integer" },
  person: REF,
  reviewers: { type: "list", schema: REF },
  meta: { type: "dict", schema: { approver: REF } },
  plain: { type: "objectid", data_relation: { resource: "people" } },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "DELETE"],
  IF_MATCH: false,
  DOMAIN: {
    people: { item_title: "person", schema: { name: { type: "string" } } },
    invoices: { schema: INVOICE },
    auto: { schema: INVOICE, embedded_fields: ["person"], datasource: { source: "invoices" } },
    flat: { schema: INVOICE, embedding: false, datasource: { source: "invoices" } },
  },
};

interface Seeded {
  ann: string;
  bob: string;
  cid: string;
  invoice: string;
}

async function seed(api: Client): Promise<Seeded> {
  const people = await api.post("people", [{ name: "ann" }, { name: "bob" }, { name: "cid" }]);
  assert.equal(people.status, 201, people.text);
  const [ann, bob, cid] = people.body._items.map((p: { _id: string }) => p._id);
  const invoice = await api.create("invoices", {
    number: 1,
    person: ann,
    reviewers: [bob, cid, ann],
    meta: { approver: cid },
    plain: bob,
  });
  return { ann, bob, cid, invoice: invoice._id };
}

scenario("embedded: a reference becomes the referenced document", SETTINGS, async (api) => {
  const s = await seed(api);
  const plainRes = await api.get(`invoices/${s.invoice}`);
  assert.equal(plainRes.body.person, s.ann);
  const item = await api.get(`invoices/${s.invoice}?embedded=${q('{"person": 1}')}`);
  assert.equal(item.status, 200);
  assert.equal(item.body.person._id, s.ann);
  assert.equal(item.body.person.name, "ann");
  assert.match(item.body.person._etag, /^[a-f0-9]{40}$/);
  assert.equal(item.body.reviewers[0], s.bob, "fields not asked stay references");
  const list = await api.get(`invoices?embedded=${q('{"person": 1}')}`);
  assert.equal(list.body._items[0].person.name, "ann");
});

scenario(
  "embedded: lists of references and dotted paths to nested references",
  SETTINGS,
  async (api) => {
    const s = await seed(api);
    const res = await api.get(
      `invoices/${s.invoice}?embedded=${q('{"reviewers": 1, "meta.approver": 1}')}`,
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.reviewers.map((p: { name: string }) => p.name), [
      "bob",
      "cid",
      "ann",
    ]);
    assert.equal(res.body.meta.approver.name, "cid");
    assert.equal(res.body.person, s.ann);
  },
);

scenario("embedded: unresolved references become null", SETTINGS, async (api) => {
  const s = await seed(api);
  assert.equal((await api.delete(`people/${s.cid}`)).status, 204);
  const res = await api.get(
    `invoices/${s.invoice}?embedded=${q('{"reviewers": 1, "meta.approver": 1}')}`,
  );
  assert.equal(res.status, 200);
  assert.equal(res.body.reviewers[0].name, "bob");
  assert.equal(res.body.reviewers[1], null);
  assert.equal(res.body.reviewers[2].name, "ann");
  assert.equal(res.body.meta.approver, null);
});

scenario(
  "embedded: non-embeddable and unknown fields are ignored (as Eve); malformed is 400",
  SETTINGS,
  async (api) => {
    const s = await seed(api);
    for (const field of ["plain", "number", "nothing", "person.name"]) {
      const res = await api.get(`invoices/${s.invoice}?embedded=${q(`{"${field}": 1}`)}`);
      assert.equal(res.status, 200, field);
      assert.equal(res.body.plain, s.bob, field);
      assert.equal(res.body.person, s.ann, field);
    }
    const list = await api.get(`invoices?embedded=${q('{"plain": 1, "person": 1}')}`);
    assert.equal(list.body._items[0].plain, s.bob);
    assert.equal(list.body._items[0].person.name, "ann", "embeddable fields still embed");
    // As in Eve, an `embedded` that is not a JSON object is 400; values other than 0 and 1
    // are ignored.
    for (const raw of ["{'person': 1}", '{"person": 1', "not-a-dict", "[1]"]) {
      for (const path of [`invoices/${s.invoice}`, "invoices"]) {
        const res = await api.get(`${path}?embedded=${q(raw)}`);
        assert.equal(res.status, 400, raw);
        assert.match(res.body._error.message, /Unable to parse `embedded` clause/);
      }
    }
    const two = await api.get(`invoices/${s.invoice}?embedded=${q('{"person": 2}')}`);
    assert.equal(two.status, 200);
    assert.equal(two.body.person, s.ann);
  },
);

scenario("embedded_fields: embedded by default, {field: 0} opts out", SETTINGS, async (api) => {
  const s = await seed(api);
  const auto = await api.get(`auto/${s.invoice}`);
  assert.equal(auto.body.person.name, "ann");
  const list = await api.get("auto");
  assert.equal(list.body._items[0].person.name, "ann");
  const optOut = await api.get(`auto/${s.invoice}?embedded=${q('{"person": 0}')}`);
  assert.equal(optOut.body.person, s.ann);
  const more = await api.get(`auto/${s.invoice}?embedded=${q('{"reviewers": 1}')}`);
  assert.equal(more.body.person.name, "ann");
  assert.equal(more.body.reviewers[0].name, "bob");
});

scenario("embedding false on a resource ignores embedded requests", SETTINGS, async (api) => {
  const s = await seed(api);
  const asked = await api.get(`flat/${s.invoice}?embedded=${q('{"person": 1}')}`);
  assert.equal(asked.status, 200);
  assert.equal(asked.body.person, s.ann);
  const res = await api.get(`flat/${s.invoice}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.person, s.ann);
});

scenario(
  "EMBEDDING false turns embedding off globally",
  { ...SETTINGS, EMBEDDING: false },
  async (api) => {
    const s = await seed(api);
    const asked = await api.get(`invoices?embedded=${q('{"person": 1}')}`);
    assert.equal(asked.status, 200);
    assert.equal(asked.body._items[0].person, s.ann);
    const auto = await api.get(`auto/${s.invoice}`);
    assert.equal(auto.status, 200);
    assert.equal(auto.body.person, s.ann, "embedded_fields do nothing when embedding is off");
  },
);

scenario("embedded: one query per relation per page", SETTINGS, async (api, running) => {
  const s = await seed(api);
  await api.post("invoices", [
    { number: 2, person: s.bob, reviewers: [s.ann] },
    { number: 3, person: s.cid, reviewers: [s.bob, s.cid] },
    { number: 4, person: s.ann },
  ]);
  let peopleFinds = 0;
  const counted = (original: (...a: unknown[]) => Promise<unknown>, args: unknown[]) => {
    peopleFinds++;
    return original(...args);
  };
  const restores = [
    stubOperation(running.service.store, "people", "find", counted),
    stubOperation(running.service.store, "people", "findOne", counted),
  ];
  try {
    const res = await api.get(
      `invoices?sort=number&embedded=${q('{"person": 1, "reviewers": 1}')}`,
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.body._items.map((i: { person: { name: string } }) => i.person.name), [
      "ann",
      "bob",
      "cid",
      "ann",
    ]);
    assert.deepEqual(res.body._items[2].reviewers.map((p: { name: string }) => p.name), [
      "bob",
      "cid",
    ]);
    assert.equal(peopleFinds, 2);
  } finally {
    for (const restore of restores) restore();
  }
});

scenario("related links point at referenced documents", SETTINGS, async (api) => {
  const s = await seed(api);
  const res = await api.get(`invoices/${s.invoice}?embedded=${q('{"person": 1, "reviewers": 1}')}`);
  assert.deepEqual(res.body._links.related, {
    person: { href: `people/${s.ann}`, title: "person" },
    reviewers: [
      { href: `people/${s.bob}`, title: "person" },
      { href: `people/${s.cid}`, title: "person" },
      { href: `people/${s.ann}`, title: "person" },
    ],
    plain: { href: `people/${s.bob}`, title: "person" },
  });
  const list = await api.get("invoices");
  assert.deepEqual(list.body._items[0]._links.related.person, {
    href: `people/${s.ann}`,
    title: "person",
  });
  const none = await api.create("invoices", { number: 9 });
  const bare = await api.get(`invoices/${none._id}`);
  assert.equal(bare.body._links.related, undefined);
  assert.deepEqual(Object.keys(bare.body._links).sort(), ["collection", "parent", "self"]);
});

const NESTED = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    people: { schema: { name: { type: "string" } } },
    notes: {
      schema: {
        text: { type: "string" },
        author: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
      },
    },
    tasks: {
      schema: {
        note: { type: "objectid", data_relation: { resource: "notes", embeddable: true } },
      },
    },
  },
};

scenario("embedded: a dotted path embeds inside an embedded document", NESTED, async (api) => {
  const ann = await api.create("people", { name: "ann" });
  const note = await api.create("notes", { text: "hi", author: ann._id });
  const task = await api.create("tasks", { note: note._id });
  const both = await api.get(`tasks/${task._id}?embedded=${q('{"note": 1, "note.author": 1}')}`);
  assert.equal(both.status, 200);
  assert.equal(both.body.note.text, "hi");
  assert.equal(both.body.note.author.name, "ann");
  const list = await api.get(`tasks?embedded=${q('{"note.author": 1, "note": 1}')}`);
  assert.equal(list.body._items[0].note.author.name, "ann", "order of the request is irrelevant");
  const one = await api.get(`tasks/${task._id}?embedded=${q('{"note": 1}')}`);
  assert.equal(one.body.note.author, ann._id, "only what is asked is embedded");
});
