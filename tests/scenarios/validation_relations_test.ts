/**
 * `data_relation` through HTTP: the referenced document must exist (and not be
 * soft-deleted), for single references, lists of references, custom relation fields and
 * versioned references; embedded documents cannot be written in place of references.
 */
import assert from "node:assert/strict";
import { ObjectId } from "../../src/doc/bson.ts";
import { scenario } from "../support/harness.ts";
import { issuesOf } from "../support/assertions.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    people: {
      soft_delete: true,
      schema: { name: { type: "string" }, email: { type: "string" } },
    },
    posts: {
      schema: {
        author: {
          type: "objectid",
          data_relation: { resource: "people", embeddable: true },
        },
        readers: {
          type: "list",
          schema: { type: "objectid", data_relation: { resource: "people" } },
        },
        contact: { type: "string", data_relation: { resource: "people", field: "email" } },
        cited: {
          type: "dict",
          schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
          data_relation: { resource: "people", version: true },
        },
      },
    },
  },
};

const MISSING = "5f1d2c3b4a5f1d2c3b4a5f1d";

const mustExist = (value: string, field = "_id") =>
  `value '${value}' must exist in resource 'people', field '${field}'`;

scenario("a reference to an existing document is accepted", SETTINGS, async (api) => {
  const ada = await api.create("people", { name: "Ada", email: "ada@x" });
  const post = await api.create("posts", { author: ada._id, contact: "ada@x" });
  const item = await api.get(`posts/${post._id}?embedded={"author":1}`);
  assert.equal(item.status, 200);
  assert.equal(item.body.author.name, "Ada");
  assert.equal(item.body.contact, "ada@x");
});

scenario("a reference to a missing document is 422", SETTINGS, async (api) => {
  assert.deepEqual(issuesOf(await api.post("posts", { author: MISSING })), {
    author: mustExist(MISSING),
  });
  assert.deepEqual(issuesOf(await api.post("posts", { contact: "nobody@x" })), {
    contact: mustExist("nobody@x", "email"),
  });
  assert.equal((await api.get("posts")).body._meta.total, 0);
});

scenario("a reference to a soft-deleted document is 422", SETTINGS, async (api) => {
  const ada = await api.create("people", { name: "Ada" });
  assert.equal((await api.delete(`people/${ada._id}`, { "if-match": ada._etag })).status, 204);
  assert.deepEqual(issuesOf(await api.post("posts", { author: ada._id })), {
    author: mustExist(ada._id),
  });
});

scenario("every member of a list of references must exist", SETTINGS, async (api) => {
  const a = await api.create("people", { name: "a" });
  const b = await api.create("people", { name: "b" });
  await api.create("posts", { readers: [a._id, b._id] });
  assert.deepEqual(issuesOf(await api.post("posts", { readers: [a._id, MISSING] })), {
    readers: { 1: mustExist(MISSING) },
  });
});

scenario("PATCH and PUT check the references they write", SETTINGS, async (api) => {
  const ada = await api.create("people", { name: "Ada" });
  const post = await api.create("posts", { author: ada._id });
  const path = `posts/${post._id}`;
  const patch = await api.patch(path, { author: MISSING }, { "if-match": post._etag });
  assert.deepEqual(issuesOf(patch), { author: mustExist(MISSING) });
  const put = await api.put(path, { author: MISSING }, { "if-match": post._etag });
  assert.deepEqual(issuesOf(put), { author: mustExist(MISSING) });
  // A PATCH that does not touch the reference is not held up by it.
  await api.delete(`people/${ada._id}`, { "if-match": ada._etag });
  const other = await api.patch(path, { contact: null }, { "if-match": post._etag });
  assert.equal(other.status, 422);
  assert.deepEqual(other.body._issues, { contact: "null value not allowed" });
});

scenario("an embedded document cannot be written for a reference", SETTINGS, async (api) => {
  const ada = await api.create("people", { name: "Ada" });
  const full = (await api.get(`people/${ada._id}`)).body;
  assert.deepEqual(issuesOf(await api.post("posts", { author: full })), {
    author: "must be of objectid type",
  });
  const post = await api.create("posts", { author: ada._id });
  const patch = await api.patch(`posts/${post._id}`, { author: { name: "Eve" } }, {
    "if-match": post._etag,
  });
  assert.deepEqual(issuesOf(patch), { author: "must be of objectid type" });
});

scenario("version: true references must name an existing version", SETTINGS, async (
  api,
  running,
) => {
  const ada = await api.create("people", { name: "Ada" });
  // The shadow copies document versioning keeps (`people_versions`), written directly so
  // the relation check is tested on its own.
  const id = new ObjectId(ada._id);
  await running.service.store.collection("people_versions").insertMany([
    { _id: new ObjectId(), _id_document: id, _version: 1, name: "Ada" },
    { _id: new ObjectId(), _id_document: id, _version: 2, name: "Ada L." },
  ]);
  const ok = await api.create("posts", { cited: { _id: ada._id, _version: 2 } });
  const stored = await running.service.store.collection("posts").findOne({});
  assert.ok((stored!.cited as Json)._id instanceof ObjectId);
  assert.equal((await api.get(`posts/${ok._id}`)).body.cited._version, 2);
  assert.deepEqual(issuesOf(await api.post("posts", { cited: { _id: ada._id, _version: 3 } })), {
    cited: `${mustExist(ada._id)} at version '3'.`,
  });
  assert.deepEqual(issuesOf(await api.post("posts", { cited: { _id: ada._id, _version: "x" } })), {
    cited: { _version: "must be of integer type" },
  });
});
