/**
 * Reading as Eve 2.3.1's own test suite expects it (tests/methods/get.py, renders.py,
 * endpoints.py, response.py, utils.py), each scenario named after the Eve tests it
 * reproduces, over HTTP on both stores. Where the service deliberately differs from Eve the
 * scenario asserts the service's behaviour and says why.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client, Json } from "../support/client.ts";
import { DBRef, ObjectId } from "../../src/doc/bson.ts";

const q = encodeURIComponent;

/** The `contacts` resource of Eve's test settings, cut to the fields the tests use. */
const CONTACTS = {
  url: "arbitraryurl",
  item_title: "contact",
  additional_lookup: { url: 'regex("[\\w]+")', field: "ref" },
  datasource: { filter: { username: { $exists: false } } },
  schema: {
    ref: { type: "string", minlength: 25, maxlength: 25, required: true, unique: true },
    prog: { type: "integer" },
    role: { type: "list", allowed: ["agent", "client", "vendor"] },
    rows: {
      type: "list",
      schema: {
        type: "dict",
        schema: { sku: { type: "string", maxlength: 24 }, price: { type: "integer" } },
      },
    },
    location: {
      type: "dict",
      schema: { address: { type: "string" }, city: { type: "string", required: true } },
    },
    tid: { type: "objectid", nullable: true },
    id_list: { type: "list", schema: { type: "objectid" } },
    dict_list_fixed_len: {
      type: "list",
      items: [
        { type: "dict", schema: { key1: { type: "string" } } },
        { type: "dict", schema: { key2: { type: "integer" } } },
      ],
    },
    key1: { type: "string" },
  },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE", "PUT"],
  PAGINATION_DEFAULT: 25,
  DOMAIN: {
    contacts: CONTACTS,
    // Shares the collection: its `username` field is no field of `contacts`.
    users: {
      url: "users",
      datasource: {
        source: "contacts",
        filter: { username: { $exists: true } },
        projection: { username: 1, ref: 1 },
      },
      schema: { ref: { type: "string" }, username: { type: "string", required: true } },
    },
    invoices: {
      schema: {
        inv_number: { type: "string" },
        person: { type: "objectid", data_relation: { resource: "contacts" } },
        persondbref: { type: "dbref", data_relation: { resource: "contacts" } },
      },
    },
  },
};

const ref = (n: number) => `ref${String(n).padStart(22, "0")}`;

/** Stores `count` contacts (`ref`, `prog` = position, roles in turn) and returns them. */
async function seed(api: Client, count = 101): Promise<Json[]> {
  const roles = ["agent", "client", "vendor"];
  const docs = Array.from({ length: count }, (_, i) => ({
    ref: ref(i),
    prog: i,
    role: [roles[i % 3]],
    tid: new ObjectId().toHexString(),
    rows: [{ sku: new ObjectId().toHexString(), price: i }],
    location: { city: "Rome" },
  }));
  const res = await api.post("arbitraryurl", docs);
  assert.equal(res.status, 201, res.text.slice(0, 300));
  return docs;
}

async function items(api: Client, path: string): Promise<Json[]> {
  const res = await api.get(path);
  assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 300)}`);
  return res.body._items;
}

scenario(
  "TestGet.test_get_where_mongo_objectid_as_string*: objectid fields cast, string ones never",
  SETTINGS,
  async (api, running) => {
    const [doc] = await seed(api, 3);
    const where = q(`{"tid": "${doc.tid}"}`);
    assert.equal((await items(api, `arbitraryurl?where=${where}`)).length, 1);
    const inList = q(`{"tid": {"$in": ["${doc.tid}"]}}`);
    assert.equal((await items(api, `arbitraryurl?where=${inList}`)).length, 1);
    // Safer than Eve: a field typed `string` keeps a 24-hex value a string, so the sku
    // (an ObjectId-looking string) is found; Eve casts it and finds nothing.
    const sku = q(`{"tid": "${doc.tid}", "rows.sku": {"$in": ["${doc.rows[0].sku}"]}}`);
    assert.equal((await items(api, `arbitraryurl?where=${sku}`)).length, 1);
    // `$in` on a list of objectids.
    const [a] = await items(api, "arbitraryurl?sort=prog");
    const target = new ObjectId().toHexString();
    const patched = await api.patch(`arbitraryurl/${a._id}`, { id_list: [target] }, {
      "if-match": a._etag,
    });
    assert.equal(patched.status, 200, patched.text);
    const listIn = q(`{"id_list": {"$in": ["${target}"]}}`);
    assert.deepEqual((await items(api, `arbitraryurl?where=${listIn}`)).map((d) => d._id), [
      a._id,
    ]);
    // An untyped (undeclared) field: ObjectId-looking strings are cast, as in Eve.
    const raw = new ObjectId();
    await running.service.store.collection("contacts").insertMany([
      { _id: new ObjectId(), ref: ref(900), other: raw },
    ]);
    const untyped = q(`{"other": "${raw.toHexString()}"}`);
    assert.equal((await items(api, `arbitraryurl?where=${untyped}`)).length, 1);
  },
);

scenario(
  "query_objectid_as_string: untyped fields keep strings, objectid fields still cast",
  {
    ...SETTINGS,
    DOMAIN: {
      ...SETTINGS.DOMAIN,
      contacts: { ...CONTACTS, query_objectid_as_string: true, allow_unknown: true },
    },
  },
  async (api) => {
    const [doc] = await seed(api, 2);
    const hex = new ObjectId().toHexString();
    assert.equal((await api.post("arbitraryurl", { ref: ref(50), other: hex })).status, 201);
    assert.equal((await items(api, `arbitraryurl?where=${q(`{"tid": "${doc.tid}"}`)}`)).length, 1);
    assert.equal((await items(api, `arbitraryurl?where=${q(`{"other": "${hex}"}`)}`)).length, 1);
  },
);

scenario('oplog: GET /oplog?where={"i": <id>} finds the entries of a document', {
  ...SETTINGS,
  OPLOG: true,
  OPLOG_ENDPOINT: "oplog",
}, async (api) => {
  const created = await api.create("arbitraryurl", { ref: ref(1) });
  await api.create("arbitraryurl", { ref: ref(2) });
  const entries = await items(api, `oplog?where=${q(`{"i": "${created._id}"}`)}`);
  assert.equal(entries.length, 1);
  assert.equal(entries[0].i, created._id);
  assert.equal(entries[0].o, "POST");
});

scenario(
  "TestGet.test_get_where_python_syntax*, test_get_query_in_links: bare names are strings",
  SETTINGS,
  async (api) => {
    await seed(api, 60);
    const one = await api.get(`arbitraryurl?where=${q(`ref == ${ref(7)}`)}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body._items.length, 1);
    const dated = `ref == ${ref(7)} and _created>="Tue, 01 Oct 2013 00:59:22 GMT"`;
    assert.equal((await items(api, `arbitraryurl?where=${q(dated)}`)).length, 1);
    const res = await api.get("arbitraryurl?where=role == agent&max_results=5");
    assert.equal(res.body._meta.total, 20);
    const links = res.body._links;
    // As in Eve, the links carry the query as the client wrote it.
    for (const link of ["self", "next", "last"]) {
      assert.ok(links[link].href.includes("?where=role == agent"), links[link].href);
    }
    const whole = await api.get("arbitraryurl?where=role == agent");
    assert.equal(whole.body._links.last, undefined); // one page of 25: no next, no last
    const page2 = await api.get("arbitraryurl?where=role == client&max_results=5&page=2");
    assert.ok(page2.body._links.prev.href.includes("?where=role == client"));
    assert.match(page2.body._links.last.href, /page=4/);
  },
);

scenario(
  "TestGet.test_get_nested_filter_operators_unvalidated, test_get_allowed_filters_operators",
  SETTINGS,
  async (api) => {
    await seed(api, 2);
    // Names outside the schema filter, as in Eve...
    const where = '{"$and":[{"$or":[{"fldA":"valA"},{"fldB":"valB"}]},{"fld2":"val2"}]}';
    assert.deepEqual(await items(api, `arbitraryurl?where=${q(where)}`), []);
    // ...but not a field another resource on the collection declares.
    const sibling = await api.get(`arbitraryurl?where=${q('{"username": "x"}')}`);
    assert.equal(sibling.status, 400);
    // And never an expression reaching the whole document.
    const root = await api.get(`arbitraryurl?where=${q('{"$expr": {"$eq": ["$$ROOT", 1]}}')}`);
    assert.equal(root.status, 400);
  },
);

scenario("TestGet.test_get_allowed_filters_operators (allowed_filters)", {
  ...SETTINGS,
  DOMAIN: { contacts: { ...CONTACTS, allowed_filters: ["field1", "field2"] } },
}, async (api) => {
  const where = q('{"$and": [{"field1": "value1"}, {"field2": "value2"}]}');
  assert.equal((await api.get(`arbitraryurl?where=${where}`)).status, 200);
  const refused = await api.get(`arbitraryurl?where=${q('{"ref": "x"}')}`);
  assert.equal(refused.status, 400);
  assert.match(refused.body._error.message, /'ref' not allowed/);
});

scenario("TestGet.test_get_where_disabled: an empty allowed_filters ignores where", {
  ...SETTINGS,
  DOMAIN: { contacts: { ...CONTACTS, allowed_filters: [] } },
}, async (api) => {
  await seed(api, 30);
  const res = await api.get(`arbitraryurl?where=${q(`ref == ${ref(1)}`)}`);
  assert.equal(res.status, 200);
  assert.equal(res.body._items.length, 25);
});

scenario(
  "TestGet.test_get_invalid_where_fields, TestUtils.test_validate_filters_when_custom_types",
  { ...SETTINGS, VALIDATE_FILTERS: true },
  async (api) => {
    const status = async (where: string) =>
      (await api.get(`arbitraryurl?where=${q(where)}`)).status;
    assert.equal(await status('{"$and": [{"bad_field": "val"}, {"fld2": "val2"}]}'), 400);
    assert.equal(await status('{"prog": "stringValue"}'), 400);
    assert.equal(await status('{"key1": "qwerty"}'), 200);
    assert.equal(await status('{"location": {"address": "str 1", "city": "SomeCity"}}'), 200);
    assert.equal(await status('{"location.address": "str 1"}'), 200);
    assert.equal(await status('{"rows.price": 10}'), 200);
    assert.equal(await status('{"dict_list_fixed_len.key2": 1}'), 200);
    assert.equal(await status('{"bad_base_key.sub": 1}'), 400);
    assert.equal(await status('{"dict_list_fixed_len.bad_sub_key": 1}'), 400);
    const bad = await api.get(`arbitraryurl?where=${q('{"tid": "1234"}')}`);
    assert.equal(bad.status, 400);
    assert.match(bad.body._error.message, /filter on 'tid' is invalid/);
    assert.equal(await status('{"tid": "5a1154523a6bcc1d245e143d"}'), 200);
  },
);

scenario(
  "TestGet.test_get_page, test_get_custom_page, test_get_custom_params: links and _meta",
  { ...SETTINGS, QUERY_PAGE: "custom" },
  async (api) => {
    await seed(api);
    const first = await api.get("arbitraryurl");
    assert.deepEqual(first.body._meta, { custom: 1, max_results: 25, total: 101 });
    assert.equal(first.headers.get("x-total-count"), "101");
    assert.match(first.body._links.next.href, /custom=2/);
    assert.match(first.body._links.last.href, /custom=5/);
    const second = await api.get("arbitraryurl?my_param=value1&my_param=value2&custom=2");
    const links = second.body._links;
    for (const name of ["prev", "next", "self", "last"]) {
      const params = new URL(links[name].href, "http://x/").searchParams;
      assert.deepEqual(params.getAll("my_param"), ["value1", "value2"], name);
    }
    assert.deepEqual(second.body._meta, { custom: 2, max_results: 25, total: 101 });
    const last = await api.get("arbitraryurl?custom=5");
    assert.match(last.body._links.prev.href, /custom=4/);
    assert.equal(last.body._links.last, undefined);
    assert.equal(last.body._links.next, undefined);
  },
);

scenario(
  "TestGetItem.test_getitem_optimize_pagination_next_link",
  {
    ...SETTINGS,
    DOMAIN: { contacts: { ...CONTACTS, optimize_pagination_for_speed: true } },
  },
  async (api) => {
    const doc = await api.create("arbitraryurl", { ref: ref(1) });
    const item = await api.get(`arbitraryurl/${doc._id}`);
    assert.equal(item.body._links.next.href, "arbitraryurl?page=2");
    const list = await api.get("arbitraryurl");
    assert.equal(list.headers.get("x-total-count"), null);
    assert.equal(list.body._meta.total, undefined);
  },
);

const AGGREGATE = {
  ...SETTINGS,
  DOMAIN: {
    tags: {
      datasource: {
        source: "aggregate_test",
        aggregation: {
          pipeline: [
            { $unwind: "$tags" },
            { $group: { _id: "$tags", count: { $sum: "$field1" } } },
            { $sort: { count: -1, _id: -1 } },
          ],
        },
      },
    },
    dated: {
      datasource: {
        source: "aggregate_test",
        aggregation: { pipeline: [{ $match: { date: { $gte: "$date" }, x: "$x" } }] },
      },
    },
    sorted: {
      datasource: {
        source: "aggregate_test",
        aggregation: { pipeline: [{ $match: { x: { $exists: true } } }, { $sort: { x: -1 } }] },
      },
    },
  },
};

scenario(
  "TestGet.test_get_aggregation_endpoint, _parsing, _pruning, _pagination",
  AGGREGATE,
  async (api, running) => {
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const yesterday = new Date(now.getTime() - 86_400_000);
    await running.service.store.collection("aggregate_test").insertMany([
      { x: 1, tags: ["dog", "cat"], date: now },
      { x: 2, tags: ["cat"], date: now },
      { x: 2, tags: ["mouse", "cat", "dog"], date: now },
      { x: 4, tags: [], date: yesterday },
    ]);
    assert.equal((await api.get("tags?aggregate=ciao")).status, 400);
    const counted = await items(api, `tags?aggregate=${q('{"$field1": 1}')}`);
    assert.deepEqual(counted.map((d) => [d._id, d.count]), [["cat", 3], ["dog", 2], ["mouse", 1]]);
    // A name without `$`, and an unknown one, are ignored.
    assert.equal((await api.get(`tags?aggregate=${q('{"field1": 1}')}`)).status, 200);
    assert.equal((await api.get(`tags?aggregate=${q('{"$unknown": 1}')}`)).status, 200);
    // Dates in DATE_FORMAT are dates; {} drops its key and an emptied stage is skipped.
    const day = (d: Date) => d.toUTCString();
    const date = (d: Date, x: string) =>
      items(api, `dated?aggregate=${q(`{"$date": "${day(d)}", "$x": ${x}}`)}`);
    assert.equal((await date(now, "{}")).length, 3);
    assert.equal((await date(yesterday, "{}")).length, 4);
    assert.equal((await date(now, "4")).length, 0);
    assert.deepEqual((await date(yesterday, "4")).map((d) => d.x), [4]);
    const onlyX = await items(api, `dated?aggregate=${q('{"$x": 1, "$date": {}}')}`);
    assert.deepEqual(onlyX.map((d) => d.x), [1]);
    // Paging: last only where there is a next page.
    const page1 = await api.get("sorted?max_results=3");
    assert.match(page1.body._links.last.href, /page=2/);
    const page2 = await api.get("sorted?max_results=3&page=2");
    assert.equal(page2.body._links.last, undefined);
    assert.deepEqual(page2.body._meta, { page: 2, max_results: 3, total: 4 });
  },
);

scenario(
  "TestGet.test_get_embedded, TestGetItem.test_getitem_embedded: malformed embedded is 400",
  {
    ...SETTINGS,
    DOMAIN: {
      ...SETTINGS.DOMAIN,
      invoices: {
        schema: {
          person: {
            type: "objectid",
            data_relation: { resource: "contacts", embeddable: true },
          },
          inv_number: { type: "string" },
        },
      },
    },
  },
  async (api) => {
    const person = await api.create("arbitraryurl", { ref: ref(1), location: { city: "R" } });
    const invoice = await api.create("invoices", { person: person._id });
    for (const path of ["invoices", `invoices/${invoice._id}`]) {
      assert.equal((await api.get(`${path}?embedded=not-a-dict`)).status, 400);
      const bogus = '{"person": 1, "not-a-real-field": 1, "inv_number": "not-a-real-value"}';
      const res = await api.get(`${path}?embedded=${q(bogus)}`);
      assert.equal(res.status, 200, res.text);
      const doc = path === "invoices" ? res.body._items[0] : res.body;
      assert.equal(doc.person.location.city, "R");
    }
  },
);

scenario(
  "TestGet.test_get_embedded_media_validate_rest_of_fields: non-JSON form fields are strings",
  {
    ...SETTINGS,
    MULTIPART_FORM_FIELDS_AS_JSON: true,
    DOMAIN: {
      res_img: {
        schema: {
          image_file: { type: "media" },
          some_text: { type: "string" },
          some_boolean: { type: "boolean" },
          some_number: { type: "number" },
          some_list: { type: "list", schema: { type: "string" } },
        },
      },
    },
  },
  async (api) => {
    const post = (fields: Record<string, string>) => {
      const form = new FormData();
      form.append("image_file", new Blob([new TextEncoder().encode("some_image")]), "test.txt");
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      return api.request("POST", "res_img", { raw: form });
    };
    assert.equal((await post({ some_boolean: "123" })).status, 422);
    assert.equal((await post({ some_number: "xyz" })).status, 422);
    assert.equal((await post({ some_list: "true" })).status, 422);
    const ok = await post({
      some_text: '"abc"',
      some_boolean: "true",
      some_number: "123",
      some_list: '["abc", "xyz"]',
    });
    assert.equal(ok.status, 201, ok.text);
  },
);

scenario("TestRenders.test_json_keys_sorted: JSON_SORT_KEYS renders as Eve", {
  ...SETTINGS,
  JSON_SORT_KEYS: true,
}, async (api) => {
  await api.create("arbitraryurl", { ref: ref(1), prog: 1, location: { city: "Zürich" } });
  const res = await api.get("arbitraryurl");
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === "object"
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Json)[k])]))
      : v;
  // Python's json.dumps(..., sort_keys=True): ", " and ": " separators, ASCII only.
  const python = (v: unknown): string =>
    Array.isArray(v)
      ? `[${v.map(python).join(", ")}]`
      : v && typeof v === "object"
      ? `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${python(x)}`).join(", ")}}`
      : JSON.stringify(v).replace(/[^\x20-\x7e]/g, (c) =>
        `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  assert.equal(res.text, python(sorted(JSON.parse(res.text))));
  assert.match(res.text, /Z\\u00fcrich/);
});

scenario(
  "TestNoHateoas.test_get_no_hateoas_homepage_reply: INFO at home",
  { ...SETTINGS, HATEOAS: false, INFO: "_info", API_VERSION: "v1" },
  async (api) => {
    const res = await api.get("v1/");
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { _info: { server: "Eve", version: "2.3.1", api_version: "v1" } });
  },
);

scenario("TestRenders.test_CORS*: refused origins, Max-Age, Vary", {
  ...SETTINGS,
  X_DOMAINS: ["http://1of2.com", "http://2of2.com"],
}, async (api) => {
  const ok = await api.get("", { origin: "http://1of2.com" });
  assert.equal(ok.headers.get("access-control-allow-origin"), "http://1of2.com");
  assert.equal(ok.headers.get("access-control-max-age"), "21600");
  // A short answer is never compressed: it varies by Origin only.
  assert.equal(ok.headers.get("vary"), "Origin");
  for (const origin of ["http://notreally.com", "http://1of2.com:8000"]) {
    const refused = await api.get("", { origin });
    assert.equal(refused.headers.get("access-control-allow-origin"), "");
    assert.equal(refused.headers.get("access-control-max-age"), "21600");
    // As in Eve, the other Access-Control-* headers go with every answer to an origin
    // (empty lists when X_HEADERS / X_EXPOSE_HEADERS are unset), whatever the method.
    assert.equal(refused.headers.get("access-control-allow-headers"), "");
    assert.equal(refused.headers.get("access-control-expose-headers"), "");
    assert.equal(refused.headers.get("access-control-allow-methods"), "GET, HEAD, OPTIONS");
  }
  const options = await api.request("OPTIONS", "arbitraryurl", {
    headers: { origin: "http://2of2.com" },
  });
  assert.equal(options.headers.get("vary"), "Origin");
  assert.match(options.headers.get("access-control-allow-methods") ?? "", /GET/);
  // test_CORS_OPTIONS' last step: a GET from a refused origin names the endpoint's methods.
  const refusedGet = await api.get("arbitraryurl", { origin: "http://not_an_example.com" });
  assert.equal(refusedGet.status, 200);
  assert.equal(refusedGet.headers.get("access-control-allow-origin"), "");
  for (const m of [...SETTINGS.RESOURCE_METHODS, "OPTIONS"]) {
    assert.ok(refusedGet.headers.get("access-control-allow-methods")?.includes(m), m);
  }
  const item = await api.create("arbitraryurl", { ref: ref(1) });
  const itemGet = await api.get(`arbitraryurl/${item._id}`, { origin: "http://1of2.com" });
  // The same list as the item's OPTIONS answer names.
  const itemOptions = await api.request("OPTIONS", `arbitraryurl/${item._id}`, {
    headers: { origin: "http://1of2.com" },
  });
  assert.equal(
    itemGet.headers.get("access-control-allow-methods"),
    itemOptions.headers.get("allow"),
  );
  assert.deepEqual(
    new Set(itemGet.headers.get("access-control-allow-methods")!.split(", ")),
    new Set(["GET", "HEAD", "PATCH", "DELETE", "PUT", "OPTIONS"]),
  );
});

scenario("TestGridFSMediaStorage.test_media_endpoint_supports_CORS", {
  ...SETTINGS,
  RETURN_MEDIA_AS_BASE64_STRING: false,
  RETURN_MEDIA_AS_URL: true,
  X_DOMAINS: "*",
  DOMAIN: {
    contacts: CONTACTS,
    files: { schema: { media: { type: "media" } } },
  },
}, async (api) => {
  const f = new FormData();
  f.append("media", new Blob(["my file contents"], { type: "text/plain" }), "test.txt");
  const posted = await api.request("POST", "files", { raw: f });
  assert.equal(posted.status, 201, posted.text);
  assert.equal(posted.body._status, "OK");
  const url = (await api.get(`files/${posted.body._id}`)).body.media as string;
  assert.match(url, /^\/media\/[0-9a-f]{24}$/);
  for (const method of ["GET", "OPTIONS"]) {
    const res = await api.request(method, url, { headers: { origin: "http://example.com" } });
    assert.equal(res.status, 200, method);
    assert.equal(res.headers.get("access-control-allow-origin"), "http://example.com");
    assert.equal(res.headers.get("vary"), "Origin", method);
    assert.ok(res.headers.get("access-control-allow-methods")?.includes(method), method);
    if (method === "GET") assert.equal(res.text, "my file contents");
  }
});

scenario("TestEndPoints.test_schema_endpoint lists the id field", {
  ...SETTINGS,
  SCHEMA_ENDPOINT: "schema",
}, async (api) => {
  const res = await api.get("schema/contacts");
  assert.deepEqual(res.body, { ...CONTACTS.schema, _id: { type: "objectid" } });
});

scenario(
  "TestGetItem.test_getitem_by_integer, test_getitem_data_relation_hateoas (DBRef)",
  {
    ...SETTINGS,
    DOMAIN: {
      ...SETTINGS.DOMAIN,
      contacts: { ...CONTACTS, additional_lookup: { field: "prog" } },
    },
  },
  async (api, running) => {
    const contact = await api.create("arbitraryurl", { ref: ref(1), prog: 1 });
    const byInt = await api.get("arbitraryurl/1");
    assert.equal(byInt.status, 200);
    assert.equal(byInt.body._id, contact._id);
    assert.equal((await api.get("arbitraryurl/101")).status, 404);
    const id = new ObjectId();
    await running.service.store.collection("invoices").insertMany([
      { _id: id, persondbref: new DBRef("contacts", new ObjectId(contact._id)) },
    ]);
    const invoice = await api.get(`invoices/${id.toHexString()}`);
    assert.deepEqual(invoice.body._links.related.persondbref, {
      href: `arbitraryurl/${contact._id}`,
      title: "contact",
    });
  },
);

scenario(
  "TestGet.test_get_mongo_query_whitelist*: operators beyond Eve's need whitelisting",
  SETTINGS,
  async (api) => {
    const where = '{"$expr": {"$eq": [{"$year": "$_created"}, 2020]}}';
    for (const w of [where, `{"$or": [${where}]}`]) {
      const res = await api.get(`arbitraryurl?where=${q(w)}`);
      assert.equal(res.status, 400);
      assert.match(res.body._error.message, /unknown or unsupported operators: \$year/);
    }
  },
);

scenario(
  "TestGet.test_get_mongo_query_whitelist*: mongo_query_whitelist allows them",
  {
    ...SETTINGS,
    DOMAIN: { contacts: { ...CONTACTS, mongo_query_whitelist: ["$year"] } },
  },
  async (api) => {
    await api.create("arbitraryurl", { ref: ref(1) });
    const year = new Date().getUTCFullYear();
    const where = `{"$expr": {"$eq": [{"$year": "$_created"}, ${year}]}}`;
    for (const w of [where, `{"$or": [${where}]}`]) {
      assert.equal((await items(api, `arbitraryurl?where=${q(w)}`)).length, 1);
    }
    // The service's own checks stay: a blacklisted operator is refused whatever the list.
    const code = await api.get(`arbitraryurl?where=${q('{"$where": "1"}')}`);
    assert.equal(code.status, 400);
  },
  { gaps: ["$expr-operators"] },
);

/**
 * The header fields of a raw HTTP/1.1 exchange (no client in between that adds, drops or
 * decodes anything), as [name, value] pairs in the order sent, and whether a body followed.
 */
async function rawFields(base: string, method: string, path: string, extra: string[]) {
  const url = new URL(path, base);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const lines = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  await conn.write(
    new TextEncoder().encode([...lines, ...extra, "Connection: close", "", ""].join("\r\n")),
  );
  let text = "";
  const buffer = new Uint8Array(65536);
  const timer = setTimeout(() => conn.close(), 5000);
  try {
    while (true) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder("latin1").decode(buffer.subarray(0, n));
    }
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the deadline */ }
  }
  const split = text.indexOf("\r\n\r\n");
  assert.ok(split > 0, `${method} ${path}: no complete head`);
  const [status, ...fields] = text.slice(0, split).split("\r\n");
  return {
    status,
    fields: fields.map((f) => {
      const at = f.indexOf(":");
      return [f.slice(0, at).toLowerCase(), f.slice(at + 1).trim()] as [string, string];
    }),
    bodyBytes: text.length - split - 4,
  };
}

scenario(
  "TestHead.test_head_home, test_head_resource, test_head_item: HEAD's fields are GET's",
  {
    ...SETTINGS,
    // Enough resources for a home answer long enough to be compressed.
    DOMAIN: {
      ...SETTINGS.DOMAIN,
      ...Object.fromEntries(
        Array.from(
          { length: 40 },
          (_, i) => [`resource${i}`, { schema: { n: { type: "integer" } } }],
        ),
      ),
      cached: {
        cache_control: "max-age=20,must-revalidate",
        cache_expires: 20,
        schema: { n: { type: "integer" } },
      },
    },
  },
  async (api, running) => {
    const docs = Array.from({ length: 30 }, (_, i) => ({ ref: ref(i), prog: i }));
    const posted = await api.post("arbitraryurl", docs);
    assert.equal(posted.status, 201, posted.text);
    const item = posted.body._items[0]._id as string;
    const cached = await api.create("cached", { n: 1 });
    const paths = ["", "arbitraryurl", `arbitraryurl/${item}`, "cached", `cached/${cached._id}`];
    // No Accept-Encoding (Werkzeug's test client), the default of Python's HTTP clients, and
    // brotli; with and without an X-Request-Id of the client's.
    const variants = [[], ["Accept-Encoding: gzip, deflate"], ["Accept-Encoding: br"], [
      "X-Request-Id: trace-1",
      "Accept-Encoding: gzip, deflate, br",
    ]];
    let compared = 0;
    let compressed = 0;
    for (const path of paths) {
      for (const extra of variants) {
        const get = await rawFields(running.url, "GET", path, extra);
        const head = await rawFields(running.url, "HEAD", path, extra);
        const what = `${path || "home"} ${extra.join("; ")}`;
        assert.equal(get.status, "HTTP/1.1 200 OK", what);
        assert.equal(head.status, get.status, what);
        assert.equal(head.bodyBytes, 0, what);
        assert.ok(get.bodyBytes > 0, what);
        // Date may tick between the two; Expires (set from it) is compared as Eve does,
        // within a second.
        const fieldsOf = (a: typeof get) => {
          // Compared as a set, as Werkzeug's Headers compare.
          const rest = a.fields.filter(([n]) => n !== "date" && n !== "expires").sort((x, y) =>
            x.join(":") < y.join(":") ? -1 : 1
          );
          const expires = a.fields.find(([n]) => n === "expires")?.[1];
          return { rest, expires: expires === undefined ? undefined : Date.parse(expires) };
        };
        const g = fieldsOf(get);
        const h = fieldsOf(head);
        assert.deepEqual(
          h.rest,
          g.rest,
          `${what}: ${JSON.stringify(h.rest)} vs ${JSON.stringify(g.rest)}`,
        );
        if (g.expires === undefined) assert.equal(h.expires, undefined, what);
        else assert.ok(Math.abs(g.expires - h.expires!) <= 1000, what);
        if (path.startsWith("cached")) assert.ok(g.expires !== undefined, what);
        const names = new Set(g.rest.map(([n]) => n));
        if (names.has("content-encoding")) compressed++;
        // As in Eve: the request carried no id, so the answer carries none.
        assert.equal(names.has("x-request-id"), extra.some((e) => e.startsWith("X-Request-Id")));
        compared++;
      }
    }
    assert.equal(compared, paths.length * variants.length);
    // The long answers (home, the collection) were compressed for the clients that accept it.
    assert.ok(compressed >= 6, `compressed ${compressed}`);
  },
);

/**
 * `contacts` as Eve's fixtures store them (tests/__init__.py `random_contacts`, inserted with
 * pymongo, nothing through the API): `tid` an ObjectId, `born` and the dates datetimes, `rows` skus of 24 hex digits, no `_etag`; `users` documents
 * (with `username`) in the same collection.
 */
function eveContacts(count: number, extra: Record<string, unknown> = {}) {
  const hex = () =>
    Array.from({ length: 24 }, () => "0123456789abcdef"[Math.floor(Math.random() * 16)]).join("");
  const upper = (n: number) =>
    Array.from({ length: n }, () => String.fromCharCode(65 + Math.floor(Math.random() * 26))).join(
      "",
    );
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  return Array.from({ length: count }, (_, i) => ({
    _id: new ObjectId(),
    ref: upper(25),
    prog: i,
    // Eve's fixtures store one string, outside the schema (a list); a list here, as the API
    // description the test harness checks every answer against says.
    role: [["agent", "client", "vendor"][i % 3]],
    title: "Mr.",
    rows: Array.from({ length: 1 + (i % 5) }, () => ({ sku: hex(), price: 100 + i })),
    location: { address: `address ${upper(5)}`, city: `city ${upper(3)}` },
    born: new Date(Date.now() + (i % 21 - 10) * 86_400_000),
    tid: new ObjectId(),
    _updated: now,
    _created: now,
    ...extra,
  }));
}

const EVE_CONTACTS = {
  ...CONTACTS,
  cache_control: "max-age=20,must-revalidate",
  cache_expires: 20,
  schema: {
    ...CONTACTS.schema,
    title: { type: "string", default: "Mr." },
    born: { type: "datetime" },
    id_list_fixed_len: { type: "list", items: [{ type: "objectid" }] },
  },
};

scenario(
  "TestGet.test_get_where_mongo_objectid_as_string(_with_nested_documents), " +
    "TestPost.test_post_list_fixed_len: on documents stored as Eve's fixtures store them",
  {
    ...SETTINGS,
    DOMAIN: {
      ...SETTINGS.DOMAIN,
      contacts: EVE_CONTACTS,
      // The same collection with query_objectid_as_string, Eve's test's second step.
      contacts_as_string: {
        ...Object.fromEntries(
          Object.entries(EVE_CONTACTS).filter(([k]) => k !== "additional_lookup"),
        ),
        url: "asstring",
        datasource: { ...EVE_CONTACTS.datasource, source: "contacts" },
        query_objectid_as_string: true,
      },
    },
  },
  async (api, running) => {
    const contacts = running.service.store.collection("contacts");
    await contacts.insertMany(eveContacts(101));
    await contacts.insertMany(eveContacts(2, { username: "someone" }));
    // setUp: the first contact of `?max_results=2` gives item_tid.
    const first = await items(api, "arbitraryurl?max_results=2");
    const tid = first[0].tid as string;
    assert.match(tid, /^[0-9a-f]{24}$/);
    for (const path of ["arbitraryurl", "asstring"]) {
      const eq = await items(api, `${path}?where=${q(`{"tid": "${tid}"}`)}`);
      assert.equal(eq.length, 1, path);
      assert.equal(eq[0]._id, first[0]._id);
      const nested = await items(api, `${path}?where=${q(`{"tid": { "$in": ["${tid}"]}}`)}`);
      assert.equal(nested.length, 1, path);
      assert.equal(nested[0]._id, first[0]._id);
    }
    // test_post_list_fixed_len: `ref` no longer required in Eve's test; here a valid one.
    const objectid = "50656e4538345b39dd0414f0";
    const posted = await api.post("arbitraryurl", {
      ref: ref(7),
      id_list_fixed_len: [objectid],
    });
    assert.equal(posted.status, 201, posted.text);
    const found = await api.get(
      `arbitraryurl?where=${q(`{"id_list_fixed_len": {"$in": ["${objectid}"]}}`)}`,
    );
    assert.equal(found.status, 200, found.text);
    assert.equal(found.body._items.length, 1);
    assert.ok(found.body._items[0].id_list_fixed_len.includes(objectid));
    // Stored as Eve stores it: an ObjectId inside the list.
    const stored = await contacts.findOne({ ref: ref(7) });
    assert.ok(stored!.id_list_fixed_len instanceof Array);
    assert.ok((stored!.id_list_fixed_len as unknown[])[0] instanceof ObjectId);
  },
);

scenario("HEAD and GET with rate limits: only X-RateLimit-Remaining differs", {
  ...SETTINGS,
  RATE_LIMIT_GET: [50, 600],
  X_DOMAINS: ["http://1of2.com"],
}, async (api, running) => {
  await seed(api, 30);
  for (const path of ["", "arbitraryurl"]) {
    const extra = ["Accept-Encoding: gzip, deflate", "Origin: http://1of2.com"];
    const get = await rawFields(running.url, "GET", path, extra);
    const head = await rawFields(running.url, "HEAD", path, extra);
    const rest = (a: typeof get) =>
      a.fields.filter(([n]) => n !== "date" && n !== "x-ratelimit-remaining").sort((x, y) =>
        x.join(":") < y.join(":") ? -1 : 1
      );
    assert.deepEqual(rest(head), rest(get), path);
    const remaining = (a: typeof get) =>
      Number(a.fields.find(([n]) => n === "x-ratelimit-remaining")?.[1]);
    // HEAD counts as a GET.
    assert.equal(remaining(head), remaining(get) - 1, path);
  }
});
