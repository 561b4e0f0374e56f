/**
 * Generated hostile requests: random (seeded, so a failure replays) query parameters and
 * bodies built from MongoDB operators, odd types, deep nesting and malformed text. Every
 * answer is below 500, an error carries our envelope and no internal message, and the
 * service still answers normally afterwards with Object.prototype untouched.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { answersQuickly, prototypeClean } from "../support/hostile.ts";
import { basic, SECRET_HASH } from "../support/auth.ts";
import { SignJWT } from "jose";
import { fuzzSeed, pick, random } from "../support/random.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  IF_MATCH: false,
  DOMAIN: {
    people: {
      schema: {
        name: { type: "string", maxlength: 50, regex: "^[A-Za-z ]*$" },
        age: { type: "integer", min: 0, max: 150 },
        score: { type: "number" },
        born: { type: "datetime" },
        active: { type: "boolean" },
        tags: { type: "list", schema: { type: "string", allowed: ["a", "b", "c"] } },
        address: {
          type: "dict",
          purge_unknown: true,
          schema: {
            city: { type: "string" },
            zip: { type: "integer" },
            town: { rename: "city" },
          },
        },
        alias: { rename: "name" },
        level: { type: "integer", coerce: "int", nullable: true },
        friend: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
        location: { type: "point" },
      },
      mongo_indexes: { age_1: [["age", 1]] },
    },
    archive: {
      soft_delete: true,
      versioning: true,
      schema: { title: { type: "string" }, n: { type: "integer" } },
    },
  },
};

const OPERATORS = [
  "$eq",
  "$ne",
  "$gt",
  "$gte",
  "$lt",
  "$lte",
  "$in",
  "$nin",
  "$exists",
  "$type",
  "$regex",
  "$options",
  "$not",
  "$and",
  "$or",
  "$nor",
  "$all",
  "$size",
  "$elemMatch",
  "$mod",
  "$where",
  "$expr",
  "$text",
  "$search",
  "$near",
  "$geoWithin",
  "$geometry",
  "$maxDistance",
  "$jsonSchema",
  "$comment",
  "$function",
  "$accumulator",
  "$lookup",
  "$set",
  "$unset",
  "$inc",
  "$push",
  "$rename",
  "$$ROOT",
  "$add",
  "$concat",
  "$regexMatch",
  "$substr",
  "$toDate",
  "$dateFromString",
];
const FIELDS = [
  "name",
  "age",
  "score",
  "born",
  "active",
  "tags",
  "address",
  "address.city",
  "address.zip",
  "friend",
  "location",
  "_id",
  "_created",
  "_updated",
  "_etag",
  "_deleted",
  "_version",
  "__proto__",
  "constructor",
  "prototype",
  "a.b.c.d",
  "",
  "tags.0",
  "$where",
  "x".repeat(300),
];
const STRINGS = [
  "",
  "a",
  "Ada",
  "é😀\u0000\u202e",
  "(a+)+$",
  "^(a|a)*$",
  ".*",
  "[",
  "\\",
  "null",
  "true",
  "2024-01-02T03:04:05Z",
  "Tue, 02 Jan 2024 03:04:05 GMT",
  "5f0c1f0c1f0c1f0c1f0c1f0c",
  "not-an-id",
  "x".repeat(5000),
  '{"$gt":1}',
  "%00",
  "../../etc/passwd",
  "<a>&amp;</a>",
];
const NUMBERS = [0, -0, 1, -1, 1.5, 150, 151, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, 5e-324];

/** A random JSON value, operator-shaped more often than not, at most `depth` levels deep. */
function value(rnd: () => number, depth: number): unknown {
  const r = rnd();
  if (depth <= 0 || r < 0.35) {
    const kind = rnd();
    if (kind < 0.3) return pick(rnd, STRINGS);
    if (kind < 0.6) return pick(rnd, NUMBERS);
    if (kind < 0.7) return rnd() < 0.5;
    if (kind < 0.8) return null;
    if (kind < 0.9) return [];
    return {};
  }
  if (r < 0.55) {
    return Array.from({ length: Math.floor(rnd() * 4) }, () => value(rnd, depth - 1));
  }
  const out: Record<string, unknown> = {};
  const members = 1 + Math.floor(rnd() * 3);
  for (let i = 0; i < members; i++) {
    const key = rnd() < 0.5 ? pick(rnd, OPERATORS) : pick(rnd, FIELDS);
    Object.defineProperty(out, key, {
      value: value(rnd, depth - 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** A plausible value of one of the schema's fields (right type more often than not). */
function fieldValue(rnd: () => number, field: string): unknown {
  if (rnd() < 0.2) return value(rnd, 2);
  switch (field) {
    case "name":
      return pick(rnd, ["Ada", "Bo", "", "Ada Lovelace", "x".repeat(60)]);
    case "age":
      return pick(rnd, [0, 30, 150, 151, -1, 2.5]);
    case "score":
      return pick(rnd, NUMBERS);
    case "born":
      return pick(rnd, ["Tue, 02 Jan 2024 03:04:05 GMT", "2024-01-02", "yesterday"]);
    case "active":
      return rnd() < 0.5;
    case "tags":
      return pick(rnd, [["a"], ["a", "b"], [], ["z"], "a"]);
    case "address":
      return pick(rnd, [
        { city: "Oslo", zip: 1 },
        {},
        { city: 3 },
        { other: 1 },
        { town: "Rome", junk: [1] },
        { town: 5, city: "Oslo" },
      ]);
    case "alias":
      return pick(rnd, ["Ada", 7, null]);
    case "level":
      return pick(rnd, ["3", 3.5, "x", null, true, "1_000", " 7 ", "9".repeat(40), [1]]);
    case "friend":
      return pick(rnd, ["5f0c1f0c1f0c1f0c1f0c1f0c", "nope", null]);
    case "location":
      return pick(rnd, [{ type: "Point", coordinates: [1, 2] }, { type: "Point" }, [1, 2]]);
    default:
      return pick(rnd, STRINGS);
  }
}

const KNOWN = [
  "name",
  "age",
  "score",
  "born",
  "active",
  "tags",
  "address",
  "friend",
  "location",
  "alias",
  "level",
];
const RANGE = ["$gt", "$gte", "$lt", "$lte", "$ne", "$in", "$nin", "$exists", "$regex", "$size"];

/** A filter close to what a client would send: equalities and ranges on known fields. */
function plausibleWhere(rnd: () => number): unknown {
  const out: Record<string, unknown> = {};
  for (const field of KNOWN) {
    if (rnd() >= 0.3) continue;
    const op = pick(rnd, RANGE);
    const v = fieldValue(rnd, field);
    out[field] = rnd() < 0.4 ? v : { [op]: op.endsWith("in") ? [v, fieldValue(rnd, field)] : v };
  }
  return rnd() < 0.2 ? { $or: [out, { age: { $gt: 10 } }] } : out;
}

/** A document close to a valid one: each known field present at random, sometimes wrong. */
function plausibleDoc(rnd: () => number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of KNOWN) if (rnd() < 0.5) out[field] = fieldValue(rnd, field);
  return out;
}

/** A query parameter's text: JSON of a random value, or a mangled or deeply nested text. */
function paramText(rnd: () => number): string {
  const r = rnd();
  if (r < 0.4) return JSON.stringify(plausibleWhere(rnd));
  if (r < 0.7) return JSON.stringify(value(rnd, 5)) ?? "null";
  if (r < 0.8) return "[".repeat(1 + Math.floor(rnd() * 3000));
  if (r < 0.9) return JSON.stringify(value(rnd, 5)).slice(0, -1);
  return pick(rnd, STRINGS);
}

/** One generated request against `ids` (existing documents). */
function request(
  rnd: () => number,
  ids: string[],
): { method: string; path: string; body?: string } {
  const resource = rnd() < 0.8 ? "people" : "archive";
  const id = rnd() < 0.8 ? pick(rnd, ids) : pick(rnd, STRINGS);
  const q = encodeURIComponent;
  const params = [
    ["where", paramText],
    [
      "sort",
      () => rnd() < 0.6 ? pick(rnd, ["-age", "name,-age", '[("age", -1)]']) : paramText(rnd),
    ],
    ["projection", () => rnd() < 0.5 ? '{"name": 1}' : paramText(rnd)],
    ["embedded", paramText],
    ["max_results", () => String(pick(rnd, NUMBERS))],
    ["page", () => String(pick(rnd, [...NUMBERS, "x", "-3", "1e999"]))],
    ["version", () => pick(rnd, ["all", "diffs", "0", "-1", "x", "99999999999"])],
    ["show_deleted", () => "1"],
    ["pretty", () => ""],
    ["callback", () => pick(rnd, STRINGS)],
  ] as const;
  const query = params.filter(() => rnd() < 0.15)
    .map(([name, make]) => `${name}=${q(make(rnd))}`).join("&");
  const body = () => {
    const r = rnd();
    return JSON.stringify(r < 0.2 ? value(rnd, 6) : r < 0.5 ? bodyLike(rnd) : plausibleDoc(rnd));
  };
  switch (Math.floor(rnd() * 6)) {
    case 0:
      return { method: "GET", path: `${resource}?${query}` };
    case 1:
      return { method: "GET", path: `${resource}/${q(id)}?${query}` };
    case 2:
      return { method: "POST", path: resource, body: body() };
    case 3:
      return { method: "PATCH", path: `${resource}/${q(id)}`, body: body() };
    case 4:
      return { method: "PUT", path: `${resource}/${q(id)}`, body: body() };
    default:
      return { method: rnd() < 0.5 ? "DELETE" : "HEAD", path: `${resource}/${q(id)}` };
  }
}

/** A body shaped like a document (known fields, random values), sometimes a list of them. */
function bodyLike(rnd: () => number): unknown {
  const doc = () => {
    const out: Record<string, unknown> = {};
    for (const field of FIELDS) if (rnd() < 0.25) out[field] = value(rnd, 3);
    return out;
  };
  return rnd() < 0.2 ? Array.from({ length: 1 + Math.floor(rnd() * 3) }, doc) : doc();
}

/** Internal messages no answer may show. */
const INTERNALS = /Cannot read properties|is not a function|TypeError|at .*\.ts:\d+/;

/** Sends one generated request; asserts an answer below 500 that shows no internals. */
async function sendChecked(
  base: string,
  request: { method: string; path: string; body?: BodyInit; headers: Record<string, string> },
  where: string,
): Promise<{ status: number; text: string }> {
  const res = await fetch(new URL(request.path, base), {
    method: request.method,
    body: request.body,
    headers: request.headers,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  assert.ok(res.status < 500, `${where} answered ${res.status}: ${text.slice(0, 300)}`);
  assert.doesNotMatch(text, INTERNALS, where);
  return { status: res.status, text };
}

const REQUESTS = Number(Deno.env.get("FUZZ_REQUESTS") ?? 800);

scenario("generated hostile requests never get a 500 or an internal message", SETTINGS, async (
  api,
  running,
) => {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await api.create("people", { name: "Ada", age: 30 + i, tags: ["a"] }))._id);
    ids.push((await api.create("archive", { title: "t", n: i }))._id);
  }
  const seed = fuzzSeed();
  const rnd = random(seed);
  for (let i = 0; i < REQUESTS; i++) {
    // Deletes use the documents up: new ones keep the item paths reaching stored documents.
    if (i % 25 === 0) ids.push((await api.create("people", { name: "Bo", age: i % 150 }))._id);
    const { method, path, body } = request(rnd, ids.slice(-8));
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    // Some answers rendered as XML; some methods overridden.
    if (rnd() < 0.2) headers.accept = "application/xml";
    if (method === "POST" && rnd() < 0.1) headers["x-http-method-override"] = "PATCH";
    const where = `request ${i} (seed ${seed}): ${method} ${path.slice(0, 300)}`;
    const { status, text } = await sendChecked(running.url, { method, path, body, headers }, where);
    if (status >= 400 && method !== "HEAD") {
      const envelope = headers.accept
        ? /<_status>ERR<\/_status>/.test(text)
        : JSON.parse(text)._status === "ERR";
      assert.ok(envelope, `${where}: ${text.slice(0, 300)}`);
    }
  }
  await answersQuickly(api, "people");
  prototypeClean();
});

/** A wider surface: authentication, sub-resources, lookups, aggregation, media, oplog, CORS. */
const WIDE = {
  AUTH_SCHEMES: ["basic", "token", "hmac"],
  AUTH_USERS: [{
    username: "root",
    password: SECRET_HASH,
    roles: ["admin"],
    token: "t0k3n-1234567890",
    secret: "s3cret-0123456789abcdef",
  }],
  PUBLIC_METHODS: ["GET"],
  ENFORCE_IF_MATCH: false,
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  X_DOMAINS: ["https://ok.example"],
  RETURN_MEDIA_AS_URL: true,
  EXTENDED_MEDIA_INFO: ["content_type", "length"],
  MULTIPART_FORM_FIELDS_AS_JSON: true,
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
  SCHEMA_ENDPOINT: "schema",
  DOMAIN: {
    people: {
      additional_lookup: { url: 'regex("[a-z]+")', field: "name" },
      soft_delete: true,
      versioning: true,
      schema: {
        name: { type: "string", unique: true },
        age: { type: "integer" },
        photo: { type: "media" },
        friend: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
      },
    },
    invoices: {
      url: 'people/<regex("[a-f0-9]{24}"):owner>/invoices',
      schema: { owner: { type: "objectid" }, total: { type: "number" } },
    },
    picked: {
      datasource: {
        source: "people",
        aggregation: { pipeline: [{ $match: { age: "$age" } }, { $sort: { age: 1 } }] },
      },
    },
  },
};

const ROOT = basic("root", "secret");

/** A random header value: plausible, malformed, or hostile. */
function headerValue(rnd: () => number, kind: string): string {
  const junk = pick(rnd, [
    "",
    "*",
    '"x"',
    'W/"1"',
    "Basic",
    "Basic !!!",
    "Bearer",
    "x".repeat(2000),
    "é",
  ]);
  if (kind === "authorization") {
    // Mostly valid credentials, so that requests get past authentication.
    if (rnd() < 0.75) return pick(rnd, [ROOT.authorization, "Bearer t0k3n-1234567890"]);
    return rnd() < 0.4 ? junk : pick(rnd, [
      "Basic " + btoa("root:wrong"),
      "Basic " + btoa("\xff\xfe:x"),
      "Basic " + btoa("nocolon"),
      "Token x",
      "HMAC root:" + "0".repeat(64),
      "HMAC root:",
      "HMAC :abc",
      "HMAC root:zz:zz",
      "HMAC " + "r".repeat(500) + ":00",
    ]);
  }
  if (rnd() < 0.4) return junk;
  switch (kind) {
    case "if-modified-since":
      return pick(rnd, [
        "Tue, 02 Jan 2024 03:04:05 GMT",
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "garbage",
        "Sat, 01 Jan 10000 00:00:00 GMT",
      ]);
    case "range":
      return pick(rnd, [
        "bytes=0-3",
        "bytes=5-",
        "bytes=-2",
        "bytes=9-1",
        "bytes=0-1,3-4",
        "items=0-1",
      ]);
    case "accept":
      return pick(rnd, [
        "application/xml",
        "application/json;q=0",
        "*/*;q=x",
        "text/html",
        "application/json, application/xml;q=0.9",
      ]);
    case "origin":
      return pick(rnd, ["https://ok.example", "https://evil.example", "null"]);
    case "content-type":
      return pick(rnd, [
        "application/json",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=zz",
        "text/plain",
        "application/json; charset=latin1",
        "multipart/form-data",
      ]);
    default:
      return junk;
  }
}

/** A body for `contentType`: JSON, form pairs, or multipart parts (files included). */
function wideBody(rnd: () => number, contentType: string): BodyInit {
  if (contentType.startsWith("multipart/form-data; boundary=zz")) {
    const parts = [];
    for (let i = 0; i < 1 + Math.floor(rnd() * 3); i++) {
      const name = pick(rnd, ["name", "age", "photo", "friend", "__proto__", "x"]);
      const file = name === "photo" || rnd() < 0.2
        ? `; filename="${pick(rnd, ["a.png", "", "..\\\\x"])}"`
        : "";
      const value = file
        ? "\x89PNG\r\n" + "y".repeat(Math.floor(rnd() * 50))
        : JSON.stringify(fieldValue(rnd, name));
      parts.push(
        `--zz\r\nContent-Disposition: form-data; name="${name}"${file}\r\n\r\n${value}\r\n`,
      );
    }
    return parts.join("") + (rnd() < 0.8 ? "--zz--\r\n" : "");
  }
  if (contentType === "application/x-www-form-urlencoded") {
    return Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => {
      const key = pick(rnd, ["name", "age", "friend", "a[b]", "__proto__[x]", "toString", ""]);
      return `${encodeURIComponent(key)}=${encodeURIComponent(String(fieldValue(rnd, key)))}`;
    }).join("&");
  }
  return rnd() < 0.7 ? JSON.stringify(plausibleDoc(rnd)) : paramText(rnd);
}

scenario("generated hostile requests on the wider surface never get a 500", WIDE, async (
  api,
  running,
) => {
  const ids: string[] = [];
  const names: string[] = [];
  const invoices: string[] = [];
  const media: string[] = [];
  const add = async (n: number) => {
    const form = new FormData();
    // Multipart fields are JSON (MULTIPART_FORM_FIELDS_AS_JSON); the name is all letters.
    const name = `p${n}`.replace(/\d/g, (d) => "abcdefghij"[Number(d)]);
    form.set("name", JSON.stringify(name));
    form.set("age", String(n % 90));
    form.set("photo", new Blob([new Uint8Array([137, 80, 78, 71, n % 256])]), "a.png");
    const created = await api.request("POST", "people", { raw: form, headers: ROOT });
    assert.equal(created.status, 201, created.text);
    ids.push(created.body._id);
    names.push(name);
    const doc = await api.get(`people/${created.body._id}`, ROOT);
    const url = String(doc.body.photo?.file ?? doc.body.photo ?? "");
    if (url) media.push(url.replace(/^.*?media\//, "media/"));
    const invoice = await api.post(`people/${created.body._id}/invoices`, { total: n }, ROOT);
    if (invoice.status === 201) invoices.push(invoice.body._id);
  };
  for (let n = 0; n < 4; n++) await add(n);
  const seed = fuzzSeed();
  const rnd = random(seed);
  const q = encodeURIComponent;
  for (let i = 0; i < REQUESTS; i++) {
    if (i % 40 === 39) await add(i);
    const id = rnd() < 0.85 ? pick(rnd, ids.slice(-4)) : pick(rnd, STRINGS);
    const paths = [
      "people",
      `people/${q(id)}`,
      `people/${q(pick(rnd, names))}`,
      `people/${q(id)}/invoices`,
      `people/${q(id)}/invoices/${q(pick(rnd, invoices.length ? invoices : ["x"]))}`,
      `picked?aggregate=${
        q(rnd() < 0.5 ? JSON.stringify({ $age: fieldValue(rnd, "age") }) : paramText(rnd))
      }`,
      `people/${q(id)}?version=${q(pick(rnd, ["all", "diffs", "1", "0", "x"]))}`,
      `people?embedded=${q(rnd() < 0.5 ? '{"friend": 1}' : paramText(rnd))}`,
      "oplog",
      `schema/${pick(rnd, ["people", "x", ""])}`,
      "schema",
      "",
      pick(rnd, media.length ? media : ["media/x"]),
      `media/${q(pick(rnd, STRINGS))}`,
      pick(rnd, [
        "..%2f..%2fetc",
        "%00",
        "people/%ZZ",
        "a".repeat(3000),
        "people//x",
        "people?where=%",
      ]),
    ];
    const path = pick(rnd, paths);
    const method = pick(rnd, ["GET", "GET", "HEAD", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"]);
    const headers: Record<string, string> = {};
    for (
      const name of [
        "authorization",
        "if-match",
        "if-none-match",
        "if-modified-since",
        "range",
        "accept",
        "origin",
      ]
    ) {
      if (name === "authorization" ? rnd() < 0.8 : rnd() < 0.15) {
        headers[name] = headerValue(rnd, name);
      }
    }
    if (method === "OPTIONS") {
      headers["access-control-request-method"] = pick(rnd, ["GET", "PATCH", "X"]);
    }
    if (method === "POST" && rnd() < 0.1) {
      headers["x-http-method-override"] = pick(rnd, ["PATCH", "DELETE", "X"]);
    }
    let body: BodyInit | undefined;
    if (["POST", "PATCH", "PUT"].includes(method)) {
      headers["content-type"] = headerValue(rnd, "content-type");
      body = wideBody(rnd, headers["content-type"]);
    }
    const where = `request ${i} (seed ${seed}): ${method} ${path.slice(0, 200)} ${
      JSON.stringify(headers).slice(0, 300)
    }`;
    await sendChecked(running.url, { method, path, body, headers }, where);
  }
  await answersQuickly(api, "people");
  prototypeClean();
});

scenario(
  "generated change-feed requests never get a 500; an open feed starts with its ready or reset event",
  { ...SETTINGS, CHANGES: true },
  async (api, running) => {
    const first = await api.create("people", { name: "Ada", age: 30 });
    const seed = fuzzSeed();
    const rnd = random(seed);
    const q = encodeURIComponent;
    const ids = ["", "x", "1-1", "abc-99999999999999999999", "-", "\u0000", "a".repeat(500)];
    for (let i = 0; i < Math.ceil(REQUESTS / 8); i++) {
      const params = [
        rnd() < 0.5 ? `where=${q(paramText(rnd))}` : "",
        rnd() < 0.3 ? `documents=${q(pick(rnd, ["1", "0", "true", "x", ""]))}` : "",
        rnd() < 0.3 ? `projection=${q(rnd() < 0.5 ? '{"name": 1}' : paramText(rnd))}` : "",
        rnd() < 0.2 ? `last_event_id=${q(pick(rnd, ids))}` : "",
      ].filter(Boolean).join("&");
      const headers: Record<string, string> = {};
      if (rnd() < 0.2) headers["last-event-id"] = pick(rnd, ids).replace("\u0000", "");
      const path = `${rnd() < 0.8 ? "people" : "archive"}/_changes?${params}`;
      const aborter = new AbortController();
      const timer = setTimeout(() => aborter.abort(), 5_000);
      try {
        const res = await fetch(new URL(path, running.url), { headers, signal: aborter.signal });
        const where = `feed ${i} (seed ${seed}): ${path.slice(0, 300)}`;
        assert.ok(res.status < 500, `${where} answered ${res.status}`);
        if (res.status === 200) {
          const reader = res.body!.getReader();
          const { value } = await reader.read();
          assert.match(new TextDecoder().decode(value), /event: (ready|reset)/, where);
        } else {
          const text = await res.text();
          assert.equal(JSON.parse(text)._status, "ERR", `${where}: ${text.slice(0, 300)}`);
        }
      } finally {
        clearTimeout(timer);
        aborter.abort();
      }
    }
    assert.equal((await api.get(`people/${first._id}`)).status, 200);
    await answersQuickly(api, "people");
  },
);

/** A JWT-shaped string: random header and claims, signed with the right key or not at all. */
async function jwtLike(rnd: () => number, key: Uint8Array<ArrayBuffer>): Promise<string> {
  const b64 = (bytes: Uint8Array) =>
    btoa(String.fromCharCode(...bytes)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  const utf8 = (text: string) => b64(new TextEncoder().encode(text));
  const header = rnd() < 0.6
    ? { alg: pick(rnd, ["HS256", "none", "RS256", "ES256", "HS512", "", 1]), typ: "JWT" }
    : value(rnd, 3);
  const claims = rnd() < 0.6
    ? {
      sub: pick(rnd, ["user-1", "", 5, null, "x".repeat(3000)]),
      iss: pick(rnd, ["https://id.example", "https://evil.example", 1]),
      aud: pick(rnd, ["api", ["api", "x"], [], {}]),
      exp: pick(rnd, [Math.floor(Date.now() / 1000) + 600, 0, "soon", 1e308, -1]),
      roles: pick(rnd, [["editor"], "editor", [1], null, [{}]]),
    }
    : value(rnd, 3);
  const signing = `${utf8(JSON.stringify(header) ?? "")}.${utf8(JSON.stringify(claims) ?? "")}`;
  const r = rnd();
  if (r < 0.4) {
    const hmac = await crypto.subtle.importKey(
      "raw",
      key,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const sig = new Uint8Array(
      await crypto.subtle.sign("HMAC", hmac, new TextEncoder().encode(signing)),
    );
    return `${signing}.${b64(sig)}`;
  }
  if (r < 0.6) return `${signing}.`;
  // Header values are bytes: the odd signatures stay ASCII.
  if (r < 0.8) return `${signing}.${pick(rnd, STRINGS).replace(/[^\x21-\x7e]/g, "").slice(0, 100)}`;
  return pick(rnd, ["", ".", "..", "a.b", "a.b.c.d", "%%%.%%%.%%%", "x".repeat(9000)]);
}

scenario(
  "generated JWT bearer tokens get a 200, 401 or 403, never a 500",
  {
    AUTH_SCHEMES: ["jwt"],
    AUTH_JWT: {
      secret: "a-long-shared-secret-of-32-chars-or-more!",
      issuer: "https://id.example",
      audience: "api",
    },
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      people: { allowed_write_roles: ["editor"], schema: { name: { type: "string" } } },
    },
  },
  async (api, running) => {
    const key = new TextEncoder().encode("a-long-shared-secret-of-32-chars-or-more!");
    const seed = fuzzSeed();
    const rnd = random(seed);
    for (let i = 0; i < Math.ceil(REQUESTS / 2); i++) {
      const token = await jwtLike(rnd, key);
      const scheme = pick(rnd, ["Bearer ", "Bearer ", "bearer ", "Bearer  ", "JWT ", ""]);
      const post = rnd() < 0.3;
      const headers: Record<string, string> = { authorization: scheme + token };
      if (post) headers["content-type"] = "application/json";
      const where = `token ${i} (seed ${seed}): ${scheme}${token.slice(0, 200)}`;
      const { status, text } = await sendChecked(running.url, {
        method: post ? "POST" : "GET",
        path: "people",
        body: post ? JSON.stringify({ name: "x" }) : undefined,
        headers,
      }, where);
      assert.ok([200, 201, 400, 401, 403, 422].includes(status), `${where}: ${status} ${text}`);
    }
    // A valid token still works afterwards.
    const valid = await new SignJWT({ roles: ["editor"] }).setProtectedHeader({ alg: "HS256" })
      .setSubject("user-1").setIssuer("https://id.example").setAudience("api")
      .setExpirationTime("10m").sign(key);
    const after = await api.get("people", { authorization: `Bearer ${valid}` });
    assert.equal(after.status, 200, after.text);
  },
);

scenario(
  "generated requests from 8 concurrent clients on the same documents never get a 500",
  SETTINGS,
  async (api, running) => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(
        (await api.create("people", { name: "Ada", age: i }))
          ._id,
      );
      ids.push((await api.create("archive", { title: "t", n: i }))._id);
    }
    const seed = fuzzSeed();
    const worker = async (w: number) => {
      const rnd = random(seed * 31 + w);
      for (let i = 0; i < Math.ceil(REQUESTS / 8); i++) {
        // Writes that succeed make new versions and soft deletes on the same few documents.
        const { method, path, body } = request(rnd, ids);
        const headers: Record<string, string> = body === undefined
          ? {}
          : { "content-type": "application/json" };
        const where = `worker ${w} request ${i} (seed ${seed}): ${method} ${path.slice(0, 300)}`;
        await sendChecked(running.url, { method, path, body, headers }, where);
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
    // Every document still reads back whole, on both resources.
    for (const resource of ["people", "archive"]) {
      const page = await api.get(`${resource}?max_results=50`);
      assert.equal(page.status, 200, page.text);
      for (const doc of page.body._items) {
        const item = await api.get(`${resource}/${doc._id}`);
        assert.ok([200, 404].includes(item.status), item.text);
      }
    }
    await answersQuickly(api, "people");
  },
);
