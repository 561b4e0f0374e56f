/**
 * Nothing leaks: every read path applies the resource's read policy (predefined filter, soft
 * delete, default projection, internal flag). Each scenario is written as the attack, then
 * the assertion that nothing hidden came back.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client, Json } from "../support/client.ts";
import { ObjectId } from "../../src/doc/bson.ts";

const SECRET = "hunter2";
const ACCOUNT = {
  username: { type: "string", unique: true },
  password: { type: "string" },
  email: { type: "string" },
  role: { type: "string" },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  JSONP_ARGUMENT: "callback",
  DOMAIN: {
    // `{password: 0}`: hidden from default responses (the spec lets a client ask for it).
    accounts: {
      schema: ACCOUNT,
      datasource: { projection: { password: 0 } },
      additional_lookup: { url: 'regex("[a-z]+")', field: "username" },
    },
    // An inclusive view of the same collection: nothing else is readable at all.
    members: {
      url: "members",
      schema: ACCOUNT,
      datasource: { source: "accounts", projection: { username: 1, role: 1 } },
      additional_lookup: { url: 'regex("[a-z]+")', field: "username" },
    },
    vaccounts: {
      versioning: true,
      schema: { ...ACCOUNT, age: { type: "integer" } },
      datasource: { projection: { password: 0 } },
    },
    // A view of `vaccounts` with a predefined filter: its versions are filtered too.
    vadults: {
      versioning: true,
      schema: { ...ACCOUNT, age: { type: "integer" } },
      datasource: { source: "vaccounts", filter: { age: { $gte: 18 } } },
    },
    tickets: {
      schema: {
        title: { type: "string" },
        acct: {
          type: "objectid",
          data_relation: { resource: "accounts", embeddable: true },
        },
        member: {
          type: "objectid",
          data_relation: { resource: "members", embeddable: true },
        },
        vacct: {
          type: "dict",
          schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
          data_relation: { resource: "vaccounts", embeddable: true, version: true },
        },
      },
    },
    byrole: {
      url: "byrole",
      datasource: {
        source: "accounts",
        projection: { password: 0 },
        aggregation: { pipeline: [{ $match: { role: "$role" } }, { $sort: { username: 1 } }] },
      },
    },
  },
};

/** True when `secret` appears anywhere in a response. */
function leaks(res: { text: string }): boolean {
  return res.text.includes(SECRET);
}

async function seedAccount(api: Client, username = "ada", role = "admin") {
  return await api.create("accounts", {
    username,
    password: SECRET,
    email: `${username}@example.org`,
    role,
  });
}

scenario(
  "embedding applies the target's projection (exclusive, inclusive, versioned)",
  SETTINGS,
  async (api) => {
    const acct = await seedAccount(api);
    const v = await api.create("vaccounts", { username: "bob", password: SECRET, age: 30 });
    const ticket = await api.create("tickets", {
      title: "t",
      acct: acct._id,
      member: acct._id,
      vacct: { _id: v._id, _version: 1 },
    });
    const res = await api.get(
      `tickets/${ticket._id}?embedded={"acct":1,"member":1,"vacct":1}`,
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.acct.username, "ada");
    assert.equal(res.body.member.username, "ada");
    assert.equal(res.body.vacct.username, "bob");
    assert.equal(res.body.acct.password, undefined);
    assert.equal(res.body.member.password, undefined);
    assert.equal(res.body.member.email, undefined, "the inclusive view shows only its fields");
    assert.equal(res.body.vacct.password, undefined);
    assert.ok(!leaks(res), res.text);
    const list = await api.get(`tickets?embedded={"acct":1,"member":1,"vacct":1}`);
    assert.ok(!leaks(list), list.text);
  },
  { gaps: ["projection"] },
);

scenario(
  "version reads apply the projection and the predefined filter",
  SETTINGS,
  async (api) => {
    const v = await api.create("vaccounts", { username: "kid", password: SECRET, age: 10 });
    const p = await api.patch(`vaccounts/${v._id}`, { age: 20 }, { "if-match": v._etag });
    assert.equal(p.status, 200);
    for (const version of ["1", "2", "all", "diffs"]) {
      const res = await api.get(`vaccounts/${v._id}?version=${version}`);
      assert.equal(res.status, 200, version);
      assert.ok(!leaks(res), `version=${version}: ${res.text}`);
    }
    // Through the adults view, the document is visible now (age 20), but its version 1
    // (age 10) fails the view's filter and is not served.
    assert.equal((await api.get(`vadults/${v._id}`)).status, 200);
    assert.equal((await api.get(`vadults/${v._id}?version=2`)).status, 200);
    assert.equal((await api.get(`vadults/${v._id}?version=1`)).status, 404);
    const all = await api.get(`vadults/${v._id}?version=all`);
    assert.deepEqual(all.body._items.map((d: Json) => d._version), [2]);
  },
  { gaps: ["projection"] },
);

scenario("the aggregate parameter takes plain data only", SETTINGS, async (api) => {
  await seedAccount(api, "ada", "admin");
  await seedAccount(api, "bob", "user");
  const attacks = [
    { $role: { $ne: null } },
    { $role: { u: "$username", p: "$password" } },
    { $role: { doc: "$$ROOT" } },
    { $role: { $regex: "^a" } },
    { $role: { $function: { body: "function(){return 1}", args: [], lang: "js" } } },
    { $role: ["$password"] },
  ];
  for (const attack of attacks) {
    const res = await api.get(`byrole?aggregate=${encodeURIComponent(JSON.stringify(attack))}`);
    assert.equal(res.status, 400, JSON.stringify(attack));
    assert.ok(!leaks(res));
  }
  // A value nested too deep is refused too.
  let deep: unknown = "x";
  for (let i = 0; i < 50; i++) deep = { a: deep };
  const nested = await api.get(
    `byrole?aggregate=${encodeURIComponent(JSON.stringify({ $role: deep }))}`,
  );
  assert.equal(nested.status, 400);
  // A name without `$` is no placeholder: ignored, as in Eve, and it reaches nothing.
  const unnamed = await api.get(`byrole?aggregate=${encodeURIComponent('{"role":"admin"}')}`);
  assert.equal(unnamed.status, 200, unnamed.text);
  assert.ok(!leaks(unnamed));
  // Plain values work; a name that is not a placeholder of the pipeline is ignored.
  const ok = await api.get(`byrole?aggregate={"$role":"admin","$username":"x"}`);
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body._items.map((d: Json) => d.username), ["ada"]);
});

scenario(
  "an aggregation applies its own projection",
  SETTINGS,
  async (api) => {
    await seedAccount(api, "ada", "admin");
    const res = await api.get(`byrole?aggregate={"$role":"admin"}`);
    assert.equal(res.status, 200);
    assert.equal(res.body._items.length, 1);
    assert.ok(!leaks(res), res.text);
  },
);

const VIEWS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    people: {
      schema: { name: { type: "string" }, age: { type: "integer" }, role: { type: "string" } },
    },
    adults: {
      schema: { name: { type: "string" }, age: { type: "integer" } },
      datasource: { source: "people", filter: { age: { $gte: 18 } } },
    },
  },
};

scenario(
  "a view sharing a collection reads only its schema fields",
  VIEWS,
  async (api) => {
    await api.create("people", { name: "a", age: 30, role: "spy" });
    const res = await api.get(`adults?projection={"role":1}`);
    assert.equal(res.status, 200);
    assert.equal(res.body._items.length, 1);
    assert.equal(res.body._items[0].role, undefined);
    assert.ok(!res.text.includes("spy"));
    const plain = await api.get("adults");
    assert.equal(plain.body._items[0].role, undefined);
    assert.equal(plain.body._items[0].name, "a");
    assert.equal((await api.get(`adults?where={"role":"spy"}`)).status, 400);
    // The owner resource still sees everything.
    assert.equal((await api.get("people")).body._items[0].role, "spy");
  },
);

scenario("filters and sorts can't name a field an inclusive view hides", SETTINGS, async (api) => {
  await seedAccount(api);
  const oracles = [
    `members?where={"password":"${SECRET}"}`,
    `members?where={"$or":[{"password":"${SECRET}"}]}`,
    `members?where={"$expr":{"$eq":[{"$substrCP":["$password",0,1]},"h"]}}`,
    `members?where={"$expr":{"$eq":["$$ROOT.password","${SECRET}"]}}`,
    `members?where={"password.x":1}`,
    `members?where=password=="${SECRET}"`,
    `members?sort=password`,
    `members?sort=[("email",1)]`,
  ];
  for (const path of oracles) {
    const res = await api.get(path);
    assert.equal(res.status, 400, `${path}: ${res.text}`);
    assert.ok(!leaks(res));
  }
  // Readable fields still filter and sort.
  const ok = await api.get(`members?where={"username":"ada"}&sort=-role`);
  assert.equal(ok.status, 200);
  assert.equal(ok.body._items.length, 1);
});

const SOFT = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "DELETE"],
  DOMAIN: {
    notes: { soft_delete: true, schema: { text: { type: "string" } } },
    notelist: {
      url: "notelist",
      soft_delete: true,
      datasource: { source: "notes", aggregation: { pipeline: [{ $sort: { text: 1 } }] } },
    },
  },
};

scenario("aggregations leave soft-deleted documents out", SOFT, async (api) => {
  const a = await api.create("notes", { text: "a" });
  await api.create("notes", { text: "b" });
  const del = await api.delete(`notes/${a._id}`, { "if-match": a._etag });
  assert.equal(del.status, 204);
  const res = await api.get("notelist");
  assert.equal(res.status, 200);
  assert.deepEqual(res.body._items.map((d: Json) => d.text), ["b"]);
});

const INTERNAL = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    secrets: { internal_resource: true, schema: { value: { type: "string" } } },
    posts: {
      schema: {
        secret: { type: "objectid", data_relation: { resource: "secrets" } },
      },
    },
  },
};

scenario("relations into internal resources validate but are never embedded", INTERNAL, async (
  api,
  running,
) => {
  const secretId = new ObjectId();
  await running.service.store.collection("secrets").insertMany([{ _id: secretId, value: SECRET }]);
  const post = await api.create("posts", { secret: secretId.toHexString() });
  const res = await api.get(`posts/${post._id}?embedded={"secret":1}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.secret, secretId.toHexString());
  assert.ok(!leaks(res));
  assert.equal((await api.get("secrets")).status, 404);
});

scenario("X-HTTP-Method-Override is honoured on POST only", SETTINGS, async (api) => {
  await seedAccount(api);
  for (const method of ["GET", "HEAD"]) {
    const res = await api.request(method, "accounts", {
      headers: { "x-http-method-override": "DELETE" },
    });
    assert.equal(res.status, 400, method);
  }
  assert.equal((await api.get("accounts")).body._meta.total, 1, "nothing was deleted");
  const viaPost = await api.request("POST", "accounts", {
    headers: { "x-http-method-override": "DELETE" },
  });
  assert.equal(viaPost.status, 204);
  assert.equal((await api.get("accounts")).body._meta.total, 0);
});

/** Sends a raw HTTP/1.1 request and returns the status line and headers. */
async function rawRequest(url: string, lines: string[]): Promise<string> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  try {
    await conn.write(new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n"));
    const buffer = new Uint8Array(65536);
    let text = "";
    const deadline = Date.now() + 5000;
    while (!text.includes("\r\n\r\n") && Date.now() < deadline) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    return text;
  } finally {
    conn.close();
  }
}

scenario("the Host header never routes and never reaches Location", SETTINGS, async (api, r) => {
  await seedAccount(api);
  const hostile = await rawRequest(r.url, [
    "GET /members HTTP/1.1",
    "Host: x/accounts?",
    "Connection: close",
  ]);
  assert.match(hostile, /^HTTP\/1\.1 400/);
  const body = JSON.stringify({ username: "eve", password: SECRET });
  const created = await rawRequest(r.url, [
    "POST /accounts HTTP/1.1",
    "Host: evil.example",
    "Content-Type: application/json",
    `Content-Length: ${body.length}`,
    "Connection: close",
    "",
    body,
  ]);
  assert.match(created, /^HTTP\/1\.1 201/);
  assert.ok(!created.includes("evil.example"), created);
  assert.match(created, /\r\nlocation: \/accounts\/[0-9a-f]{24}\r\n/i);
});

scenario("PUBLIC_BASE_URL makes Location absolute", {
  ...SETTINGS,
  PUBLIC_BASE_URL: "https://api.example.org/",
}, async (api) => {
  const res = await api.post("accounts", { username: "ada" });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("location"), `https://api.example.org/accounts/${res.body._id}`);
});

scenario("If-Match: * does not satisfy ENFORCE_IF_MATCH", SETTINGS, async (api) => {
  const acct = await seedAccount(api);
  const res = await api.patch(`accounts/${acct._id}`, { role: "x" }, { "if-match": "*" });
  assert.equal(res.status, 412);
  const del = await api.delete(`accounts/${acct._id}`, { "if-match": "*" });
  assert.equal(del.status, 412);
  assert.equal((await api.get(`accounts/${acct._id}`)).body.role, "admin");
});

const SUB = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PUT"],
  DOMAIN: {
    users: { schema: { name: { type: "string" } } },
    invoices: {
      url: 'users/<regex("[a-f0-9]{24}"):owner>/invoices',
      schema: { owner: { type: "objectid" }, total: { type: "integer" } },
    },
  },
};

scenario("PUT on a sub-resource item outside the URL's scope is 404", SUB, async (api) => {
  const a = await api.create("users", { name: "a" });
  const b = await api.create("users", { name: "b" });
  const invoice = await api.create(`users/${a._id}/invoices`, { total: 5 });
  const res = await api.put(`users/${b._id}/invoices/${invoice._id}`, { total: 1 });
  assert.equal(res.status, 404);
  const still = await api.get(`users/${a._id}/invoices/${invoice._id}`);
  assert.equal(still.body.total, 5);
});

const VERSIONED_SOFT = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  DOMAIN: {
    docs: { versioning: true, soft_delete: true, schema: { title: { type: "string" } } },
    refs: {
      schema: {
        doc: {
          type: "dict",
          schema: { _id: { type: "objectid" }, _version: { type: "integer" } },
          data_relation: { resource: "docs", version: true },
        },
      },
    },
  },
};

scenario("a versioned reference to a soft-deleted version is refused", VERSIONED_SOFT, async (
  api,
) => {
  const doc = await api.create("docs", { title: "a" });
  assert.equal((await api.delete(`docs/${doc._id}`, { "if-match": doc._etag })).status, 204);
  // Version 2 is the deletion; version 1 (before it) stays a valid reference (spec).
  const deleted = await api.post("refs", { doc: { _id: doc._id, _version: 2 } });
  assert.equal(deleted.status, 422, deleted.text);
  const before = await api.post("refs", { doc: { _id: doc._id, _version: 1 } });
  assert.equal(before.status, 201, before.text);
});

const MEDIA = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  DOMAIN: {
    files: { versioning: true, schema: { name: { type: "string" }, data: { type: "media" } } },
    plain: { schema: { data: { type: "media" } } },
  },
};

function upload(name: string, content: string, extra: Record<string, string> = {}): FormData {
  const form = new FormData();
  form.append("data", new Blob([content], { type: "text/plain" }), name);
  for (const [k, v] of Object.entries(extra)) form.append(k, v);
  return form;
}

scenario("versions keep their files; DELETE leaves no orphans", MEDIA, async (api, running) => {
  const store = running.service.store;
  const created = await api.request("POST", "files", { raw: upload("a.txt", "one") });
  assert.equal(created.status, 201, created.text);
  const id = created.body._id;
  const replaced = await api.request("PATCH", `files/${id}`, {
    raw: upload("b.txt", "two"),
    headers: { "if-match": created.body._etag },
  });
  assert.equal(replaced.status, 200, replaced.text);
  // The old version still serves its own file.
  const v1 = await api.get(`files/${id}?version=1`);
  assert.equal(atob(v1.body.data), "one");
  const v2 = await api.get(`files/${id}?version=2`);
  assert.equal(atob(v2.body.data), "two");
  const versions = await store.collection("files_versions").find({});
  const fileIds = versions.map((v) => v.data as ObjectId);
  assert.equal(fileIds.length, 2);
  // Resource DELETE removes the documents, their versions and every file they referenced.
  await api.request("POST", "plain", { raw: upload("c.txt", "three") });
  const [plain] = await store.collection("plain").find({});
  assert.equal((await api.delete("files")).status, 204);
  assert.equal((await api.delete("plain")).status, 204);
  for (const fileId of [...fileIds, plain.data as ObjectId]) {
    assert.equal(await store.files.stat(fileId), null, "file removed");
  }
  assert.equal((await store.collection("files_versions").find({})).length, 0);
});

// The matrix: each hidden field, each read path, never in the answer.
scenario(
  "matrix: a hidden field is absent from every read path",
  SETTINGS,
  async (api) => {
    const acct = await seedAccount(api);
    const v = await api.create("vaccounts", { username: "bob", password: SECRET, age: 30 });
    await api.patch(`vaccounts/${v._id}`, { age: 31 }, { "if-match": v._etag });
    const ticket = await api.create("tickets", {
      title: "t",
      acct: acct._id,
      member: acct._id,
      vacct: { _id: v._id, _version: 1 },
    });
    const XML = { accept: "application/xml" };
    const paths: Array<[string, Record<string, string>?]> = [
      [`accounts/${acct._id}`],
      ["accounts"],
      ["accounts/ada"],
      [`members/${acct._id}`],
      ["members"],
      ["members/ada"],
      [`members?projection={"password":1}`],
      [`tickets/${ticket._id}?embedded={"acct":1,"member":1,"vacct":1}`],
      [`tickets?embedded={"acct":1,"member":1,"vacct":1}`],
      [`vaccounts/${v._id}?version=1`],
      [`vaccounts/${v._id}?version=all`],
      [`vaccounts/${v._id}?version=diffs`],
      [`byrole?aggregate={"$role":"admin"}`],
      [`accounts/${acct._id}`, XML],
      ["accounts", XML],
      [`tickets/${ticket._id}?embedded={"acct":1}`, XML],
      [`accounts/${acct._id}?callback=cb`],
      [`tickets?embedded={"acct":1}&callback=cb`],
    ];
    for (const [path, headers] of paths) {
      const res = await api.get(path, headers);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.ok(!leaks(res), `${path} leaks: ${res.text}`);
    }
  },
  { gaps: ["projection"] },
);

const HIDDEN = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET"],
  VERSIONING: true,
  DOMAIN: {
    users: {
      hidden_fields: ["password"],
      schema: { name: { type: "string" }, password: { type: "string" } },
    },
    posts: {
      schema: {
        author: { type: "objectid", data_relation: { resource: "users", embeddable: true } },
      },
    },
  },
};

scenario(
  "hidden_fields are never returned, whatever the client asks",
  HIDDEN,
  async (api) => {
    const user = await api.create("users", { name: "ann", password: SECRET });
    const post = await api.create("posts", { author: user._id });
    for (
      const path of [
        `users/${user._id}`,
        "users",
        `users?projection={"password":1}`,
        `users?projection={"password":1,"name":1}`,
        `users/${user._id}?version=1`,
        `users/${user._id}?version=all&projection={"password":1}`,
        `posts/${post._id}?embedded={"author":1}`,
      ]
    ) {
      const res = await api.get(path);
      assert.equal(res.status, 200, path);
      assert.ok(!leaks(res), `${path}: ${res.text}`);
    }
    for (const path of [`users?where={"password":"${SECRET}"}`, "users?sort=password"]) {
      assert.equal((await api.get(path)).status, 400, path);
    }
  },
);
