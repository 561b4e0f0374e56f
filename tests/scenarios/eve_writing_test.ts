/**
 * Writing as Eve's own POST, PUT, PATCH and DELETE tests observe it: form fields read by
 * the schema's types, lists of one document, what a full write answer shows, the id of a
 * PUT, relations through untyped lists and DBRefs, bodies encoded twice, custom JSON media
 * types, the soft-deleted 404 as a cacheable answer, and `mongo_write_concern`.
 */
import assert from "node:assert/strict";
import {
  SANITIZED,
  scenario,
  startService,
  type StoreKind,
  STORES,
  storeSettings,
} from "../support/harness.ts";
import { jongodbGap, skipUnless } from "../support/skip.ts";
import { ObjectId } from "../../src/doc/bson.ts";

const FORM = { "content-type": "application/x-www-form-urlencoded" };

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  AUTO_CREATE_LISTS: true,
  DOMAIN: {
    contacts: {
      schema: {
        ref: { type: "string" },
        anumber: { type: "integer" },
        afloat: { type: "float" },
        tags: { type: "list", schema: { type: "string" } },
        keyschema_dict: {
          type: "dict",
          keysrules: { type: "string", regex: "[a-z]+" },
          valuesrules: { type: "integer" },
        },
      },
    },
    invoices: {
      schema: {
        invoicing_contacts: { type: "list", data_relation: { resource: "contacts" } },
        persondbref: { type: "dbref", data_relation: { resource: "contacts" } },
      },
    },
  },
};

scenario("form fields are read by the schema's types (POST, PATCH, PUT)", SETTINGS, async (
  api,
) => {
  const created = await api.request("POST", "contacts", {
    raw: "anumber=34&afloat=1.5&tags=one",
    headers: FORM,
  });
  assert.equal(created.status, 201, created.text);
  const path = `contacts/${created.body._id}`;
  let stored = (await api.get(path)).body;
  assert.equal(stored.anumber, 34);
  assert.equal(stored.afloat, 1.5);
  // AUTO_CREATE_LISTS: one value sent for a list field is a list of one.
  assert.deepEqual(stored.tags, ["one"]);
  const patched = await api.request("PATCH", path, {
    raw: "anumber=35",
    headers: { ...FORM, "if-match": stored._etag },
  });
  assert.equal(patched.status, 200, patched.text);
  stored = (await api.get(path)).body;
  assert.equal(stored.anumber, 35);
  const put = await api.request("PUT", path, {
    raw: "anumber=36",
    headers: { ...FORM, "if-match": stored._etag },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal((await api.get(path)).body.anumber, 36);
  // JSON bodies keep their types: a string is no number there.
  const json = await api.post("contacts", { anumber: "34" });
  assert.equal(json.status, 422);
  const notNumber = await api.request("POST", "contacts", { raw: "anumber=3x", headers: FORM });
  assert.equal(notNumber.status, 422);
});

scenario("a list of one document is answered as that document", SETTINGS, async (api) => {
  const one = await api.post("contacts", [{ ref: "a" }]);
  assert.equal(one.status, 201);
  assert.equal(one.body._items, undefined);
  assert.equal(typeof one.body._id, "string");
  assert.equal(typeof one.body._etag, "string");
  assert.equal((await api.get(`contacts/${one.body._id}`)).body._etag, one.body._etag);
  const refused = await api.post("contacts", [{ ref: 1 }]);
  assert.equal(refused.status, 422);
  assert.deepEqual(refused.body._issues, { ref: "must be of string type" });
  const two = await api.post("contacts", [{ ref: "b" }, { ref: "c" }]);
  assert.equal(two.body._items.length, 2);
});

scenario("BANDWIDTH_SAVER false: the answer is the document as reads show it", {
  BANDWIDTH_SAVER: false,
  AUTH_SCHEMES: ["token"],
  AUTH_USERS: [{ username: "admin", token: "admin-token-0123456789" }],
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    contacts: {
      datasource: { projection: { ref: 1 } },
      schema: { ref: { type: "string" }, aninteger: { type: "integer" } },
    },
    notes: {
      auth_field: "username",
      hidden_fields: ["secret"],
      schema: { text: { type: "string" }, secret: { type: "string" } },
    },
  },
}, async (api) => {
  const auth = { authorization: "Bearer admin-token-0123456789" };
  const res = await api.post("contacts", { ref: "r", aninteger: 100 }, auth);
  assert.equal(res.status, 201);
  assert.equal(res.body.ref, "r");
  assert.equal(res.body.aninteger, undefined);
  assert.equal(typeof res.body._etag, "string");
  const note = await api.post("notes", { text: "t", secret: "s" }, auth);
  assert.equal(note.status, 201);
  assert.equal(note.body.text, "t");
  assert.equal(note.body.secret, undefined);
  assert.equal(note.body.username, undefined);
});

scenario("the id: PUT creating takes the URL's; no write changes it", SETTINGS, async (api) => {
  const id = new ObjectId().toHexString();
  const created = await api.put(`contacts/${id}`, {
    ref: "new",
    _id: new ObjectId().toHexString(),
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body._id, id);
  assert.equal((await api.get(`contacts/${id}`)).body.ref, "new");
  const etag = created.body._etag;
  const other = new ObjectId().toHexString();
  for (const method of ["PUT", "PATCH"]) {
    const res = await api.request(method, `contacts/${id}`, {
      body: { ref: "x", _id: other },
      headers: { "if-match": etag },
    });
    assert.equal(res.status, 400, method);
    assert.match(res.body._error.message, /immutable/);
  }
  // The same id is no change.
  const same = await api.patch(`contacts/${id}`, { ref: "y", _id: id }, { "if-match": etag });
  assert.equal(same.status, 200, same.text);
});

scenario("a body encoded twice reads as the document it holds", SETTINGS, async (api) => {
  const created = await api.request("POST", "contacts", {
    raw: JSON.stringify(JSON.stringify({ ref: "twice" })),
    headers: { "content-type": "application/json" },
  });
  assert.equal(created.status, 201, created.text);
  const patched = await api.request("PATCH", `contacts/${created.body._id}`, {
    raw: JSON.stringify(JSON.stringify({ ref: "again" })),
    headers: { "content-type": "application/json", "if-match": created.body._etag },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal((await api.get(`contacts/${created.body._id}`)).body.ref, "again");
  const text = await api.request("POST", "contacts", {
    raw: JSON.stringify("not a document"),
    headers: { "content-type": "application/json" },
  });
  assert.equal(text.status, 400);
});

scenario("relations: id strings in an untyped list, DBRefs with $col", SETTINGS, async (api) => {
  const contact = await api.create("contacts", { ref: "c" });
  const unknown = new ObjectId().toHexString();
  const missing = await api.post("invoices", { invoicing_contacts: [contact._id, unknown] });
  assert.equal(missing.status, 422);
  assert.equal(
    missing.body._issues.invoicing_contacts,
    `value '${unknown}' must exist in resource 'contacts', field '_id'`,
  );
  const ok = await api.post("invoices", { invoicing_contacts: [contact._id, contact._id] });
  assert.equal(ok.status, 201, ok.text);
  const dbref = await api.post("invoices", { persondbref: { $col: "contacts", $id: unknown } });
  assert.equal(dbref.status, 422);
  assert.equal(
    dbref.body._issues.persondbref,
    `value '${unknown}' must exist in resource 'contacts', field '_id'`,
  );
  const known = await api.post("invoices", { persondbref: { $col: "contacts", $id: contact._id } });
  assert.equal(known.status, 201, known.text);
});

scenario("keysrules problems are named under the key, as Eve words them", SETTINGS, async (
  api,
) => {
  assert.equal((await api.post("contacts", { keyschema_dict: { aaa: 1 } })).status, 201);
  const bad = await api.post("contacts", { keyschema_dict: { AAA: 1 } });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.body._issues, {
    keyschema_dict: { AAA: "value does not match regex '[a-z]+'" },
  });
});

scenario("JSON_REQUEST_CONTENT_TYPES: more media types read as JSON", {
  ...SETTINGS,
  JSON_REQUEST_CONTENT_TYPES: ["application/json", "application/csp-report"],
}, async (api) => {
  const res = await api.request("POST", "contacts", {
    raw: JSON.stringify({ ref: "csp" }),
    headers: { "content-type": "application/csp-report" },
  });
  assert.equal(res.status, 201, res.text);
  const other = await api.request("POST", "contacts", {
    raw: JSON.stringify({ ref: "csp" }),
    headers: { "content-type": "application/x-other" },
  });
  assert.equal(other.status, 415);
});

scenario("a soft-deleted item's 404 is cacheable: its ETag answers 304", {
  ...SETTINGS,
  SOFT_DELETE: true,
}, async (api) => {
  const created = await api.create("contacts", { ref: "gone" });
  const path = `contacts/${created._id}`;
  assert.equal((await api.delete(path, { "if-match": created._etag })).status, 204);
  const stale = await api.get(path, { "if-none-match": `"${created._etag}"` });
  assert.equal(stale.status, 404);
  const etag = stale.headers.get("etag")!;
  assert.notEqual(etag, `"${created._etag}"`);
  assert.equal((await api.get(path, { "if-none-match": etag })).status, 304);
});

const GENERIC_500 = {
  _status: "ERR",
  _error: { code: 500, message: "The server could not complete the request." },
};

const CONCERNED = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    contacts: { mongo_write_concern: { w: 2 }, schema: { ref: { type: "string" } } },
    tagged: { mongo_write_concern: { w: "dc-east" }, schema: { ref: { type: "string" } } },
    relaxed: { mongo_write_concern: { w: 1 }, schema: { ref: { type: "string" } } },
    unacknowledged: { mongo_write_concern: { w: 0 }, schema: { ref: { type: "string" } } },
    majority: { mongo_write_concern: { w: "majority" }, schema: { ref: { type: "string" } } },
  },
};

/**
 * Eve's write-concern tests: documents seeded (as Eve's fixtures are, straight into the
 * database) by a service without the concern, then the concern set and every write of the
 * tests sent to a service started on the same data.
 */
async function writeConcernCase(kind: StoreKind, softDelete: boolean) {
  const data = await storeSettings(kind);
  const embedded = kind === "embedded";
  const ids = [new ObjectId(), new ObjectId()];
  const schema = { ref: { type: "string" } };
  const plain = { ...CONCERNED, DOMAIN: { contacts: { schema }, tagged: { schema } } };
  const seeding = await startService({ ...plain, SOFT_DELETE: softDelete }, kind, {}, data);
  try {
    for (const name of ["contacts", "tagged"]) {
      const res = await seeding.api.post(name, ids.map((_id) => ({ _id: _id.toHexString() })));
      assert.equal(res.status, 201, res.text);
    }
  } finally {
    await seeding.stop();
  }
  const running = await startService({ ...CONCERNED, SOFT_DELETE: softDelete }, kind, {}, data);
  const api = running.api;
  try {
    for (const path of ["relaxed", "unacknowledged", "majority"]) {
      assert.equal((await api.post(path, { ref: "a" })).status, 201, path);
    }
    for (const path of ["contacts", "tagged"]) {
      const item = `${path}/${ids[0].toHexString()}`;
      const before = await api.get(item);
      assert.equal(before.status, 200, before.text);
      const ifMatch = { "if-match": before.body._etag };
      const answers = [
        await api.post(path, { ref: "1234567890123456789054321" }),
        await api.patch(item, { ref: "X234567890123456789012345" }, ifMatch),
        await api.put(item, { ref: "X234567890123456789012345" }, ifMatch),
        await api.delete(item, ifMatch),
        await api.delete(path),
      ];
      for (const res of answers) {
        // The server's configuration fault, told in the generic words of a 500.
        assert.equal(res.status, 500, `${path}: ${res.text}`);
        assert.deepEqual(res.body, GENERIC_500);
      }
      if (!embedded) continue; // MongoDB's primary has written before it reports the error.
      // The embedded store refused each write before changing anything.
      const after = await api.get(path);
      assert.equal(after.body._meta.total, 2, path);
      const same = await api.get(item);
      assert.equal(same.status, 200);
      assert.deepEqual(same.body, before.body);
    }
    if (!embedded) return;
    for (const name of ["contacts", "tagged"]) {
      assert.ok(
        running.service.warnings.some((w) =>
          w.startsWith(`DOMAIN.${name}.mongo_write_concern: w: `) && w.includes("one node")
        ),
        JSON.stringify(running.service.warnings),
      );
    }
    assert.ok(
      !running.service.warnings.some((w) => /DOMAIN\.(relaxed|unacknowledged|majority)\b/.test(w)),
    );
  } finally {
    await running.stop();
    if (embedded) await Deno.remove(data.DATA_DIR as string, { recursive: true });
  }
}

for (const kind of STORES) {
  for (const softDelete of [false, true]) {
    // jongodb accepts any write concern; on a real single-node MongoDB (MONGO_URI) it runs.
    const emulated = kind === "mongo" && !Deno.env.get("MONGO_URI");
    Deno.test({
      ...skipUnless(
        `[${kind}] Test${softDelete ? "SoftDelete" : "Delete"}.test_delete_write_concern, ` +
          "test_delete_from_resource_endpoint_write_concern, TestPost.test_post_write_concern, " +
          "TestPatch/TestPut.test_*_write_concern_fail: w: 2 on one node is a 500",
        emulated ? jongodbGap("write-concern") : null,
      ),
      sanitizeOps: SANITIZED[kind],
      sanitizeResources: SANITIZED[kind],
      fn: () => writeConcernCase(kind, softDelete),
    });
  }
}

/** Eve's `credit_rules` (tests/test_settings.py). */
const CREDIT_RULES = {
  allow_unknown: true,
  schema: {
    name: { type: "string" },
    amount: { type: "float", default: 0.00, min: 0.00, required: true },
    start: { type: "string", required: true },
    duration: {
      type: "string",
      allowed: ["days", "weeks", "months", "years", "one-time"],
      required: true,
    },
    prepaid: { type: "boolean", default: false },
    expiration_duration: {
      type: "string",
      allowed: ["days", "weeks", "months", "years"],
      required: false,
    },
  },
};

for (const bandwidthSaver of [true, false]) {
  scenario(
    `TestPost.test_post_bandwidth_saver_credit_rule_broken (BANDWIDTH_SAVER ${bandwidthSaver})`,
    {
      RESOURCE_METHODS: ["GET", "POST", "DELETE"],
      ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
      BANDWIDTH_SAVER: bandwidthSaver,
      DOMAIN: { credit_rules: CREDIT_RULES },
    },
    async (api) => {
      const data = [{
        amount: 300.0,
        duration: "months",
        name: "Bandwidth Saver:True, Projection:True",
        start: "2020-03-28T06:00:00 UTC",
      }];
      const r = await api.post("credit_rules", data);
      assert.equal(r.status, 201, r.text);
      // assertPostResponse: a list of one is answered as the document.
      const item = r.body;
      assert.equal(item._items, undefined);
      assert.equal(item._status, "OK");
      assert.equal(item._issues, undefined);
      assert.match(item._id, /^[0-9a-f]{24}$/);
      assert.ok(item._updated);
      assert.ok(item._links.self.title);
      assert.ok(item._links.self.href.includes(`/${item._id}`));
      assert.equal(typeof item._etag, "string");
      if (bandwidthSaver) assert.equal("amount" in item, false);
      else {
        for (const f of ["amount", "duration", "name", "start"]) assert.ok(f in item, f);
      }
      const got = await api.get(`credit_rules/${item._id}`);
      assert.equal(got.status, 200);
      assert.equal(got.body._etag, item._etag);
    },
  );
}
