/**
 * Form-encoded and multipart bodies through HTTP: fields as strings (or JSON with
 * MULTIPART_FORM_FIELDS_AS_JSON), validated like JSON documents, numbers and booleans read
 * out of the text as Eve reads them; media files saved in the store's file storage and
 * returned as Base64.
 */
import assert from "node:assert/strict";
import { ObjectId } from "../../src/doc/bson.ts";
import { scenario } from "../support/harness.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  IF_MATCH: false,
  // Repeated keys become lists (Eve's default, false, keeps the first value).
  AUTO_COLLAPSE_MULTI_KEYS: true,
  DOMAIN: {
    people: {
      schema: {
        name: { type: "string", required: true },
        age: { type: "integer" },
        active: { type: "boolean" },
        tags: { type: "list", schema: { type: "string" } },
        born: { type: "datetime" },
        photo: { type: "media" },
        scans: { type: "list", schema: { type: "media" } },
      },
    },
  },
};

const HELLO = new TextEncoder().encode("hello, world");
const BYTES = new Uint8Array([0, 1, 2, 250, 251, 252]);
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

function form(
  fields: Record<string, string | string[]>,
  files: Record<string, Uint8Array<ArrayBuffer>[]> = {},
) {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    for (const x of Array.isArray(v) ? v : [v]) data.append(k, x);
  }
  for (const [k, list] of Object.entries(files)) {
    list.forEach((bytes, i) =>
      data.append(k, new Blob([bytes], { type: "image/png" }), `${k}${i}.png`)
    );
  }
  return data;
}

scenario("form-encoded fields are strings; repeated keys are lists", SETTINGS, async (api) => {
  const body = new URLSearchParams([
    ["name", "Ada"],
    ["tags", "a"],
    ["tags", "b"],
    ["born", "Tue, 02 Apr 2013 10:29:13 GMT"],
  ]);
  const res = await api.request("POST", "people", { raw: body });
  assert.equal(res.status, 201, res.text);
  const item = (await api.get(`people/${res.body._id}`)).body;
  assert.equal(item.name, "Ada");
  assert.deepEqual(item.tags, ["a", "b"]);
  assert.equal(item.born, "Tue, 02 Apr 2013 10:29:13 GMT");
  // As in Eve, text spelling a number or a boolean is one for number and boolean fields.
  const typed = await api.request("POST", "people", {
    raw: new URLSearchParams({ name: "Ada", age: "37", active: "true" }),
  });
  assert.equal(typed.status, 201, typed.text);
  const stored = (await api.get(`people/${typed.body._id}`)).body;
  assert.equal(stored.age, 37);
  assert.equal(stored.active, true);
  const bad = await api.request("POST", "people", {
    raw: new URLSearchParams({ name: "Ada", age: "3.5", active: "yes", x: "1" }),
  });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.body._issues, {
    age: "must be of integer type",
    active: "must be of boolean type",
    x: "unknown field",
  });
});

scenario("multipart fields are strings unless MULTIPART_FORM_FIELDS_AS_JSON", SETTINGS, async (
  api,
) => {
  const ok = await api.request("POST", "people", { raw: form({ name: "Ada", tags: ["x", "y"] }) });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual((await api.get(`people/${ok.body._id}`)).body.tags, ["x", "y"]);
  const typed = await api.request("POST", "people", {
    raw: form({ name: "Ada", age: "37", active: "false" }),
  });
  assert.equal(typed.status, 201, typed.text);
  const stored = (await api.get(`people/${typed.body._id}`)).body;
  assert.equal(stored.age, 37);
  assert.equal(stored.active, false);
  const bad = await api.request("POST", "people", {
    raw: form({ name: "Ada", age: "x37", active: "maybe" }),
  });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.body._issues, {
    age: "must be of integer type",
    active: "must be of boolean type",
  });
});

scenario(
  "MULTIPART_FORM_FIELDS_AS_JSON: every non-file field is JSON",
  { ...SETTINGS, MULTIPART_FORM_FIELDS_AS_JSON: true },
  async (api) => {
    const res = await api.request("POST", "people", {
      raw: form(
        { name: '"Ada \\"the first\\""', age: "37", active: "true", tags: '["x"]' },
        { photo: [HELLO] },
      ),
    });
    assert.equal(res.status, 201, res.text);
    const item = (await api.get(`people/${res.body._id}`)).body;
    assert.equal(item.name, 'Ada "the first"');
    assert.equal(item.age, 37);
    assert.equal(item.active, true);
    assert.deepEqual(item.tags, ["x"]);
    // As in Eve, a field that is not JSON stays text, for validation to judge.
    const text = await api.request("POST", "people", { raw: form({ name: "Ada" }) });
    assert.equal(text.status, 201, text.text);
    assert.equal((await api.get(`people/${text.body._id}`)).body.name, "Ada");
    const bad = await api.request("POST", "people", { raw: form({ name: "Ada", age: "xyz" }) });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body._issues, { age: "must be of integer type" });
    const typed = await api.request("POST", "people", { raw: form({ name: "1" }) });
    assert.equal(typed.status, 422);
    assert.deepEqual(typed.body._issues, { name: "must be of string type" });
  },
);

scenario("a media file is saved in the file store and read back as Base64", SETTINGS, async (
  api,
  running,
) => {
  const res = await api.request("POST", "people", {
    raw: form({ name: "Ada" }, { photo: [BYTES] }),
  });
  assert.equal(res.status, 201, res.text);
  const stored = await running.service.store.collection("people").findOne({});
  assert.ok(stored!.photo instanceof ObjectId, `stored ${String(stored!.photo)}`);
  const file = await running.service.store.files.stat(stored!.photo as ObjectId);
  assert.equal(file?.filename, "photo0.png");
  assert.equal(file?.contentType, "image/png");
  assert.deepEqual(await running.service.store.files.read(stored!.photo as ObjectId), BYTES);
  const item = await api.get(`people/${res.body._id}`);
  assert.equal(item.body.photo, b64(BYTES));
});

scenario("repeated file keys fill a list of media", SETTINGS, async (api, running) => {
  const res = await api.request("POST", "people", {
    raw: form({ name: "Ada" }, { scans: [HELLO, BYTES] }),
  });
  assert.equal(res.status, 201, res.text);
  const stored = await running.service.store.collection("people").findOne({});
  const ids = stored!.scans as ObjectId[];
  assert.equal(ids.length, 2);
  assert.deepEqual(await running.service.store.files.read(ids[1]), BYTES);
  assert.deepEqual((await api.get(`people/${res.body._id}`)).body.scans, [b64(HELLO), b64(BYTES)]);
});

scenario(
  "AUTO_CREATE_LISTS: one file for a list of media becomes a list",
  { ...SETTINGS, AUTO_CREATE_LISTS: true },
  async (api, running) => {
    const res = await api.request("POST", "people", {
      raw: form({ name: "Ada" }, { scans: [HELLO] }),
    });
    assert.equal(res.status, 201, res.text);
    const stored = await running.service.store.collection("people").findOne({});
    assert.equal((stored!.scans as ObjectId[]).length, 1);
  },
);

scenario("a single file for a list of media is refused by default", SETTINGS, async (api) => {
  const res = await api.request("POST", "people", {
    raw: form({ name: "Ada" }, { scans: [HELLO] }),
  });
  assert.equal(res.status, 422);
  assert.deepEqual(res.body._issues, { scans: "must be of list type" });
});

scenario("replacing or deleting a document removes its old files", SETTINGS, async (
  api,
  running,
) => {
  const res = await api.request("POST", "people", {
    raw: form({ name: "Ada" }, { photo: [HELLO] }),
  });
  const files = running.service.store.files;
  const people = running.service.store.collection("people");
  const first = (await people.findOne({}))!.photo as ObjectId;
  const path = `people/${res.body._id}`;
  const put = await api.request("PUT", path, { raw: form({ name: "Ada" }, { photo: [BYTES] }) });
  assert.equal(put.status, 200, put.text);
  const second = (await people.findOne({}))!.photo as ObjectId;
  assert.notEqual(second.toHexString(), first.toHexString());
  assert.equal(await files.stat(first), null);
  const patch = await api.request("PATCH", path, { raw: form({ name: "Eve" }) });
  assert.equal(patch.status, 200, patch.text);
  assert.deepEqual(await files.read(second), BYTES);
  assert.equal((await api.delete(path)).status, 204);
  assert.equal(await files.stat(second), null);
});

scenario(
  "the write response carries the file when BANDWIDTH_SAVER is off; EXTENDED_MEDIA_INFO",
  { ...SETTINGS, BANDWIDTH_SAVER: false, EXTENDED_MEDIA_INFO: ["content_type", "name", "length"] },
  async (api) => {
    const res = await api.request("POST", "people", {
      raw: form({ name: "Ada" }, { photo: [HELLO] }),
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.photo, {
      file: b64(HELLO),
      content_type: "image/png",
      name: "photo0.png",
      length: HELLO.length,
    });
  },
);

scenario(
  "RETURN_MEDIA_AS_BASE64_STRING false omits the content",
  { ...SETTINGS, BANDWIDTH_SAVER: false, RETURN_MEDIA_AS_BASE64_STRING: false },
  async (api) => {
    const res = await api.request("POST", "people", {
      raw: form({ name: "Ada" }, { photo: [HELLO] }),
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.photo, null);
  },
);

scenario("a file for a field that is not media is refused", SETTINGS, async (api) => {
  const res = await api.request("POST", "people", {
    raw: form({}, { name: [HELLO] }),
  });
  assert.equal(res.status, 422);
  assert.deepEqual(res.body._issues, { name: "must be of string type" });
});

scenario("without AUTO_COLLAPSE_MULTI_KEYS a repeated key keeps its first value (Eve)", {
  ...SETTINGS,
  AUTO_COLLAPSE_MULTI_KEYS: false,
}, async (api) => {
  const res = await api.request("POST", "people", {
    raw: "name=ann&name=bob&tags=a",
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  assert.equal(res.status, 422, res.text); // tags must be a list
  const ok = await api.request("POST", "people", {
    raw: "name=ann&name=bob",
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  assert.equal(ok.status, 201, ok.text);
  assert.equal((await api.get(`people/${ok.body._id}`)).body.name, "ann");
});

scenario("MAX_FILE_SIZE: a larger file is 413 and nothing is stored", {
  ...SETTINGS,
  MAX_FILE_SIZE: 8,
}, async (api) => {
  const form = new FormData();
  form.append("name", "ann");
  form.append("photo", new Blob([HELLO], { type: "text/plain" }), "hello.txt");
  const res = await api.request("POST", "people", { raw: form });
  assert.equal(res.status, 413, res.text);
  assert.match(res.body._error.message, /MAX_FILE_SIZE/);
  assert.equal((await api.get("people")).body._meta.total, 0);
  const small = new FormData();
  small.append("name", "bob");
  small.append("photo", new Blob([BYTES], { type: "application/octet-stream" }), "b.bin");
  assert.equal((await api.request("POST", "people", { raw: small })).status, 201);
});
