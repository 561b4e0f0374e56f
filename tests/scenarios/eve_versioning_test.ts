/**
 * Versioning as Eve's own versioning tests observe it: what a shadow copy holds, the links
 * and ETags of version reads, the fetch events, soft-deleted versions, and versioned
 * references through the id, another versioned field, an unversioned field, and to
 * documents stored before versioning was enabled.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { Events } from "../../src/mod.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import type { Json } from "../support/client.ts";

const contacts = (options: { partial?: boolean; softDelete?: boolean } = {}) => ({
  url: "arbitraryurl",
  item_title: "contact",
  versioning: true,
  soft_delete: options.softDelete ?? false,
  datasource: { source: "contacts", filter: { username: { $exists: false } } },
  schema: {
    ref: { type: "string", minlength: 25, maxlength: 25, required: true, unique: true },
    prog: { type: "integer", ...(options.partial ? { versioned: false } : {}) },
  },
});

const person = (field?: { name: string; type: string }) => ({
  type: "dict",
  schema: {
    _version: { type: "integer" },
    ...(field ? { [field.name]: { type: field.type } } : { _id: { type: "objectid" } }),
  },
  data_relation: {
    resource: "contacts",
    version: true,
    embeddable: true,
    ...(field ? { field: field.name } : {}),
  },
});

const settings = (
  options: { partial?: boolean; softDelete?: boolean; field?: { name: string; type: string } } = {},
) => ({
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    contacts: contacts(options),
    invoices: { schema: { person: person(options.field) } },
  },
});

const ITEM = { ref: "ref value 1..............", prog: 123 };
const CHANGE = { ref: "ref value 2..............", prog: 456 };

/** Creates the test contact; answers its id, ETag and item path. */
async function insert(api: Parameters<Parameters<typeof scenario>[2]>[0]) {
  const created = await api.create("arbitraryurl", ITEM);
  return {
    id: created._id as string,
    etag: created._etag as string,
    path: `arbitraryurl/${created._id}`,
  };
}

for (const partial of [false, true]) {
  const label = partial ? " (partial versioning)" : "";
  scenario(
    `a shadow copy holds the versioned fields and five meta fields${label}`,
    settings({
      partial,
    }),
    async (api, running) => {
      const { id, etag, path } = await insert(api);
      const put = await api.put(path, CHANGE, { "if-match": etag });
      assert.equal(put.status, 200, put.text);
      const shadows = await running.service.store.collection("contacts_versions").find({
        _id_document: new ObjectId(id),
      });
      assert.equal(shadows.length, 2);
      for (const shadow of shadows) {
        const keys = Object.keys(shadow).sort();
        const expected = ["_etag", "_id", "_id_document", "_updated", "_version", "ref"];
        if (!partial) expected.push("prog");
        assert.deepEqual(keys, expected.sort());
      }
      // An old version shows the current unversioned fields and the creation date.
      const first = await api.get(`${path}?version=1`);
      assert.equal(first.status, 200);
      assert.equal(first.body.ref, ITEM.ref);
      assert.equal(first.body.prog, partial ? CHANGE.prog : ITEM.prog);
      assert.equal(typeof first.body._created, "string");
      assert.equal(first.body._version, 1);
      assert.equal(first.body._latest_version, 2);
    },
  );
}

scenario("version links: self names the version, collection all versions", settings(), async (
  api,
) => {
  const { etag, path } = await insert(api);
  await api.put(path, CHANGE, { "if-match": etag });
  for (const version of [1, 2]) {
    const res = await api.get(`${path}?version=${version}`);
    assert.equal(res.status, 200);
    const links = res.body._links;
    assert.equal(links.self.href, `${path}?version=${version}`);
    assert.equal(links.collection.href, `${path}?version=all`);
    assert.equal(links.parent.href, path);
  }
  const all = await api.get(`${path}?version=all`);
  assert.equal(all.body._links.self.href, `${path}?version=all`);
  assert.equal(all.body._links.collection.href, path);
  assert.equal(all.body._links.parent.href, "arbitraryurl");
  assert.deepEqual(
    all.body._items.map((item: Json) => item._links.self.href),
    [`${path}?version=1`, `${path}?version=2`],
  );
  // Each version of `all` reads as it would alone: fields, meta fields, links.
  const keys = ["_created", "_etag", "_id", "_latest_version", "_links", "_updated", "_version"];
  for (const item of all.body._items) {
    assert.deepEqual(Object.keys(item).sort(), [...keys, "prog", "ref"].sort());
  }
  assert.equal(all.body._items[0]._etag, etag);
  const diffs = await api.get(`${path}?version=diffs`);
  assert.deepEqual(Object.keys(diffs.body._items[0]).sort(), [...keys, "prog", "ref"].sort());
  assert.equal(diffs.body._items[1]._links.self.href, `${path}?version=2`);
  // A later diff holds what changed (the update time may not have), its number and links.
  const changed = Object.keys(diffs.body._items[1]).filter((key) => key !== "_updated").sort();
  assert.deepEqual(changed, ["_etag", "_links", "_version", "prog", "ref"]);
});

scenario("a new version makes a cached older version stale (If-None-Match)", settings(), async (
  api,
) => {
  const { etag, path } = await insert(api);
  const first = await api.get(`${path}?version=1`);
  assert.equal(first.body._latest_version, 1);
  const cached = await api.get(`${path}?version=1`, {
    "if-none-match": first.headers.get("etag")!,
  });
  assert.equal(cached.status, 304);
  await api.put(path, CHANGE, { "if-match": etag });
  const again = await api.get(`${path}?version=1`, { "if-none-match": first.headers.get("etag")! });
  assert.equal(again.status, 200);
  assert.equal(again.body._latest_version, 2);
});

const called: Array<[string, unknown]> = [];
const fetchEvents = new Events()
  .on("on_fetched_item", (resource: string, doc: Json) => {
    called.push(["item", `${resource} ${doc._id} ${doc._version}`]);
  })
  .on("on_fetched_diffs_contacts", (diffs: Json) => {
    called.push(["diffs", diffs.map((d: Json) => `${d._id ?? "-"} ${d._version}`)]);
  });

scenario("fetch events get each version, and the list of diffs", settings(), async (api) => {
  const { id, etag, path } = await insert(api);
  await api.patch(path, { prog: 1 }, { "if-match": etag });
  called.length = 0;
  await api.get(`${path}?version=1`);
  assert.deepEqual(called, [["item", `contacts ${id} 1`]]);
  called.length = 0;
  await api.get(`${path}?version=all`);
  assert.deepEqual(called, [["item", `contacts ${id} 1`], ["item", `contacts ${id} 2`]]);
  called.length = 0;
  await api.get(`${path}?version=diffs`);
  // As in Eve, a diff after the first holds no id (it did not change).
  assert.deepEqual(called, [["diffs", [`${id} 1`, "- 2"]]]);
}, { events: fetchEvents });

scenario(
  "a soft-deleted versioned item: 404 with its versions, old versions readable",
  settings({
    softDelete: true,
  }),
  async (api) => {
    const { etag, path } = await insert(api);
    assert.equal((await api.delete(path, { "if-match": etag })).status, 204);
    const current = await api.get(path);
    assert.equal(current.status, 404);
    assert.equal(current.body._latest_version, 2);
    assert.equal(current.body._deleted, true);
    const deleted = await api.get(`${path}?version=2`);
    assert.equal(deleted.status, 404);
    assert.equal(deleted.body._latest_version, 2);
    assert.equal(deleted.body._deleted, true);
    const first = await api.get(`${path}?version=1`);
    assert.equal(first.status, 200);
    assert.equal(first.body._latest_version, 2);
    assert.equal(first.body._deleted, false);
    const all = await api.get(`${path}?version=all`);
    assert.equal(all.body._items.length, 2);
    assert.equal(all.body._items[1]._deleted, true);
    // A reference to the live version 1 embeds it (not deleted); version 2 is refused.
    const invoice = await api.create("invoices", {
      person: { _id: current.body._id, _version: 1 },
    });
    const embedded = await api.get(`invoices/${invoice._id}?embedded={"person":1}`);
    assert.equal(embedded.body.person._version, 1);
    assert.equal(embedded.body.person._etag, etag);
    assert.equal(embedded.body.person._deleted, false);
    const refused = await api.post("invoices", { person: { _id: current.body._id, _version: 2 } });
    assert.equal(refused.status, 422);
    assert.equal(
      refused.body._issues.person,
      `value '${current.body._id}' must exist in resource 'contacts', field '_id' at version '2'.`,
    );
  },
);

scenario("a versioned reference needs both its fields", settings(), async (api) => {
  const { id } = await insert(api);
  const message = "versioned data_relation must be a dict with fields '_id' and '_version'";
  for (const person of [{ _id: id }, { _version: 1 }]) {
    const res = await api.post("invoices", { person });
    assert.equal(res.status, 422);
    assert.equal(res.body._issues.person, message);
  }
  assert.equal(
    (await api.post("invoices", { person: id })).body._issues.person,
    "must be of dict type",
  );
});

scenario("the version fields are not the client's", settings(), async (api) => {
  for (const field of ["_version", "_latest_version", "_id_document"]) {
    const res = await api.post("arbitraryurl", { ...CHANGE, [field]: "1" });
    assert.equal(res.status, 422);
    assert.equal(res.body._issues[field], "unknown field");
  }
});

scenario(
  "a versioned reference through another versioned field",
  settings({
    field: { name: "ref", type: "string" },
  }),
  async (api) => {
    const { etag, path } = await insert(api);
    await api.put(path, CHANGE, { "if-match": etag });
    const wrong = await api.post("invoices", { person: { ref: ITEM.ref, _version: 2 } });
    assert.equal(wrong.status, 422);
    assert.equal(
      wrong.body._issues.person,
      `value '${ITEM.ref}' must exist in resource 'contacts', field 'ref' at version '2'.`,
    );
    const invoice = await api.create("invoices", { person: { ref: ITEM.ref, _version: 1 } });
    const embedded = await api.get(`invoices/${invoice._id}?embedded={"person":1}`);
    assert.equal(embedded.status, 200);
    assert.equal(embedded.body.person._version, 1);
    assert.equal(embedded.body.person.ref, ITEM.ref);
  },
);

scenario(
  "a versioned reference through an unversioned field",
  settings({
    partial: true,
    field: { name: "prog", type: "integer" },
  }),
  async (api) => {
    const { etag, path } = await insert(api);
    await api.put(path, CHANGE, { "if-match": etag });
    const invoice = await api.create("invoices", { person: { prog: CHANGE.prog, _version: 1 } });
    const embedded = await api.get(`invoices/${invoice._id}?embedded={"person":1}`);
    assert.equal(embedded.status, 200);
    assert.equal(embedded.body.person._version, 1);
    assert.equal(embedded.body.person.ref, ITEM.ref);
    // As a version read shows it: the unversioned field's current value, the creation date.
    assert.equal(embedded.body.person.prog, CHANGE.prog);
    assert.equal(typeof embedded.body.person._created, "string");
    assert.equal((await api.post("invoices", { person: { prog: 999, _version: 1 } })).status, 422);
  },
);

scenario("a reference to version 1 of a document stored before versioning", settings(), async (
  api,
  running,
) => {
  const id = new ObjectId();
  await running.service.store.collection("contacts").insertMany([{ _id: id, ...ITEM }]);
  const invoice = await api.create("invoices", { person: { _id: id.toHexString(), _version: 1 } });
  const embedded = await api.get(`invoices/${invoice._id}?embedded={"person":1}`);
  assert.equal(embedded.status, 200);
  assert.equal(embedded.body.person.ref, ITEM.ref);
  const two = await api.post("invoices", { person: { _id: id.toHexString(), _version: 2 } });
  assert.equal(two.status, 422);
});

scenario("versions of a resource whose id is a string", {
  DOMAIN: {
    contacts: {
      versioning: true,
      resource_methods: ["GET", "POST"],
      item_methods: ["GET", "PUT"],
      schema: { _id: { type: "string" }, ref: { type: "string" } },
    },
  },
}, async (api) => {
  const created = await api.create("contacts", { ref: "a" });
  const path = `contacts/${created._id}`;
  const put = await api.put(path, { ref: "b" }, { "if-match": created._etag });
  assert.equal(put.status, 200, put.text);
  assert.equal((await api.get(`${path}?version=1`)).body.ref, "a");
  assert.equal((await api.get(`${path}?version=2`)).body.ref, "b");
});
