/**
 * ETags reveal nothing of hidden content: they are not a hash anyone could recompute from
 * the visible fields and a guessed hidden value, yet they change with every write (a hidden
 * field alone included), conditional requests work with them, versions keep theirs, and
 * documents written outside the API get one every instance sharing the store agrees on.
 * Oplog entries of writes through an inclusive view carry nothing outside the view.
 */
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { type Running, scenario } from "../support/harness.ts";
import type { Client, Json } from "../support/client.ts";
import { canonicalEjson, ObjectId } from "../../src/doc/bson.ts";
import type { Doc } from "../../src/store/store.ts";
import { createService } from "../../src/mod.ts";
import { createLogger } from "../../src/log.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
  OPLOG_METHODS: ["POST", "PATCH", "PUT", "DELETE"],
  OPLOG_CHANGE_METHODS: ["POST", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    staff: {
      hidden_fields: ["salary", "pin"],
      versioning: true,
      schema: {
        name: { type: "string" },
        salary: { type: "integer" },
        pin: { type: "string" },
        tags: { type: "list", schema: { type: "string" } },
      },
    },
    // An inclusive view of the same collection: only `name` is readable (and logged) through it.
    names: {
      url: "names",
      datasource: { source: "staff", projection: { name: 1 } },
      schema: { name: { type: "string" } },
    },
  },
};

/** Eve's ETag of a stored document: SHA-1 of it without the ETag (and links). */
function eveEtag(stored: Doc): string {
  const { _etag, _links, ...rest } = stored;
  return createHash("sha1").update(canonicalEjson(rest)).digest("hex");
}

/**
 * A hidden value no ETag or id can hold (not hex), and whether an answer shows the hidden
 * fields: their names, or the PIN (a number could appear inside an ETag or an id by chance).
 */
const PIN = "pin-zq-secret";
const leaks = (text: string) =>
  text.includes('"salary"') || text.includes('"pin"') || text.includes(PIN);

async function stored(running: Running, id: string): Promise<Doc> {
  const doc = await running.service.store.collection("staff").findOne({
    _id: ObjectId.createFromHexString(id),
  });
  assert.ok(doc, "the document is stored");
  return doc;
}

/**
 * A read whose ETag field says what its header says. A version read's header also names the
 * latest version number (as in Eve: a new version makes every cached older one stale).
 */
async function read(api: Client, path: string): Promise<Json> {
  const res = await api.get(path);
  assert.equal(res.status, 200, res.text);
  const latest = path.includes("?version=") ? String(res.body._latest_version) : "";
  assert.equal(res.headers.get("etag"), `"${res.body._etag}${latest}"`);
  return res.body;
}

scenario("an ETag does not tell a hidden value", SETTINGS, async (api, running) => {
  const salaries = [50000, 50001];
  const docs = [];
  for (const salary of salaries) docs.push(await api.create("staff", { name: "x", salary }));
  const etags = [];
  for (const doc of docs) {
    const shown = await read(api, `staff/${doc._id}`);
    assert.ok(!("salary" in shown), "the salary is hidden");
    assert.equal(shown._etag, doc._etag);
    assert.match(shown._etag, /^[0-9a-f]{40}$/);
    etags.push(shown._etag);
  }
  assert.notEqual(etags[0], etags[1]);
  // Everything a reader sees, plus each candidate salary, hashed as Eve does: no candidate
  // (the right one included) reproduces either ETag.
  for (const [i, doc] of docs.entries()) {
    const whole = await stored(running, doc._id);
    for (let candidate = 49990; candidate <= 50010; candidate++) {
      const guess = eveEtag({ ...whole, salary: candidate });
      assert.ok(!etags.includes(guess), `candidate ${candidate} reproduces an ETag (doc ${i})`);
    }
  }
});

scenario("a write of a hidden field alone changes the ETag", SETTINGS, async (api) => {
  const doc = await api.create("staff", { name: "ann", salary: 1, pin: "1234" });
  const path = `staff/${doc._id}`;
  const patched = await api.patch(path, { pin: "9999" }, { "if-match": doc._etag });
  assert.equal(patched.status, 200, patched.text);
  assert.notEqual(patched.body._etag, doc._etag);
  const now = await read(api, path);
  assert.equal(now._etag, patched.body._etag);
  // The visible fields did not change; the ETag did, and conditional requests follow it.
  assert.equal(now.name, "ann");
  assert.equal((await api.get(path, { "if-none-match": `"${doc._etag}"` })).status, 200);
  assert.equal((await api.get(path, { "if-none-match": `"${now._etag}"` })).status, 304);
  const stale = await api.patch(path, { salary: 2 }, { "if-match": doc._etag });
  assert.equal(stale.status, 412);
  const again = await api.patch(path, { salary: 2 }, { "if-match": now._etag });
  assert.equal(again.status, 200, again.text);
  assert.notEqual(again.body._etag, now._etag);
  // Each version keeps the ETag it had when it was current.
  for (const [n, etag] of [doc._etag, patched.body._etag, again.body._etag].entries()) {
    const version = await read(api, `${path}?version=${n + 1}`);
    assert.equal(version._etag, etag, `version ${n + 1}`);
    const tag = `"${etag}${version._latest_version}"`;
    const cached = await api.get(`${path}?version=${n + 1}`, { "if-none-match": tag });
    assert.equal(cached.status, 304);
  }
});

scenario("rewriting the same content still gives a new ETag", SETTINGS, async (api) => {
  const doc = await api.create("staff", { name: "bo", salary: 3 });
  const path = `staff/${doc._id}`;
  const put = await api.put(path, { name: "bo", salary: 3 }, { "if-match": doc._etag });
  assert.equal(put.status, 200, put.text);
  assert.notEqual(put.body._etag, doc._etag);
  assert.equal((await api.delete(path, { "if-match": doc._etag })).status, 412);
  assert.equal((await api.delete(path, { "if-match": put.body._etag })).status, 204);
});

scenario("a document written outside the API: a keyed ETag instances agree on", SETTINGS, async (
  api,
  running,
) => {
  const id = new ObjectId();
  const path = `staff/${id.toHexString()}`;
  const collection = running.service.store.collection("staff");
  await collection.insertMany([{ _id: id, name: "cy", salary: 70000 }]);
  const first = await read(api, path);
  assert.match(first._etag, /^[0-9a-f]{40}$/);
  assert.equal((await read(api, path))._etag, first._etag, "stable while unchanged");
  const list = await api.get(`staff?where=${encodeURIComponent('{"name":"cy"}')}`);
  assert.equal(list.body._items[0]._etag, first._etag);
  assert.notEqual(first._etag, eveEtag(await stored(running, id.toHexString())));
  // A second instance on the same MongoDB agrees (the key is kept in the database). The
  // embedded store serves one instance only: its data directory is locked to one process.
  if (running.kind === "mongo") await assertSecondInstanceAgrees(running, path, first._etag);
  // A change outside the API to a hidden field alone changes it.
  await collection.updateOne({ _id: id }, { $set: { salary: 70001 } });
  const changed = await read(api, path);
  assert.notEqual(changed._etag, first._etag);
  assert.equal((await api.get(path, { "if-none-match": `"${changed._etag}"` })).status, 304);
  assert.equal((await api.patch(path, { name: "cyd" }, { "if-match": first._etag })).status, 412);
  const patched = await api.patch(path, { name: "cyd" }, { "if-match": changed._etag });
  assert.equal(patched.status, 200, patched.text);
  assert.equal((await read(api, path))._etag, patched.body._etag);
  // It predated versioning: its version 1 keeps the ETag it was edited with.
  assert.equal((await read(api, `${path}?version=1`))._etag, changed._etag);
  assert.equal((await read(api, `${path}?version=2`))._etag, patched.body._etag);
});

scenario("ETAG_SECRET keys the ETags of documents written outside the API", {
  ...SETTINGS,
  ETAG_SECRET: "a shared secret key",
}, async (api, running) => {
  const id = new ObjectId();
  await running.service.store.collection("staff").insertMany([{ _id: id, name: "di", pin: "7" }]);
  const whole = await stored(running, id.toHexString());
  const shown = await read(api, `staff/${id.toHexString()}`);
  const { _etag, ...rest } = whole;
  const keyed = createHmac("sha256", "a shared secret key").update(canonicalEjson(rest)).digest(
    "hex",
  );
  assert.equal(shown._etag, keyed.slice(0, 40));
  // No key was generated into the store: the setting is the key.
  assert.equal(await running.service.store.collection("_service_keys").count({}), 0);
});

scenario(
  "oplog entries of writes through an inclusive view carry only the view's fields",
  SETTINGS,
  async (
    api,
  ) => {
    const doc = await api.create("staff", { name: "ed", salary: 123456, pin: PIN, tags: ["t"] });
    const path = `names/${doc._id}`;
    const view = await read(api, path);
    assert.deepEqual(Object.keys(view).filter((k) => !k.startsWith("_")), ["name"]);
    const patched = await api.patch(path, { name: "eddie" }, { "if-match": view._etag });
    assert.equal(patched.status, 200, patched.text);
    // The whole document goes with a DELETE entry: through the view, only what it shows.
    assert.equal((await api.delete(path, { "if-match": patched.body._etag })).status, 204);
    const other = await api.create("staff", { name: "fay", salary: 123456, pin: PIN });
    const put = await api.put(`names/${other._id}`, { name: "fay" }, { "if-match": other._etag });
    assert.equal(put.status, 200, put.text);
    const log = await api.get(`oplog?where=${encodeURIComponent('{"r":"names"}')}`);
    assert.equal(log.status, 200, log.text);
    const entries: Json[] = log.body._items;
    assert.deepEqual(entries.map((e) => e.o), ["PATCH", "DELETE", "PUT"]);
    for (const entry of entries) {
      const fields = Object.keys(entry.c).filter((k) => !k.startsWith("_"));
      assert.deepEqual(fields, ["name"], `${entry.o}: ${JSON.stringify(entry.c)}`);
    }
    assert.ok(!leaks(log.text), log.text);
    // Through the full resource the hidden fields are still kept out of the log.
    const all = await api.get("oplog");
    assert.ok(!leaks(all.text), all.text);
    assert.ok(all.body._items.some((e: Json) => e.r === "staff" && e.c?.tags?.[0] === "t"));
  },
);

/** A second service on `running`'s MongoDB database shows `etag` for `path`. */
async function assertSecondInstanceAgrees(running: Running, path: string, etag: string) {
  const second = await createService({
    ...SETTINGS,
    STORE: "mongo",
    MONGO_URI: running.service.settings.MONGO_URI,
  }, { env: false, logger: createLogger(() => {}) });
  try {
    const res = await second.fetch(new Request(new URL(path, running.url)));
    assert.equal(res.status, 200);
    assert.equal((await res.json())._etag, etag);
  } finally {
    await second.close();
  }
}
