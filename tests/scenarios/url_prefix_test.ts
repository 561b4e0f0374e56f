/**
 * The API prefix (URL_PREFIX / API_VERSION): requests are served under it only; home,
 * links and `Location` (path-absolute, or under PUBLIC_BASE_URL) follow it.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";

const SETTINGS = {
  URL_PREFIX: "api",
  API_VERSION: "v1",
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
};

scenario("the API is served under URL_PREFIX/API_VERSION only", SETTINGS, async (api) => {
  const home = await api.get("api/v1");
  assert.equal(home.status, 200);
  assert.deepEqual(home.body._links.child, [{ href: "people", title: "people" }]);
  assert.equal((await api.get("api/v1/")).status, 200);
  assert.equal((await api.get("")).status, 404);
  assert.equal((await api.get("people")).status, 404);
  assert.equal((await api.get("api/people")).status, 404);
  assert.equal((await api.get("v1/people")).status, 404);

  const created = await api.post("api/v1/people", { name: "ada" });
  assert.equal(created.status, 201);
  const id = created.body._id;
  assert.equal(created.headers.get("location"), `/api/v1/people/${id}`);
  assert.equal(created.body._links.self.href, `people/${id}`);

  const item = await api.get(`api/v1/people/${id}`);
  assert.equal(item.status, 200);
  assert.equal(item.body.name, "ada");
  assert.equal(item.body._links.self.href, `people/${id}`);
  assert.deepEqual(item.body._links.collection, { href: "people", title: "people" });
  const list = await api.get("api/v1/people");
  assert.equal(list.body._items.length, 1);
  assert.equal(list.body._links.self.href, "people");
});

scenario(
  "Location is absolute under PUBLIC_BASE_URL, with the API prefix",
  { ...SETTINGS, PUBLIC_BASE_URL: "https://api.example.org/" },
  async (api) => {
    const created = await api.post("api/v1/people", { name: "ada" });
    assert.equal(created.status, 201);
    assert.equal(
      created.headers.get("location"),
      `https://api.example.org/api/v1/people/${created.body._id}`,
    );
  },
);
