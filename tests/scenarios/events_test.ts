/**
 * Request events (on_pre_<METHOD> / on_post_<METHOD>), callback order and forms, aborts and
 * failures of callbacks, and the structured request log.
 */
import assert from "node:assert/strict";
import { Events, HttpError } from "../../src/mod.ts";
import { ObjectId } from "../../src/doc/bson.ts";
import { scenario } from "../support/harness.ts";
import { memoryLogger, record } from "../events/record.ts";
import { createLogger, logContext, type RequestFields } from "../../src/log.ts";
import { GENERIC_500 } from "../support/assertions.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    notes: {
      schema: { text: { type: "string", required: true }, owner: { type: "string" } },
    },
  },
};

/** The If-Match header for a document's current representation. */
const ifMatch = (doc: { _etag: string }) => ({ "if-match": doc._etag });

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

scenario(
  "both forms are raised, generic first, several callbacks in registration order, sync or async",
  SETTINGS,
  async (api, { service }) => {
    const seen: string[] = [];
    service.events
      .on("on_pre_GET", (resource, request, lookup) => {
        seen.push(`pre ${resource} ${request.method} ${JSON.stringify(lookup)}`);
      })
      .on("on_pre_GET", async () => {
        await delay(5);
        seen.push("pre async");
      })
      .on("on_pre_GET_notes", (...args: unknown[]) => {
        seen.push(`pre_notes ${args.length}`);
      })
      .on("on_post_GET", (resource, _request, payload) => {
        seen.push(`post ${resource} ${payload.status}`);
      })
      .on("on_post_GET_notes", (...args: unknown[]) => {
        seen.push(`post_notes ${args.length}`);
      });
    assert.equal((await api.get("notes")).status, 200);
    assert.deepEqual(seen, [
      "pre notes GET {}",
      "pre async",
      "pre_notes 2",
      "post notes 200",
      "post_notes 2",
    ]);
    seen.length = 0;
    assert.equal((await api.head("notes")).status, 200);
    assert.deepEqual(seen, [
      "pre notes HEAD {}",
      "pre async",
      "pre_notes 2",
      "post notes 200",
      "post_notes 2",
    ]);
  },
);

scenario(
  "on_pre_<METHOD> gets the request, and the lookup except for POST",
  SETTINGS,
  async (api, { service }) => {
    const calls = record(service.events, [
      "on_pre_GET",
      "on_pre_POST",
      "on_pre_POST_notes",
      "on_pre_PATCH",
      "on_pre_PUT",
      "on_pre_DELETE",
      "on_pre_DELETE_notes",
    ]);
    const note = await api.create("notes?src=test", { text: "a" });
    await api.get(`notes/${note._id}?pretty`);
    const patched = await api.patch(`notes/${note._id}`, { text: "b" }, ifMatch(note));
    const put = await api.put(`notes/${note._id}`, { text: "c" }, ifMatch(patched.body));
    await api.delete(`notes/${note._id}`, ifMatch(put.body));
    await api.delete("notes");
    assert.equal(patched.status, 200);
    assert.equal(put.status, 200);

    assert.deepEqual(calls.map((c) => [c.event, c.args.length]), [
      ["on_pre_POST", 2],
      ["on_pre_POST_notes", 1],
      ["on_pre_GET", 3],
      ["on_pre_PATCH", 3],
      ["on_pre_PUT", 3],
      ["on_pre_DELETE", 3],
      ["on_pre_DELETE_notes", 2],
      ["on_pre_DELETE", 3],
      ["on_pre_DELETE_notes", 2],
    ]);
    const [post, postNotes, get, patch, putCall, del, , delAll] = calls;
    assert.equal(post.args[0], "notes");
    const request = post.args[1] as Request;
    assert.ok(request instanceof Request);
    assert.equal(request.url, `${api.base}notes?src=test`);
    assert.equal(request.method, "POST");
    assert.equal(postNotes.args[0], request);
    assert.equal((get.args[1] as Request).url, `${api.base}notes/${note._id}?pretty`);
    for (const call of [get, patch, putCall, del]) {
      assert.equal(call.args[0], "notes");
      const lookup = call.args[2] as Record<string, unknown>;
      assert.deepEqual(Object.keys(lookup), ["_id"]);
      assert.ok(lookup._id instanceof ObjectId);
      assert.equal((lookup._id as ObjectId).toHexString(), note._id);
    }
    assert.equal((putCall.args[1] as Request).method, "PUT");
    assert.deepEqual(delAll.args[2], {});
  },
);

scenario(
  "a lookup altered in on_pre_GET filters collection and item reads",
  SETTINGS,
  async (api, { service }) => {
    service.events.on("on_pre_GET_notes", (request: Request, lookup: Record<string, unknown>) => {
      lookup.owner = request.headers.get("x-user") ?? "nobody";
    });
    const a = await api.create("notes", { text: "a1", owner: "ann" });
    await api.create("notes", { text: "a2", owner: "ann" });
    const b = await api.create("notes", { text: "b1", owner: "bob" });

    const anns = await api.get("notes?sort=text", { "x-user": "ann" });
    assert.equal(anns.status, 200);
    assert.deepEqual(anns.body._items.map((n: Json) => n.text), ["a1", "a2"]);
    assert.equal(anns.body._meta.total, 2);
    const none = await api.get("notes");
    assert.deepEqual(none.body._items, []);

    assert.equal((await api.get(`notes/${b._id}`, { "x-user": "ann" })).status, 404);
    const own = await api.get(`notes/${b._id}`, { "x-user": "bob" });
    assert.equal(own.status, 200);
    assert.equal(own.body.text, "b1");
    assert.equal((await api.get(`notes/${a._id}`, { "x-user": "ann" })).status, 200);
  },
);

scenario(
  "a lookup altered in on_pre_PATCH/PUT/DELETE restricts what a write reaches",
  // Without upsert: a PUT that finds nothing would create the document instead.
  { ...SETTINGS, UPSERT_ON_PUT: false },
  async (api, { service }) => {
    const restrict = (request: Request, lookup: Record<string, unknown>) => {
      lookup.owner = request.headers.get("x-user") ?? "nobody";
    };
    service.events
      .on("on_pre_PATCH_notes", restrict)
      .on("on_pre_PUT_notes", restrict)
      .on("on_pre_DELETE_notes", restrict);
    await api.create("notes", { text: "a1", owner: "ann" });
    const b = await api.create("notes", { text: "b1", owner: "bob" });
    const ann = { "x-user": "ann", ...ifMatch(b) };

    assert.equal((await api.patch(`notes/${b._id}`, { text: "x" }, ann)).status, 404);
    assert.equal((await api.put(`notes/${b._id}`, { text: "x" }, ann)).status, 404);
    assert.equal((await api.delete(`notes/${b._id}`, ann)).status, 404);
    const untouched = await api.get(`notes/${b._id}`);
    assert.equal(untouched.body.text, "b1");
    assert.equal(untouched.body._etag, b._etag);

    assert.equal((await api.delete("notes", ann)).status, 204);
    const left = await api.get("notes");
    assert.deepEqual(left.body._items.map((n: Json) => n.text), ["b1"]);

    const bob = { "x-user": "bob", ...ifMatch(b) };
    const patched = await api.patch(`notes/${b._id}`, { text: "b2" }, bob);
    assert.equal(patched.status, 200);
  },
);

scenario(
  "on_post_<METHOD> sees the reply the client gets, and its changes reach the client",
  SETTINGS,
  async (api, { service }) => {
    const payloads: Record<string, Json> = {};
    for (const method of ["GET", "POST", "PATCH", "PUT", "DELETE"]) {
      service.events.on(`on_post_${method}_notes`, (request: Request, payload: Json) => {
        assert.equal(request.method, method);
        payloads[method] = { status: payload.status, body: payload.body };
      });
    }
    service.events.on("on_post_GET", (_resource: string, _request: Request, payload: Json) => {
      payload.body.hooked = true;
      payload.headers["x-hooked"] = "yes";
    });

    const created = await api.create("notes", { text: "a" });
    assert.equal(payloads.POST.status, 201);
    // The body is the reply before rendering: ids are still ObjectIds.
    assert.ok(payloads.POST.body._id instanceof ObjectId);
    assert.equal(payloads.POST.body._id.toHexString(), created._id);
    assert.equal(payloads.POST.body._status, "OK");

    const list = await api.get("notes");
    assert.equal(list.body.hooked, true);
    assert.equal(list.headers.get("x-hooked"), "yes");
    assert.equal(payloads.GET.status, 200);
    assert.equal(payloads.GET.body._items.length, 1);
    assert.equal(payloads.GET.body.hooked, true);
    assert.equal(payloads.GET.body._meta.total, 1);

    const patched = await api.patch(`notes/${created._id}`, { text: "b" }, ifMatch(created));
    assert.equal(payloads.PATCH.status, 200);
    assert.equal(payloads.PATCH.body._etag, patched.body._etag);
    const put = await api.put(`notes/${created._id}`, { text: "c" }, ifMatch(patched.body));
    assert.equal(payloads.PUT.status, 200);
    assert.equal(payloads.PUT.body._etag, put.body._etag);
    await api.delete(`notes/${created._id}`, ifMatch(put.body));
    assert.deepEqual(payloads.DELETE, { status: 204, body: undefined });
  },
);

scenario(
  "an HttpError thrown by on_pre_<METHOD> answers with its status and writes nothing",
  SETTINGS,
  async (api, { service }) => {
    const after = record(service.events, ["on_post_POST", "on_insert", "on_inserted"]);
    service.events.on("on_pre_POST_notes", () => {
      throw new HttpError(403, "posting is closed");
    });
    const res = await api.post("notes", { text: "a" });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, {
      _status: "ERR",
      _error: { code: 403, message: "posting is closed" },
    });
    assert.deepEqual(after, []);
    assert.equal((await api.get("notes")).body._meta.total, 0);
  },
);

scenario(
  "links that fetched and post hooks change are rendered as changed (dates formatted)",
  SETTINGS,
  async (api, { service }) => {
    const note = await api.create("notes", { text: "a" });
    const epoch = "Thu, 01 Jan 1970 00:00:00 GMT";
    // Without listeners, rendering passes the service's own links as they are; a listener
    // that changes them must see its changes converted like any other value.
    const stamp = (doc: Json, name: string) => {
      doc._links.self.title = name;
      doc._links[name] = { href: "x", when: new Date(0) };
    };
    service.events.on(
      "on_fetched_resource_notes",
      (body: Json) => stamp(body._items[0], "fetched"),
    );
    let list = await api.get("notes");
    assert.equal(list.body._items[0]._links.self.title, "fetched");
    assert.equal(list.body._items[0]._links.fetched.when, epoch);

    service.events.on("on_fetched_item_notes", (doc: Json) => stamp(doc, "item"));
    const item = await api.get(`notes/${note._id}`);
    assert.equal(item.body._links.self.title, "item");
    assert.equal(item.body._links.item.when, epoch);

    service.events.on("on_post_GET_notes", (_request: Request, payload: Json) => {
      const doc = payload.body._items ? payload.body._items[0] : payload.body;
      stamp(doc, "post");
    });
    list = await api.get("notes");
    assert.equal(list.body._items[0]._links.self.title, "post");
    assert.equal(list.body._items[0]._links.post.when, epoch);
    assert.equal(list.body._items[0]._links.fetched.when, epoch);
    const xml = await api.get(`notes/${note._id}`, { accept: "application/xml" });
    assert.ok(xml.text.includes('title="post"'), xml.text);
  },
);

const failing = memoryLogger();

scenario(
  "a callback throwing a plain error gives a generic 500, a logged stack, and no write",
  SETTINGS,
  async (api, { service }) => {
    failing.clear();
    const note = await api.create("notes", { text: "a" });
    service.events.on("on_insert", () => {
      throw new Error("secret detail");
    });
    service.events.on("on_update_notes", () => {
      throw new TypeError("another secret");
    });
    const res = await api.post("notes?src=test", { text: "b" });
    assert.equal(res.status, 500);
    assert.deepEqual(res.body, GENERIC_500);
    assert.ok(!res.text.includes("secret"));
    assert.equal((await api.get("notes")).body._meta.total, 1);

    const patch = await api.patch(`notes/${note._id}`, { text: "changed" }, ifMatch(note));
    assert.equal(patch.status, 500);
    assert.deepEqual(patch.body, GENERIC_500);
    const stored = await api.get(`notes/${note._id}`);
    assert.equal(stored.body.text, "a");
    assert.equal(stored.body._etag, note._etag);

    const errors = failing.records.filter((r) => r.level === "error");
    assert.equal(errors.length, 2);
    assert.equal(errors[0].clientip, "127.0.0.1");
    assert.equal(errors[0].url, `${api.base}notes?src=test`);
    assert.equal(errors[0].method, "POST");
    assert.match(String(errors[0].error), /^Error: secret detail\n\s+at /);
    assert.equal(errors[1].method, "PATCH");
    assert.match(String(errors[1].error), /^TypeError: another secret\n\s+at /);
  },
  { logger: failing.logger },
);

const shared = new Events();
let sharedCalls = 0;
shared.on("on_inserted_notes", () => {
  sharedCalls++;
});

scenario(
  "callbacks registered before the service is built (options.events) are raised",
  SETTINGS,
  async (api, { service }) => {
    sharedCalls = 0;
    assert.equal(service.events, shared);
    await api.create("notes", { text: "a" });
    await api.create("notes", [{ text: "b" }, { text: "c" }]);
    assert.equal(sharedCalls, 2);
  },
  { events: shared },
);

const requests = memoryLogger();

scenario(
  "POST, PATCH and PUT are logged with clientip, full url and method; reads and deletes not",
  SETTINGS,
  async (api) => {
    requests.clear();
    const note = await api.create("notes?src=a", { text: "a" });
    await api.get("notes?where=%7B%7D");
    const patched = await api.patch(`notes/${note._id}?src=b`, { text: "b" }, ifMatch(note));
    const put = await api.put(`notes/${note._id}`, { text: "c" }, ifMatch(patched.body));
    await api.delete(`notes/${note._id}`, ifMatch(put.body));
    const logged = requests.records.map((r) => [r.method, r.url, r.clientip, r.status]);
    assert.deepEqual(logged, [
      ["POST", `${api.base}notes?src=a`, "127.0.0.1", 201],
      ["PATCH", `${api.base}notes/${note._id}?src=b`, "127.0.0.1", 200],
      ["PUT", `${api.base}notes/${note._id}`, "127.0.0.1", 200],
    ]);
    for (const r of requests.records) assert.equal(r.level, "info");
  },
  { logger: requests.logger },
);

const database = memoryLogger();

scenario(
  "a database-layer exception is logged with the request fields",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: {
      codes: {
        schema: { code: { type: "string" } },
        mongo_indexes: { code_unique: [[["code", 1]], { unique: true }] },
      },
    },
  },
  async (api) => {
    database.clear();
    await api.create("codes", { code: "x" });
    const dup = await api.post("codes?src=dup", { code: "x" });
    assert.equal(dup.status, 422);
    const failures = database.records.filter((r) => r.operation !== undefined);
    assert.equal(failures.length, 1);
    const [failure] = failures;
    assert.equal(failure.level, "warn");
    assert.equal(failure.operation, "insertMany");
    assert.equal(failure.collection, "codes");
    assert.match(String(failure.error), /DuplicateKeyError/);
    assert.equal(failure.clientip, "127.0.0.1");
    assert.equal(failure.url, `${api.base}codes?src=dup`);
    assert.equal(failure.method, "POST");
    assert.match(String(failure.requestid), /^[0-9a-f-]{36}$/);

    // A POST run as PATCH (X-HTTP-Method-Override): the record names the method it ran as.
    const other = await api.create("codes", { code: "y" });
    const overridden = await api.request("POST", `codes/${other._id}`, {
      body: { code: "x" },
      headers: { "x-http-method-override": "PATCH", "if-match": other._etag },
    });
    assert.equal(overridden.status, 422);
    const patchFailure = database.records.filter((r) => r.operation !== undefined)[1];
    assert.equal(patchFailure.method, "PATCH");
    assert.equal(patchFailure.url, `${api.base}codes/${other._id}`);
  },
  { logger: database.logger },
);

const labelled = memoryLogger();

scenario(
  "hooks run in the request's log context; the service's own records carry the request's fields",
  {
    ...SETTINGS,
    DOMAIN: {
      ...SETTINGS.DOMAIN,
      quiet: { allowed_filters: [], schema: { n: { type: "integer" } } },
    },
  },
  async (api, { service }) => {
    labelled.clear();
    const seen: Array<RequestFields | undefined> = [];
    const hookRecords: Array<Record<string, unknown>> = [];
    const hookLog = createLogger((r) => hookRecords.push(r), "info");
    const note = await api.create("notes", { text: "a" });
    service.events.on("on_fetched_item_notes", async () => {
      await delay(1);
      seen.push(logContext() && { ...logContext()! });
      hookLog.log("info", "fetched");
    });
    const url = `notes/${note._id}?trace=1`;
    assert.equal((await api.get(url, { "x-request-id": "hook-1" })).status, 200);
    const expected = {
      requestid: "hook-1",
      clientip: "127.0.0.1",
      url: `${api.base}${url}`,
      method: "GET",
    };
    assert.deepEqual(seen, [expected]);
    assert.equal(hookRecords.length, 1);
    assert.equal(hookRecords[0].requestid, "hook-1");
    assert.equal(hookRecords[0].url, expected.url);
    // Outside a request there is no context.
    assert.equal(logContext(), undefined);

    // A record the service writes below the HTTP layer (a debug one here).
    const where = `quiet?where=${encodeURIComponent('{"n":1}')}`;
    assert.equal((await api.get(where, { "x-request-id": "svc-2" })).status, 200);
    const ignored = labelled.records.filter((r) => r.message === "where ignored: filtering is off");
    assert.equal(ignored.length, 1, JSON.stringify(labelled.records));
    assert.equal(ignored[0].requestid, "svc-2");
    assert.equal(ignored[0].url, `${api.base}${where}`);
    assert.equal(ignored[0].method, "GET");
    assert.equal(ignored[0].clientip, "127.0.0.1");
  },
  { logger: labelled.logger },
);
