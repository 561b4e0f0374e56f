/** Authentication schemes: Basic, Token, HMAC and custom; 401 answers; hostile headers. */
import assert from "node:assert/strict";
import { scenario, sharedService } from "../support/harness.ts";
import { basic, bearer, hmacHeaders, SECRET_HASH } from "../support/auth.ts";
import { accountOf } from "../../src/mod.ts";
import { createLogger, logContext, type RequestFields } from "../../src/log.ts";
import type { Client, Json } from "../support/client.ts";

const ROOT = {
  username: "root",
  password: SECRET_HASH,
  roles: ["admin"],
  token: "root-token-0123456789",
  secret: "root-secret-0123456789",
};

const SETTINGS = {
  AUTH_SCHEMES: ["basic", "token", "hmac"],
  AUTH_REALM: "people api",
  AUTH_ACCOUNTS: { resource: "accounts" },
  AUTH_USERS: [ROOT],
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
  OPLOG_METHODS: ["POST", "PATCH", "PUT", "DELETE"],
  OPLOG_CHANGE_METHODS: ["POST", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    accounts: {
      allowed_roles: ["admin"],
      allowed_item_roles: ["admin"],
      versioning: true,
      schema: {
        username: { type: "string", required: true, unique: true },
        password: { type: "string", minlength: 6 },
        roles: { type: "list", schema: { type: "string" } },
        token: { type: "string" },
        secret: { type: "string" },
      },
    },
    people: { schema: { name: { type: "string" } } },
    diary: {
      auth_field: "owner",
      schema: { text: { type: "string" }, owner: { type: "objectid" } },
    },
    machines: { authentication: "token", schema: { name: { type: "string" } } },
    // A view of the accounts' collection naming the password: still hidden.
    members: {
      datasource: { source: "accounts" },
      schema: { username: { type: "string" }, password: { type: "string" } },
    },
  },
};

const ROOT_BASIC = basic("root", "secret");

// Scenarios that read back only what they stored share one service per store.
const shared = sharedService("authentication schemes", SETTINGS);

shared("no credentials: 401 with a challenge per scheme", async (api) => {
  const res = await api.get("people");
  assert.equal(res.status, 401);
  assert.equal(res.body._status, "ERR");
  assert.equal(res.body._error.code, 401);
  const challenge = res.headers.get("www-authenticate") ?? "";
  assert.match(challenge, /Basic realm="people api"/);
  assert.match(challenge, /Bearer realm="people api"/);
  assert.match(challenge, /HMAC realm="people api"/);
});

shared("Basic: a settings account, wrong password and unknown user", async (api) => {
  assert.equal((await api.get("people", ROOT_BASIC)).status, 200);
  const wrong = await api.get("people", basic("root", "nope"));
  const unknown = await api.get("people", basic("nobody", "secret"));
  assert.equal(wrong.status, 401);
  assert.equal(unknown.status, 401);
  assert.deepEqual(wrong.body, unknown.body);
  assert.equal(wrong.headers.get("www-authenticate"), unknown.headers.get("www-authenticate"));
});

scenario(
  "accounts from the domain: hashed on write, never returned, cache dropped on change",
  SETTINGS,
  async (api, running) => {
    const created = await api.post("accounts", {
      username: "alice",
      password: "alice-pw",
      roles: ["user"],
      token: "alice-token-0123456789",
    }, ROOT_BASIC);
    assert.equal(created.status, 201, created.text);
    const id = created.body._id;
    const stored = await running.service.store.collection("accounts").findOne({
      username: "alice",
    });
    assert.match(stored!.password as string, /^\$2[aby]\$10\$/);
    assert.notEqual(stored!.password, "alice-pw");
    // alice signs in, by password and by token.
    assert.equal((await api.get("people", basic("alice", "alice-pw"))).status, 200);
    assert.equal((await api.get("people", bearer("alice-token-0123456789"))).status, 200);
    // Eve's form: the token as the Basic user with an empty password.
    assert.equal((await api.get("people", basic("alice-token-0123456789", ""))).status, 200);
    // A changed password takes effect at once, although the old one was cached.
    const etag = (await api.get(`accounts/${id}`, ROOT_BASIC)).body._etag;
    const patched = await api.patch(`accounts/${id}`, { password: "new-password" }, {
      ...ROOT_BASIC,
      "if-match": `"${etag}"`,
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await api.get("people", basic("alice", "alice-pw"))).status, 401);
    assert.equal((await api.get("people", basic("alice", "new-password"))).status, 200);
    // alice lacks the admin role: 403 on accounts.
    const forbidden = await api.get("accounts", basic("alice", "new-password"));
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body._error.code, 403);
  },
);

scenario(
  "account secrets are never returned: item, list, projection, versions, oplog, filters",
  SETTINGS,
  async (api) => {
    const created = await api.post("accounts", {
      username: "alice",
      password: "alice-pw",
      token: "alice-token-0123456789",
    }, ROOT_BASIC);
    assert.equal(created.status, 201, created.text);
    const id = created.body._id;
    // Never returned: item, collection, projection asking for it, versions, oplog.
    for (
      const path of [
        `accounts/${id}`,
        "accounts",
        `accounts?projection=${encodeURIComponent('{"password": 1, "token": 1}')}`,
        `accounts/${id}?version=all`,
        `accounts/${id}?version=1`,
        `members/${id}`,
        "members",
        "oplog",
      ]
    ) {
      const res = await api.get(path, ROOT_BASIC);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      // Links repeat the client's own query (`self` keeps it, as in Eve): not a secret.
      const text = JSON.stringify(res.body, (key, value) => {
        if (key === "self" && typeof value?.href === "string" && value.href.includes("?")) {
          return { ...value, href: value.href.split("?")[0] };
        }
        return value;
      });
      assert.doesNotMatch(text, /password|alice-pw|\$2[aby]\$|alice-token/, path);
    }
    const where = await api.get(
      `accounts?where=${encodeURIComponent('{"password": {"$exists": true}}')}`,
      ROOT_BASIC,
    );
    assert.equal(where.status, 400);
  },
);

shared("Token: Bearer and Basic forms; a bad token is 401", async (api) => {
  assert.equal((await api.get("people", bearer(ROOT.token))).status, 200);
  assert.equal((await api.get("people", basic(ROOT.token, ""))).status, 200);
  assert.equal((await api.get("people", bearer("not-a-token-0123456789"))).status, 401);
  assert.equal((await api.get("people", basic("not-a-token-0123456789", ""))).status, 401);
});

shared("HMAC: signed requests, replays, stale dates, changed bodies", async (api) => {
  // A signed body is read once, by the signature check, and handed to the body parser: no
  // clone of the request, whose copied signal made Deno.serve print (once per process, when
  // such a request ends) that request.signal aborts on successful responses.
  const warned: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    warned.push(args.map(String).join(" "));
  };
  try {
    await hmacRequests(api);
    // The server ends a request after its answer is sent: give the last one a moment.
    await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(warned.filter((line) => /request\.signal/.test(line)), []);
});

async function hmacRequests(api: Client) {
  const signed = (method: string, path: string, body?: string, date?: Date) =>
    hmacHeaders({ user: "root", secret: ROOT.secret, method, path, body, date });
  const get = signed("GET", "/people?max_results=5");
  assert.equal((await api.get("people?max_results=5", get)).status, 200);
  const replay = await api.get("people?max_results=5", get);
  assert.equal(replay.status, 401, "a replayed signature is refused");
  const old = signed("GET", "/people", undefined, new Date(Date.now() - 6 * 60_000));
  assert.equal((await api.get("people", old)).status, 401);
  const future = signed("GET", "/people", undefined, new Date(Date.now() + 6 * 60_000));
  assert.equal((await api.get("people", future)).status, 401);
  const body = JSON.stringify({ name: "Ann" });
  const post = signed("POST", "/people", body);
  const changed = await api.request("POST", "people", {
    raw: JSON.stringify({ name: "Bob" }),
    headers: { ...post, "content-type": "application/json" },
  });
  assert.equal(changed.status, 401, "a changed body is refused");
  const good = await api.request("POST", "people", {
    raw: body,
    headers: { ...signed("POST", "/people", body), "content-type": "application/json" },
  });
  assert.equal(good.status, 201, good.text);
  // What was signed is what was stored.
  const id = good.body._id;
  const stored = await api.get(`people/${id}`, signed("GET", `/people/${id}`));
  assert.equal(stored.status, 200, stored.text);
  assert.equal(stored.body.name, "Ann");
  // Another path than the signed one.
  const other = signed("GET", "/people?page=1");
  assert.equal((await api.get("people?page=2", other)).status, 401);
  // Eve's header form: "<user>:<signature>".
  const eve = signed("GET", "/people?eve=1");
  const eveForm = { ...eve, authorization: eve.authorization.replace(/^HMAC /, "") };
  assert.equal((await api.get("people?eve=1", eveForm)).status, 200);
  // An unknown user: 401.
  const unknown = hmacHeaders({
    user: "nobody",
    secret: ROOT.secret,
    method: "GET",
    path: "/people",
  });
  assert.equal((await api.get("people", unknown)).status, 401);
}

scenario(
  "hostile Authorization headers and query credentials: 400/401, never 500",
  SETTINGS,
  async (api) => {
    const cases: Array<[Record<string, string>, number]> = [
      [{ authorization: "Basic !!!not-base64!!!" }, 401],
      [{ authorization: "Basic " + btoa("no-colon") }, 401],
      [{ authorization: "Basic " + btoa("\xff\xfe:\xff") }, 401],
      [{ authorization: "Basic" }, 401],
      [{ authorization: "Digest username=x" }, 401],
      [{ authorization: "Bearer " }, 401],
      [{ authorization: "Bearer a b c" }, 401],
      [{ authorization: "HMAC root:xyz" }, 401],
      [{ authorization: "Basic " + "A".repeat(20_000) }, 400],
      [{ authorization: "Bearer " + "a.b.c".repeat(3000) }, 400],
    ];
    for (const [headers, status] of cases) {
      const res = await api.get("people", headers);
      assert.equal(res.status, status, `${headers.authorization.slice(0, 30)}: ${res.text}`);
      assert.equal(res.body._status, "ERR");
    }
    const query = await api.get("people?access_token=" + ROOT.token);
    assert.equal(query.status, 400);
    assert.doesNotMatch(query.text, new RegExp(ROOT.token));
  },
);

scenario("an Eve settings file with auth settings starts", {
  ...SETTINGS,
  PUBLIC_METHODS: ["GET"],
  PUBLIC_ITEM_METHODS: ["GET"],
  ALLOWED_ROLES: ["admin"],
  ALLOWED_READ_ROLES: [],
  ALLOWED_WRITE_ROLES: [],
  ALLOWED_ITEM_ROLES: ["admin"],
  ALLOWED_ITEM_READ_ROLES: [],
  ALLOWED_ITEM_WRITE_ROLES: [],
}, async (api) => {
  assert.equal((await api.get("people")).status, 200);
  assert.equal((await api.post("people", { name: "x" })).status, 401);
  assert.equal((await api.post("people", { name: "x" }, ROOT_BASIC)).status, 201);
});

scenario("hooks see the account; in-process calls need none", SETTINGS, async (api, running) => {
  const seen: unknown[] = [];
  running.service.events.on("on_pre_GET_people", (request: Request) => {
    seen.push(accountOf(request)?.id);
  });
  running.service.events.on("on_insert_people", () => {});
  assert.equal((await api.get("people", ROOT_BASIC)).status, 200);
  assert.deepEqual(seen, ["root"]);
  const created = await running.service.data.post("people", { name: "in-process" });
  assert.equal(created.status, 201);
  const read = await running.service.data.get("people");
  assert.equal(read.body._items.length, 1);
});

const hookContexts: Array<RequestFields | undefined> = [];
scenario(
  "custom authenticate: the app decides; null is 401; it runs in the request's log context",
  {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: { people: { schema: { name: { type: "string" } } } },
  },
  async (api) => {
    hookContexts.length = 0;
    assert.equal((await api.get("people", { "x-api-key": "let-me-in" })).status, 200);
    assert.equal((await api.get("people", { "x-api-key": "wrong" })).status, 401);
    assert.equal((await api.get("people?x=1", { "x-request-id": "auth-7" })).status, 401);
    assert.equal(hookContexts.length, 3);
    assert.deepEqual(hookContexts[2], {
      requestid: "auth-7",
      clientip: "127.0.0.1",
      url: `${api.base}people?x=1`,
      method: "GET",
    });
    assert.equal(logContext(), undefined);
  },
  {
    authenticate: async (request, resource, method) => {
      assert.equal(resource, "people");
      assert.equal(method, "GET");
      await Promise.resolve();
      hookContexts.push(logContext() && { ...logContext()! });
      return request.headers.get("x-api-key") === "let-me-in" ? { id: "app", roles: [] } : null;
    },
  },
);

const records: Record<string, unknown>[] = [];
scenario(
  "failed attempts are logged with the client IP, never with the credentials",
  SETTINGS,
  async (api) => {
    records.length = 0;
    assert.equal((await api.get("people", basic("root", "wrong-password-123"))).status, 401);
    const failed = records.filter((r) => r.message === "authentication failed");
    assert.equal(failed.length, 1, JSON.stringify(records));
    assert.equal(failed[0].clientip, "127.0.0.1");
    assert.equal(failed[0].url, `${api.base}people`);
    assert.equal(failed[0].method, "GET");
    assert.match(String(failed[0].requestid), /^[0-9a-f-]{36}$/);
    assert.doesNotMatch(JSON.stringify(records), /wrong-password-123|cm9vdDp3cm9uZy/);
  },
  { logger: createLogger((record) => records.push(record), "debug") },
);

shared("a resource limited to one scheme challenges with it only", async (api) => {
  const basicTry = await api.get("machines", ROOT_BASIC);
  assert.equal(basicTry.status, 401);
  assert.equal(basicTry.headers.get("www-authenticate"), 'Bearer realm="people api"');
  assert.equal((await api.get("machines", bearer(ROOT.token))).status, 200);
});

scenario(
  "AUTH_FIELD with accounts from the domain (ObjectId ids)",
  SETTINGS,
  async (api, running) => {
    const created = await api.post(
      "accounts",
      { username: "alice", password: "alice-pw" },
      ROOT_BASIC,
    );
    assert.equal(created.status, 201, created.text);
    const alice = basic("alice", "alice-pw");
    const id = created.body._id;
    assert.equal((await api.post("diary", { text: "root's" }, ROOT_BASIC)).status, 201);
    assert.equal((await api.post("diary", { text: "hers" }, alice)).status, 201);
    assert.equal((await api.post("diary", { text: "named", owner: id }, alice)).status, 201);
    const other = "0".repeat(24);
    assert.equal((await api.post("diary", { text: "x", owner: other }, alice)).status, 403);
    const mine = await api.get("diary", alice);
    assert.deepEqual(mine.body._items.map((d: Json) => d.text).sort(), ["hers", "named"]);
    assert.ok(mine.body._items.every((d: Json) => d.owner === id));
    const stored = await running.service.store.collection("diary").findOne({ text: "hers" });
    assert.equal(String(stored!.owner), id);
    assert.notEqual(typeof stored!.owner, "string");
  },
);

shared("an unknown user takes as long as a wrong password", async (api) => {
  const time = async (headers: Record<string, string>) => {
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      assert.equal((await api.get("people", headers)).status, 401);
      samples.push(performance.now() - start);
    }
    return samples.sort((a, b) => a - b)[2];
  };
  const wrong = await time(basic("root", "not-the-password"));
  const unknown = await time(basic("nobody-at-all", "not-the-password"));
  // Without the dummy verification an unknown user answers tens of times faster.
  assert.ok(unknown > wrong / 3 && unknown < wrong * 3, `wrong ${wrong} ms, unknown ${unknown} ms`);
});

scenario(
  "a script's request gets no Basic challenge (no browser login dialog over the docs page)",
  SETTINGS,
  async (api) => {
    const plain = await api.get("openapi.json");
    assert.equal(plain.status, 401);
    assert.match(plain.headers.get("www-authenticate") ?? "", /Basic realm="people api"/);
    const scripted = { "x-requested-with": "XMLHttpRequest" };
    for (const path of ["openapi.json", "people"]) {
      const res = await api.get(path, scripted);
      assert.equal(res.status, 401);
      assert.equal(res.body._error.code, 401);
      const challenge = res.headers.get("www-authenticate") ?? "";
      assert.doesNotMatch(challenge, /Basic/);
      assert.match(challenge, /Bearer realm="people api"/);
    }
    const page = await api.get("docs");
    assert.equal(page.status, 200, "the docs page itself holds no data");
    const allowed = await api.get("openapi.json", { ...scripted, ...ROOT_BASIC });
    assert.equal(allowed.status, 200);
  },
);
