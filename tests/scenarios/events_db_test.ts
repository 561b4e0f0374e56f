/**
 * Database events: fetch, insert, replace, update, delete (item and resource) and
 * aggregation events, their arguments, aborts, and changes made by callbacks.
 */
import assert from "node:assert/strict";
import { HttpError } from "../../src/mod.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import { scenario } from "../support/harness.ts";
import { record } from "../events/record.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    people: {
      schema: {
        name: { type: "string", required: true },
        age: { type: "integer" },
        role: { type: "string", default: "member" },
        stamp: { type: "string" },
      },
    },
    // Alone on its collection (no default projection): its pages may share nested values.
    contacts: {
      schema: {
        name: { type: "string" },
        address: { type: "dict", schema: { city: { type: "string" } } },
        tags: { type: "list", schema: { type: "string" } },
      },
    },
    archived: { soft_delete: true, schema: { name: { type: "string" } } },
    by_role: {
      pagination: false,
      datasource: {
        source: "people",
        aggregation: { pipeline: [{ $match: { role: "$role" } }, { $sort: { name: 1 } }] },
      },
    },
  },
};

type AnyDoc = Record<string, Json>;

const ifMatch = (doc: { _etag: string }) => ({ "if-match": doc._etag });
const hex = (id: unknown) => (id as ObjectId).toHexString();

scenario(
  "on_fetched_resource gets the envelope; its changes reach the client",
  SETTINGS,
  async (api, { service }) => {
    await api.create("people", [{ name: "a" }, { name: "b" }]);
    const calls = record(service.events, ["on_fetched_resource", "on_fetched_resource_people"]);
    service.events.on("on_fetched_resource_people", (response: AnyDoc) => {
      response.hooked = true;
      response._items[0].name = "changed";
    });
    const res = await api.get("people?sort=name");
    assert.equal(res.status, 200);
    assert.equal(res.body.hooked, true);
    assert.deepEqual(res.body._items.map((p: AnyDoc) => p.name), ["changed", "b"]);
    assert.deepEqual(calls.map((c) => [c.event, c.args.length]), [
      ["on_fetched_resource", 2],
      ["on_fetched_resource_people", 1],
    ]);
    assert.equal(calls[0].args[0], "people");
    const envelope = calls[0].args[1] as AnyDoc;
    assert.equal(calls[1].args[0], envelope);
    assert.deepEqual(envelope._meta, { page: 1, max_results: 25, total: 2 });
    assert.equal(envelope._items.length, 2);
  },
);

scenario(
  "hooks that change nested values of fetched documents never change what is stored",
  SETTINGS,
  async (api, { service }) => {
    await api.create("contacts", { name: "n", address: { city: "Oslo" }, tags: ["a"] });
    const plain = await api.get("contacts");
    assert.deepEqual(plain.body._items[0].address, { city: "Oslo" });
    // Pages without hooks may share nested values with the store; with one they may not.
    const hook = (response: AnyDoc) => {
      response._items[0].address.city = "changed";
      response._items[0].tags.push("x");
    };
    service.events.on("on_fetched_resource_contacts", hook);
    const hooked = await api.get("contacts");
    assert.equal(hooked.body._items[0].address.city, "changed");
    service.events.off("on_fetched_resource_contacts", hook);
    const item = `contacts/${hooked.body._items[0]._id}`;
    const unchanged = async () => {
      for (const path of ["contacts", item]) {
        const res = await api.get(path);
        const doc = path === "contacts" ? res.body._items[0] : res.body;
        assert.deepEqual([doc.address, doc.tags], [{ city: "Oslo" }, ["a"]], path);
      }
    };
    await unchanged();
    // The same for an item and on_fetched_item.
    const itemHook = (doc: AnyDoc) => {
      doc.address.city = "changed";
      doc.tags.push("x");
    };
    service.events.on("on_fetched_item_contacts", itemHook);
    const hookedItem = await api.get(item);
    assert.deepEqual([hookedItem.body.address.city, hookedItem.body.tags], ["changed", ["a", "x"]]);
    service.events.off("on_fetched_item_contacts", itemHook);
    await unchanged();
  },
);

scenario(
  "on_fetched_item changes reach the client, but ETag and Last-Modified keep the stored state",
  SETTINGS,
  async (api, { service }) => {
    const ada = await api.create("people", { name: "Ada" });
    const calls = record(service.events, ["on_fetched_item", "on_fetched_item_people"]);
    service.events.on("on_fetched_item", (_resource: string, response: AnyDoc) => {
      response.name = "changed";
      response._etag = "0000";
      response._updated = new Date(0);
    });
    const res = await api.get(`people/${ada._id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.name, "changed");
    assert.equal(res.body._etag, "0000");
    assert.equal(res.headers.get("etag"), `"${ada._etag}"`);
    assert.equal(res.headers.get("last-modified"), ada._updated);
    assert.deepEqual(calls.map((c) => [c.event, c.args.length]), [
      ["on_fetched_item", 2],
      ["on_fetched_item_people", 1],
    ]);
    assert.equal(calls[0].args[0], "people");
    assert.equal(hex((calls[1].args[0] as AnyDoc)._id), ada._id);
    const cached = await api.get(`people/${ada._id}`, { "if-none-match": `"${ada._etag}"` });
    assert.equal(cached.status, 304);
  },
);

scenario(
  "on_insert gets only valid items, after validation; its changes are stored and in the ETag",
  SETTINGS,
  async (api, { service }) => {
    const inserts: AnyDoc[][] = [];
    service.events.on("on_insert", (resource: string, items: AnyDoc[]) => {
      assert.equal(resource, "people");
      inserts.push(items.map((item) => ({ ...item })));
      for (const item of items) item.stamp = "by-hook";
    });
    const inserted = record(service.events, ["on_inserted", "on_inserted_people"]);

    const invalid = await api.post("people", [{ name: "ok" }, { name: 7 }]);
    assert.equal(invalid.status, 422);
    assert.equal(inserts.length, 0);
    assert.equal(inserted.length, 0);

    const res = await api.post("people", { name: "Ada", age: 36 });
    assert.equal(res.status, 201);
    assert.equal(inserts.length, 1);
    const [item] = inserts[0];
    assert.equal(inserts[0].length, 1);
    assert.equal(item.name, "Ada");
    assert.equal(item.role, "member"); // the schema default: validation already ran
    assert.ok(item._id instanceof ObjectId);
    assert.equal(hex(item._id), res.body._id);

    const stored = await api.get(`people/${res.body._id}`);
    assert.equal(stored.body.stamp, "by-hook");
    assert.equal(stored.body._etag, res.body._etag);
    assert.equal(stored.headers.get("etag"), `"${res.body._etag}"`);

    assert.deepEqual(inserted.map((c) => [c.event, c.args.length]), [
      ["on_inserted", 2],
      ["on_inserted_people", 1],
    ]);
    const items = inserted[1].args[0] as AnyDoc[];
    assert.equal(items.length, 1);
    assert.equal(hex(items[0]._id), res.body._id);
    assert.equal(items[0]._etag, res.body._etag);
    assert.equal(items[0].stamp, "by-hook");
  },
);

scenario(
  "on_insert sees every document of a valid bulk POST at once",
  SETTINGS,
  async (api, { service }) => {
    const calls = record(service.events, ["on_insert_people"]);
    const res = await api.post("people", [{ name: "a" }, { name: "b" }, { name: "c" }]);
    assert.equal(res.status, 201);
    assert.equal(calls.length, 1);
    const items = calls[0].args[0] as AnyDoc[];
    assert.deepEqual(items.map((i) => i.name), ["a", "b", "c"]);
    assert.deepEqual(items.map((i) => hex(i._id)), res.body._items.map((i: AnyDoc) => i._id));
  },
);

scenario(
  "on_update gets the validated updates and the original; on_updated follows the write",
  SETTINGS,
  async (api, { service }) => {
    const ada = await api.create("people", { name: "Ada", age: 36 });
    const seen: unknown[] = [];
    const updatesSeen: AnyDoc[] = [];
    for (const event of ["on_update", "on_updated"]) {
      service.events.on(event, (resource: string, updates: AnyDoc, original: AnyDoc) => {
        updatesSeen.push(updates);
        // The updates, not the whole document (with normalize_on_patch they may also hold
        // schema defaults of fields the PATCH does not name).
        seen.push([event, resource, updates.age, "name" in updates, original.name, original.age]);
      });
      service.events.on(`${event}_people`, (...args: unknown[]) => {
        seen.push([`${event}_people`, args.length, args[0] === updatesSeen.at(-1)]);
      });
    }
    const res = await api.patch(`people/${ada._id}`, { age: 37 }, ifMatch(ada));
    assert.equal(res.status, 200);
    assert.deepEqual(seen, [
      ["on_update", "people", 37, false, "Ada", 36],
      ["on_update_people", 2, true],
      ["on_updated", "people", 37, false, "Ada", 36],
      ["on_updated_people", 2, true],
    ]);
    assert.equal(updatesSeen[0], updatesSeen[1]);
    const invalid = await api.patch(`people/${ada._id}`, { age: "old" }, ifMatch(res.body));
    assert.equal(invalid.status, 422);
    assert.equal(seen.length, 4); // not raised for an invalid update
  },
);

scenario(
  "changes an on_update callback makes to the updates are stored",
  SETTINGS,
  async (api, { service }) => {
    const ada = await api.create("people", { name: "Ada" });
    service.events.on("on_update_people", (updates: AnyDoc) => {
      updates.stamp = "patched-by-hook";
    });
    const res = await api.patch(`people/${ada._id}`, { age: 37 }, ifMatch(ada));
    assert.equal(res.status, 200);
    const stored = await api.get(`people/${ada._id}`);
    assert.equal(stored.body.age, 37);
    assert.equal(stored.body.stamp, "patched-by-hook");
    assert.equal(stored.body._etag, res.body._etag);
  },
);

scenario(
  "on_replace gets the validated replacement and the original; its changes are stored",
  SETTINGS,
  async (api, { service }) => {
    const ada = await api.create("people", { name: "Ada", age: 36, stamp: "old" });
    const seen: unknown[] = [];
    service.events.on("on_replace", (resource: string, item: AnyDoc, original: AnyDoc) => {
      seen.push(["on_replace", resource, item.name, item.role, item.stamp, original.name]);
      item.stamp = "by-hook";
    });
    service.events.on("on_replace_people", (...args: unknown[]) => {
      seen.push(["on_replace_people", args.length]);
    });
    service.events.on("on_replaced_people", (item: AnyDoc, original: AnyDoc) => {
      seen.push(["on_replaced_people", item.name, item.stamp, original.stamp, hex(item._id)]);
    });
    const res = await api.put(`people/${ada._id}`, { name: "Bea" }, ifMatch(ada));
    assert.equal(res.status, 200);
    assert.deepEqual(seen, [
      ["on_replace", "people", "Bea", "member", undefined, "Ada"],
      ["on_replace_people", 2],
      ["on_replaced_people", "Bea", "by-hook", "old", ada._id],
    ]);
    const stored = await api.get(`people/${ada._id}`);
    assert.equal(stored.body.name, "Bea");
    assert.equal(stored.body.stamp, "by-hook");
    assert.equal(stored.body.age, undefined);
    assert.equal(stored.headers.get("etag"), `"${res.body._etag}"`);
  },
);

scenario(
  "on_delete_item and on_deleted_item get the stored document",
  SETTINGS,
  async (api, { service }) => {
    const ada = await api.create("people", { name: "Ada" });
    const calls = record(service.events, [
      "on_delete_item",
      "on_delete_item_people",
      "on_deleted_item",
      "on_deleted_item_people",
    ]);
    assert.equal((await api.delete(`people/${ada._id}`, ifMatch(ada))).status, 204);
    assert.deepEqual(calls.map((c) => [c.event, c.args.length]), [
      ["on_delete_item", 2],
      ["on_delete_item_people", 1],
      ["on_deleted_item", 2],
      ["on_deleted_item_people", 1],
    ]);
    assert.equal(calls[0].args[0], "people");
    const item = calls[1].args[0] as AnyDoc;
    assert.equal(hex(item._id), ada._id);
    assert.equal(item.name, "Ada");
    assert.equal(item._etag, ada._etag);
    assert.equal(calls[3].args[0], item);
  },
);

scenario(
  "resource DELETE raises on_delete_resource, the originals event, then on_deleted_resource",
  SETTINGS,
  async (api, { service }) => {
    await api.create("people", [{ name: "a" }, { name: "b" }]);
    const calls = record(service.events, [
      "on_delete_resource",
      "on_delete_resource_people",
      "on_delete_resource_originals",
      "on_delete_resource_originals_people",
      "on_deleted_resource",
      "on_deleted_resource_people",
    ]);
    assert.equal((await api.delete("people")).status, 204);
    assert.deepEqual(calls.map((c) => [c.event, ...c.args.map((a) => typeof a)]), [
      ["on_delete_resource", "string"],
      ["on_delete_resource_people"],
      ["on_delete_resource_originals", "string", "object", "object"],
      ["on_delete_resource_originals_people", "object", "object"],
      ["on_deleted_resource", "string"],
      ["on_deleted_resource_people"],
    ]);
    assert.equal(calls[0].args[0], "people");
    const originals = calls[3].args[0] as AnyDoc[];
    assert.deepEqual(originals.map((o) => o.name).sort(), ["a", "b"]);
    assert.deepEqual(calls[3].args[1], {});
    assert.equal((await api.get("people")).body._meta.total, 0);
  },
);

scenario(
  "with soft delete the originals event gets deleted and not-deleted documents",
  SETTINGS,
  async (api, { service }) => {
    const [a] = (await api.create("archived", [{ name: "a" }, { name: "b" }]))._items;
    assert.equal((await api.delete(`archived/${a._id}`, ifMatch(a))).status, 204);
    const calls = record(service.events, ["on_delete_resource_originals_archived"]);
    assert.equal((await api.delete("archived")).status, 204);
    assert.equal(calls.length, 1);
    const originals = calls[0].args[0] as AnyDoc[];
    assert.deepEqual(
      originals.map((o) => [o.name, o._deleted]).sort(),
      [["a", true], ["b", false]],
    );
  },
);

scenario(
  "before events abort with an HttpError (403) and nothing is written",
  SETTINGS,
  async (api, { service }) => {
    const ada = await api.create("people", { name: "Ada" });
    const forbid = (what: string) => () => {
      throw new HttpError(403, `no ${what}`);
    };
    const after = record(service.events, [
      "on_inserted",
      "on_updated",
      "on_replaced",
      "on_deleted_item",
      "on_deleted_resource",
    ]);
    service.events
      .on("on_insert_people", forbid("insert"))
      .on("on_update_people", forbid("update"))
      .on("on_replace_people", forbid("replace"))
      .on("on_delete_item_people", forbid("delete"))
      .on("on_delete_resource_people", forbid("resource delete"));

    const attempts = [
      await api.post("people", { name: "Bea" }),
      await api.post("people", [{ name: "Bea" }, { name: "Cy" }]),
      await api.patch(`people/${ada._id}`, { name: "x" }, ifMatch(ada)),
      await api.put(`people/${ada._id}`, { name: "x" }, ifMatch(ada)),
      await api.delete(`people/${ada._id}`, ifMatch(ada)),
      await api.delete("people"),
    ];
    assert.deepEqual(attempts.map((r) => [r.status, r.body._error?.message]), [
      [403, "no insert"],
      [403, "no insert"],
      [403, "no update"],
      [403, "no replace"],
      [403, "no delete"],
      [403, "no resource delete"],
    ]);
    assert.deepEqual(attempts[0].body, {
      _status: "ERR",
      _error: { code: 403, message: "no insert" },
    });
    assert.deepEqual(after, []);
    const list = await api.get("people");
    assert.equal(list.body._meta.total, 1);
    const stored = await api.get(`people/${ada._id}`);
    assert.equal(stored.body.name, "Ada");
    assert.equal(stored.body._etag, ada._etag);
  },
);

scenario(
  "on_delete_resource_originals may abort the resource DELETE too",
  SETTINGS,
  async (api, { service }) => {
    await api.create("people", [{ name: "a" }, { name: "b" }]);
    service.events.on("on_delete_resource_originals", (_r: string, originals: AnyDoc[]) => {
      if (originals.length > 1) throw new HttpError(403, "too many");
    });
    const res = await api.delete("people");
    assert.equal(res.status, 403);
    assert.equal((await api.get("people")).body._meta.total, 2);
  },
);

scenario(
  "before_aggregation may alter the pipeline and after_aggregation the documents",
  SETTINGS,
  async (api, { service }) => {
    await api.create("people", [
      { name: "a", age: 10 },
      { name: "b", age: 20 },
      { name: "c", age: 30, role: "admin" },
    ]);
    const url = `by_role?aggregate=${encodeURIComponent('{"$role":"member"}')}`;
    const plain = await api.get(url);
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.body._items.map((d: AnyDoc) => d.name), ["a", "b"]);

    const seen: unknown[] = [];
    service.events.on("before_aggregation", (endpoint: string, pipeline: AnyDoc[]) => {
      seen.push(["before", endpoint, structuredClone(pipeline)]);
      pipeline.push({ $match: { age: { $gte: 18 } } });
    });
    service.events.on("after_aggregation", (endpoint: string, documents: AnyDoc[]) => {
      seen.push(["after", endpoint, documents.map((d) => d.name)]);
      for (const doc of documents) doc.seen = true;
    });
    const hooked = await api.get(url);
    assert.equal(hooked.status, 200);
    assert.deepEqual(hooked.body._items.map((d: AnyDoc) => [d.name, d.seen]), [["b", true]]);
    assert.deepEqual(seen, [
      ["before", "by_role", [{ $match: { role: "member" } }, { $sort: { name: 1 } }]],
      ["after", "by_role", ["b"]],
    ]);
  },
);

scenario(
  "aggregation events have the _<endpoint> form",
  SETTINGS,
  async (api, { service }) => {
    await api.create("people", { name: "a", age: 10 });
    const calls = record(service.events, [
      "before_aggregation_by_role",
      "after_aggregation_by_role",
    ]);
    const res = await api.get(`by_role?aggregate=${encodeURIComponent('{"$role":"member"}')}`);
    assert.equal(res.status, 200);
    assert.deepEqual(calls.map((c) => [c.event, c.args.length]), [
      ["before_aggregation_by_role", 1],
      ["after_aggregation_by_role", 1],
    ]);
    assert.ok(Array.isArray(calls[0].args[0]));
  },
);
