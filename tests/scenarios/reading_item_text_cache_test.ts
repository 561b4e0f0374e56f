/**
 * The cache of returned items' JSON text (src/services/item_text.ts) changes no answer: every
 * read is answered byte for byte as without it (compared with the cache off), whatever the
 * projection, endpoint path, soft delete, IF_MATCH or HATEOAS, after writes too; and it
 * answers from cached texts on the embedded store only (MongoDB returns fresh documents).
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
  },
};

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
