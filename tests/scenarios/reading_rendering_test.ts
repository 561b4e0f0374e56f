/** Reading: JSON and XML rendering, RENDERERS, JSONP. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  JSONP_ARGUMENT: "callback",
  DOMAIN: {
    people: {
      item_title: "person",
      schema: {
        name: { type: "string" },
        age: { type: "integer" },
        address: { type: "dict", schema: { city: { type: "string" }, geo: { type: "dict" } } },
        tags: { type: "list", schema: { type: "string" } },
      },
    },
  },
};

const XML = { accept: "application/xml" };

async function seed(
  api: Client,
): Promise<{ _id: string; _etag: string; _updated: string; _created: string }> {
  return await api.create("people", {
    name: "a&<b>",
    age: 7,
    address: { city: "Rome", geo: { lat: 1 } },
    tags: ["x", "y"],
  });
}

scenario("JSON is the default rendering", SETTINGS, async (api) => {
  await seed(api);
  const res = await api.get("people");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.equal(res.body._items[0].name, "a&<b>");
  const wildcard = await api.get("people", { accept: "*/*" });
  assert.equal(wildcard.headers.get("content-type"), "application/json");
  const unknown = await api.get("people", { accept: "text/csv" });
  assert.equal(unknown.status, 200);
  assert.equal(unknown.headers.get("content-type"), "application/json");
});

scenario("XML home: a resource element with link elements", SETTINGS, async (api) => {
  const res = await api.get("/", XML);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/xml; charset=utf-8");
  assert.equal(
    res.text,
    '<resource><link rel="child" href="people" title="people"/>' +
      '<link rel="service-desc" href="openapi.json" title="OpenAPI description"/>' +
      '<link rel="service-doc" href="docs" title="API docs"/></resource>',
  );
});

scenario("XML collection: items, meta and nested dicts and lists", SETTINGS, async (api) => {
  const doc = await seed(api);
  const res = await api.get("people", XML);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/xml; charset=utf-8");
  assert.equal(
    res.text,
    '<resource href="people" title="people">' +
      '<link rel="parent" href="/" title="home"/>' +
      "<_meta><max_results>25</max_results><page>1</page><total>1</total></_meta>" +
      `<resource href="people/${doc._id}" title="person">` +
      '<link rel="collection" href="people" title="people"/>' +
      '<link rel="parent" href="/" title="home"/>' +
      `<_created>${doc._created}</_created><_etag>${doc._etag}</_etag><_id>${doc._id}</_id>` +
      `<_updated>${doc._updated}</_updated>` +
      "<address><city>Rome</city><geo><lat>1</lat></geo></address>" +
      "<age>7</age><name>a&amp;&lt;b&gt;</name><tags>x</tags><tags>y</tags>" +
      "</resource></resource>",
  );
});

scenario("XML item: the item is the resource element", SETTINGS, async (api) => {
  const doc = await seed(api);
  const res = await api.get(`people/${doc._id}`, XML);
  assert.equal(res.status, 200);
  assert.ok(res.text.startsWith(`<resource href="people/${doc._id}" title="person">`), res.text);
  assert.ok(res.text.includes("<address><city>Rome</city><geo><lat>1</lat></geo></address>"));
  assert.ok(res.text.includes("<tags>x</tags><tags>y</tags>"));
});

scenario(
  "XML: keys that are not XML names get distinct escaped element names",
  SETTINGS,
  async (api) => {
    // `geo` is a dict of any keys: "a b", "a:b", "a_x0020_b" and "1" must stay tellable apart.
    const doc = await api.create("people", {
      address: { geo: { "a b": 1, "a:b": 2, "a_x0020_b": 3, "1": 4, "prénom": 5 } },
    });
    const res = await api.get(`people/${doc._id}`, XML);
    assert.equal(res.status, 200);
    for (
      const element of [
        "<a_x0020_b>1</a_x0020_b>",
        "<a_x003A_b>2</a_x003A_b>",
        "<a_x005F_x0020_b>3</a_x005F_x0020_b>",
        "<_x0031_>4</_x0031_>",
        "<prénom>5</prénom>",
      ]
    ) assert.ok(res.text.includes(element), `${element} in ${res.text}`);
  },
);

scenario("XML errors are rendered as XML too", SETTINGS, async (api) => {
  const res = await api.get("people?page=0", XML);
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("content-type"), "application/xml; charset=utf-8");
  assert.ok(res.text.includes("<_status>ERR</_status>"), res.text);
});

scenario(
  "RENDERERS: only enabled renderers answer",
  { ...SETTINGS, RENDERERS: ["json"] },
  async (api) => {
    await seed(api);
    const res = await api.get("people", XML);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.body._items.length, 1);
  },
);

scenario(
  "RENDERERS: XML alone is the default",
  { ...SETTINGS, RENDERERS: ["xml"] },
  async (api) => {
    const res = await api.get("/");
    assert.equal(res.headers.get("content-type"), "application/xml; charset=utf-8");
    assert.ok(res.text.startsWith("<resource>"));
  },
);

scenario("JSONP: the callback wraps the JSON", SETTINGS, async (api) => {
  const doc = await seed(api);
  const res = await api.get(`people/${doc._id}?callback=app.show_1`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/javascript; charset=utf-8");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const m = /^\/\*\*\/app\.show_1\((.*)\)$/s.exec(res.text);
  assert.ok(m, res.text);
  assert.equal(JSON.parse(m[1])._id, doc._id);
  const xml = await api.get("people?callback=cb", XML);
  assert.ok(xml.text.startsWith("/**/cb({"), "JSONP answers JSON even when XML is asked");
  const plain = await api.get(`people/${doc._id}`);
  assert.equal(plain.body._id, doc._id);
});

scenario("JSONP: bad callback names answer 400", SETTINGS, async (api) => {
  const doc = await seed(api);
  for (const bad of ["alert(1)", "a b", "1abc", "", "x;y", "a..b"]) {
    const res = await api.get(`people/${doc._id}?callback=${encodeURIComponent(bad)}`);
    assert.equal(res.status, 400, `${JSON.stringify(bad)} answered ${res.status}`);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.body._error.code, 400);
  }
  const home = await api.get("/?callback=alert(1)");
  assert.equal(home.status, 400, "the home endpoint checks the callback too");
});

scenario(
  "JSONP: without JSONP_ARGUMENT nothing is wrapped",
  { ...SETTINGS, JSONP_ARGUMENT: null },
  async (api) => {
    await seed(api);
    const res = await api.get("people?callback=cb");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.body._items.length, 1);
  },
);

scenario("pretty indents JSON and XML", SETTINGS, async (api) => {
  const json = await api.get("/?pretty");
  assert.equal(json.text, JSON.stringify(json.body, null, 4));
  const xml = await api.get("/?pretty", XML);
  assert.ok(xml.text.includes('\n    <link rel="child"'), xml.text);
});

scenario(
  "IF_MATCH false: no _etag in any rendering of an item or a page",
  { ...SETTINGS, IF_MATCH: false },
  async (api) => {
    const doc = await seed(api);
    for (const path of [`people/${doc._id}`, "people", "people?max_results=1&page=1"]) {
      for (const query of ["", path.includes("?") ? "&pretty" : "?pretty"]) {
        const json = await api.get(path + query);
        assert.equal(json.status, 200);
        assert.ok(!json.text.includes("_etag"), json.text);
        const item = path.startsWith("people/") ? json.body : json.body._items[0];
        assert.deepEqual(Object.keys(item).sort(), [
          "_created",
          "_id",
          "_links",
          "_updated",
          "address",
          "age",
          "name",
          "tags",
        ]);
        const xml = await api.get(path + query, XML);
        assert.equal(xml.status, 200);
        assert.ok(!xml.text.includes("_etag"), xml.text);
        assert.ok(xml.text.includes("<age>7</age>"), xml.text);
      }
    }
  },
);

scenario(
  "IF_MATCH false with JSON_SORT_KEYS: no _etag, keys sorted",
  { ...SETTINGS, IF_MATCH: false, JSON_SORT_KEYS: true },
  async (api) => {
    const doc = await seed(api);
    for (const path of [`people/${doc._id}`, "people"]) {
      const res = await api.get(path);
      assert.equal(res.status, 200);
      assert.ok(!res.text.includes("_etag"), res.text);
      assert.ok(res.text.includes('"_created": "'), res.text);
    }
  },
);

const RELATED = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    people: { item_title: "person", schema: { name: { type: "string" } } },
    notes: {
      schema: {
        text: { type: "string" },
        author: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
      },
    },
  },
};

scenario("XML: related links become attributes of the reference element", RELATED, async (api) => {
  const person = await api.create("people", { name: "ann" });
  const note = await api.create("notes", { text: "hi", author: person._id });
  const plain = await api.get(`notes/${note._id}`, XML);
  assert.ok(
    plain.text.includes(
      `<author href="people/${person._id}" title="person">${person._id}</author>`,
    ),
    plain.text,
  );
  const embedded = await api.get(
    `notes/${note._id}?embedded=${encodeURIComponent('{"author": 1}')}`,
    XML,
  );
  assert.ok(
    embedded.text.includes(`<author href="people/${person._id}" title="person">`),
    embedded.text,
  );
  assert.ok(embedded.text.includes("<name>ann</name>"), embedded.text);
});
