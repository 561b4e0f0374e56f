/** In-process data access (`service.data`): any resource, internal ones included. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { HttpError } from "../../src/mod.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    people: { schema: { name: { type: "string", required: true } } },
    audit: {
      internal_resource: true,
      versioning: true,
      soft_delete: true,
      schema: {
        action: { type: "string", allowed: ["create", "note"], required: true },
        who: { type: "objectid" },
        level: { type: "integer", default: 1 },
      },
    },
  },
};

scenario("a hook keeps an audit trail in an internal resource", SETTINGS, async (api, running) => {
  const { service } = running;
  // The hook an embedding application registers: an audit trail of created people.
  service.events.on("on_inserted_people", async (items: Json[]) => {
    for (const item of items) {
      await service.data.post("audit", { action: "create", who: item._id.toHexString() });
    }
  });
  const person = await api.create("people", { name: "Ada" });
  assert.equal((await api.get("audit")).status, 404, "internal: not reachable over HTTP");
  const { status, body } = await running.service.data.get("audit");
  assert.equal(status, 200);
  assert.equal(body._items.length, 1);
  const [entry] = body._items;
  assert.equal(entry.action, "create");
  assert.equal(entry.who.toHexString(), person._id);
  assert.equal(entry.level, 1, "defaults apply");
  assert.equal(entry._version, 1, "versioning applies");
  assert.equal(entry._deleted, false);
  const one = await running.service.data.get("audit", { id: entry._id.toHexString() });
  assert.equal(one.body.action, "create");
});

scenario(
  "documents read in process and put into an answer by a hook are rendered converted",
  SETTINGS,
  async (api, { service }) => {
    const person = await api.create("people", { name: "Ada" });
    const entry = await service.data.post("audit", { action: "note" });
    const id = (entry.body._id as ObjectId).toHexString();
    service.events.on("on_fetched_item_people", async (doc: Json) => {
      const audit = (await service.data.get("audit", { id })).body;
      // The caller owns what it reads, links included, and may put anything in them.
      audit._links.self.when = new Date(0);
      doc.audit = audit;
    });
    const res = await api.get(`people/${person._id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.audit._links.self.when, "Thu, 01 Jan 1970 00:00:00 GMT");
    assert.equal(res.body.audit._id, id);
  },
);

scenario(
  "in-process writes validate, version, log and raise events",
  SETTINGS,
  async (_api, running) => {
    const { data } = running.service;
    const seen: string[] = [];
    running.service.events.on("on_insert_audit", () => seen.push("insert"))
      .on("on_update_audit", () => seen.push("update"))
      .on("on_delete_item_audit", () => seen.push("delete"));
    await assert.rejects(
      data.post("audit", { action: "bogus" }),
      (e: unknown) => e instanceof HttpError && e.status === 422,
    );
    const created = await data.post("audit", { action: "note" });
    assert.equal(created.status, 201);
    const id = created.body._id;
    const patched = await data.patch("audit", { id, changes: { level: 3 } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body._version, 2);
    await assert.rejects(
      data.patch("audit", { id, changes: { level: 4 }, etag: created.body._etag }),
      (e: unknown) => e instanceof HttpError && e.status === 412,
    );
    const replaced = await data.put("audit", { id, doc: { action: "create" } });
    assert.equal(replaced.body._version, 3);
    assert.equal((await data.delete("audit", { id })).status, 204);
    await assert.rejects(
      data.get("audit", { id }),
      (e: unknown) => e instanceof HttpError && e.status === 404,
    );
    const versions = await data.get("audit", { id, query: { version: "all" } });
    assert.equal(versions.body._items.length, 4);
    assert.deepEqual(seen, ["insert", "update", "delete"]);
    const log = (await data.get("oplog", { query: { where: '{"r": "audit"}', sort: "_id" } })).body;
    assert.deepEqual(log._items.map((e: Json) => e.o), ["POST", "PATCH", "PUT", "DELETE"]);
    assert.ok(log._items.every((e: Json) => !("ip" in e) && e.u === "n/a"));
  },
);

scenario(
  "in-process calls refuse unknown resources and oplog writes",
  SETTINGS,
  async (_api, running) => {
    const { data } = running.service;
    await assert.rejects(
      data.get("nope"),
      (e: unknown) => e instanceof HttpError && e.status === 404,
    );
    await assert.rejects(
      data.post("oplog", { o: "POST" }),
      (e: unknown) => e instanceof HttpError && e.status === 405,
    );
    await assert.rejects(
      data.patch("people", { id: undefined, changes: { name: "x" } }),
      (e: unknown) => e instanceof HttpError && e.status === 400,
    );
    await assert.rejects(
      data.get("people", { id: "not-an-id" }),
      (e: unknown) => e instanceof HttpError && e.status === 404,
    );
  },
);

scenario("in-process bodies keep the body budgets, as HTTP bodies do", {
  ...SETTINGS,
  MAX_DOCUMENT_FIELDS: 5,
  MAX_LIST_LENGTH: 3,
  MAX_DOCUMENT_DEPTH: 3,
  BULK_MAX_DOCUMENTS: 2,
  MAX_BODY_FIELDS: 8,
  ALLOW_UNKNOWN: true,
}, async (_api, running) => {
  const { data } = running.service;
  const refused = async (body: Json, setting: string) =>
    await assert.rejects(
      data.post("people", body),
      (e: unknown) => e instanceof HttpError && e.status === 413 && e.message.includes(setting),
      setting,
    );
  await refused({ name: "a", b: 1, c: 2, d: 3, e: 4, f: 5 }, "MAX_DOCUMENT_FIELDS");
  await refused({ name: "a", tags: [1, 2, 3, 4] }, "MAX_LIST_LENGTH");
  await refused({ name: "a", x: { y: { z: { w: 1 } } } }, "MAX_DOCUMENT_DEPTH");
  await refused([{ name: "a" }, { name: "b" }, { name: "c" }], "BULK_MAX_DOCUMENTS");
  await refused(
    [{ name: "a", b: 1, c: 2, d: 3, e: 4 }, { name: "b", c: 1, d: 2, e: 3 }],
    "MAX_BODY_FIELDS",
  );
  // Within every budget, the same shapes are stored.
  const ok = await data.post("people", { name: "a", tags: [1, 2, 3], x: { y: { z: 1 } } });
  assert.equal(ok.status, 201);
});

scenario("in-process bodies hold only values a client could send (and dates, BSON values)", {
  ...SETTINGS,
  ALLOW_UNKNOWN: true,
}, async (_api, running) => {
  const { data } = running.service;
  class Point {
    x = 1;
  }
  const cases: Array<[unknown, string]> = [
    [{ name: "a", m: new Map([["k", 1]]) }, "a value of type Map"],
    [{ name: "a", s: new Set([1]) }, "a value of type Set"],
    [{ name: "a", p: new Point() }, "a value of type Point"],
    [{ name: "a", list: [{ at: new Date(Number.NaN) }] }, "an invalid date"],
  ];
  for (const [body, fragment] of cases) {
    await assert.rejects(
      data.post("people", body as Json),
      (e: unknown) => e instanceof HttpError && e.status === 400 && e.message.includes(fragment),
      fragment,
    );
  }
  const id = (await data.post("people", { name: "b" })).body._id;
  await assert.rejects(
    data.patch("people", { id, changes: { p: new Point() } }),
    (e: unknown) => e instanceof HttpError && e.status === 400,
  );
  // Dates and ObjectIds are accepted as they are.
  const ok = await data.post("people", { name: "c", at: new Date(0), ref: new ObjectId() });
  assert.equal(ok.status, 201);
});

scenario("in-process ids, URL variables and query values are single values, never operators", {
  ...SETTINGS,
  ID_FIELD: "_id",
  DOMAIN: {
    ...SETTINGS.DOMAIN,
    codes: {
      item_lookup_field: "_id",
      schema: { _id: { type: "string" }, v: { type: "integer" } },
    },
    notes: {
      url: 'codes/<regex("[a-z]+"):code>/notes',
      schema: { code: { type: "string" }, text: { type: "string" } },
    },
  },
}, async (_api, running) => {
  const { data } = running.service;
  await data.post("codes", [{ _id: "b", v: 2 }, { _id: "a", v: 1 }]);
  await data.post("notes", { text: "of a" }, { urlValues: { code: "a" } });
  const badRequest = (e: unknown) => e instanceof HttpError && e.status === 400;
  // A client's object passed on by a hook must not become a lookup operator.
  for (const id of [{ $gt: "" }, { $ne: null }, ["a"]]) {
    await assert.rejects(data.get("codes", { id }), badRequest, JSON.stringify(id));
    await assert.rejects(data.patch("codes", { id, changes: { v: 9 } }), badRequest);
    await assert.rejects(data.delete("codes", { id }), badRequest);
  }
  await assert.rejects(
    data.get("notes", { urlValues: { code: { $ne: "zzz" } } }),
    badRequest,
  );
  await assert.rejects(
    data.get("codes", { query: { where: { v: 1 } as unknown as string } }),
    badRequest,
  );
  // Nothing changed; plain values still work.
  assert.equal((await data.get("codes", { id: "a" })).body.v, 1);
  assert.equal((await data.get("codes", { id: "b" })).body.v, 2);
  const notes = await data.get("notes", { urlValues: { code: "a" } });
  assert.equal(notes.body._items.length, 1);
});
