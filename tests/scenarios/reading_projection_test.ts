/** Reading: `projection` (client and datasource defaults), key fields always returned. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q, refused } from "../support/assertions.ts";
import type { Client } from "../support/client.ts";

const SCHEMA = {
  name: { type: "string" },
  age: { type: "integer" },
  secret: { type: "string" },
  address: { type: "dict", schema: { city: { type: "string" }, zip: { type: "string" } } },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    people: { schema: SCHEMA },
    hidden: { schema: SCHEMA, datasource: { source: "people", projection: { secret: 0 } } },
    narrow: { schema: SCHEMA, datasource: { source: "people", projection: { name: 1, age: 1 } } },
    fixed: { schema: SCHEMA, projection: false, datasource: { source: "people" } },
  },
};

const KEYS = ["_created", "_etag", "_id", "_links", "_updated"];
const NEEDS = { gaps: ["projection"] };

async function seed(api: Client): Promise<string> {
  const created = await api.create("people", {
    name: "ann",
    age: 30,
    secret: "s3",
    address: { city: "Rome", zip: "00100" },
  });
  return created._id;
}

const keysOf = (doc: object) => Object.keys(doc).sort();

scenario(
  "projection: inclusion returns the fields asked plus key fields",
  SETTINGS,
  async (api) => {
    const id = await seed(api);
    const list = await api.get(`people?projection=${q('{"name": 1}')}`);
    assert.equal(list.status, 200);
    assert.deepEqual(keysOf(list.body._items[0]), [...KEYS, "name"].sort());
    assert.equal(list.body._items[0].name, "ann");
    const item = await api.get(`people/${id}?projection=${q('{"age": 1, "address.city": 1}')}`);
    assert.equal(item.status, 200);
    assert.deepEqual(keysOf(item.body), [...KEYS, "address", "age"].sort());
    assert.deepEqual(item.body.address, { city: "Rome" });
  },
  NEEDS,
);

scenario("projection: exclusion drops the fields named", SETTINGS, async (api) => {
  const id = await seed(api);
  const item = await api.get(`people/${id}?projection=${q('{"secret": 0, "address": 0}')}`);
  assert.equal(item.status, 200);
  assert.deepEqual(keysOf(item.body), [...KEYS, "age", "name"].sort());
}, NEEDS);

scenario("projection: key fields always come back", SETTINGS, async (api) => {
  const id = await seed(api);
  const excluded = await api.get(
    `people/${id}?projection=${q('{"_id": 0, "_etag": 0, "_created": 0}')}`,
  );
  assert.equal(excluded.status, 200);
  assert.equal(excluded.body._id, id);
  assert.match(excluded.body._etag, /^[a-f0-9]{40}$/);
  assert.ok(excluded.body._created);
  assert.equal(excluded.body.name, "ann");
  const mixed = await api.get(`people/${id}?projection=${q('{"_id": 0, "name": 1}')}`);
  assert.equal(mixed.status, 200);
  assert.deepEqual(keysOf(mixed.body), [...KEYS, "name"].sort());
}, NEEDS);

scenario("projection: bad values answer 400", SETTINGS, async (api) => {
  await seed(api);
  await refused(api, `people?projection=${q('{"name": 1, "age": 0}')}`, "cannot mix");
  await refused(api, `people?projection=${q('{"name": 2}')}`, "must be 0 or 1");
  await refused(api, `people?projection=${q('{"name": 1')}`, "position");
  await refused(api, `people?projection=${q("{'name': 1}")}`, "single quotes");
  await refused(api, `people?projection=${q('["name"]')}`, "JSON object");
  await refused(api, `people?projection=${q('{"$where": 1}')}`, "invalid field name");
});

scenario(
  "datasource.projection {field: 0} hides it until asked {field: 1}",
  SETTINGS,
  async (api) => {
    const id = await seed(api);
    const list = await api.get("hidden");
    assert.equal(list.body._items[0].secret, undefined);
    assert.equal(list.body._items[0].name, "ann");
    const item = await api.get(`hidden/${id}`);
    assert.equal(item.body.secret, undefined);
    assert.deepEqual(item.body.address, { city: "Rome", zip: "00100" });
    const asked = await api.get(`hidden/${id}?projection=${q('{"secret": 1}')}`);
    assert.deepEqual(keysOf(asked.body), [...KEYS, "secret"].sort());
    assert.equal(asked.body.secret, "s3");
    const other = await api.get(`hidden/${id}?projection=${q('{"age": 0}')}`);
    assert.deepEqual(keysOf(other.body), [...KEYS, "address", "name"].sort());
  },
  NEEDS,
);

scenario("datasource.projection inclusion: clients cannot widen it", SETTINGS, async (api) => {
  const id = await seed(api);
  const item = await api.get(`narrow/${id}`);
  assert.deepEqual(keysOf(item.body), [...KEYS, "age", "name"].sort());
  const asked = await api.get(`narrow/${id}?projection=${q('{"name": 1, "secret": 1}')}`);
  assert.deepEqual(keysOf(asked.body), [...KEYS, "name"].sort());
  const excluded = await api.get(`narrow/${id}?projection=${q('{"age": 0}')}`);
  assert.deepEqual(keysOf(excluded.body), [...KEYS, "name"].sort());
}, NEEDS);

scenario("projection false on a resource ignores client projections", SETTINGS, async (api) => {
  const id = await seed(api);
  const item = await api.get(`fixed/${id}?projection=${q('{"name": 1}')}`);
  assert.equal(item.status, 200);
  assert.deepEqual(keysOf(item.body), [...KEYS, "address", "age", "name", "secret"].sort());
});
