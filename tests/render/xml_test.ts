import assert from "node:assert/strict";
import { XMLValidator } from "fast-xml-parser";
import { renderXml, tagName } from "../../src/render/xml.ts";
import { Decimal128, ObjectId } from "../../src/doc/bson.ts";
import { fuzzSeed, pick, random } from "../support/random.ts";

const O = { pretty: false, formatDate: (d: Date) => d.toUTCString() };
const OID = "507f1f77bcf86cd799439011";

function wellFormed(xml: string): void {
  assert.equal(XMLValidator.validate(xml), true, xml);
}

Deno.test("xml: home endpoint has one child link per resource", () => {
  const xml = renderXml({
    _links: {
      child: [{ href: "people", title: "people" }, { href: "works", title: "works" }],
    },
  }, O);
  assert.equal(
    xml,
    '<resource><link rel="child" href="people" title="people"/>' +
      '<link rel="child" href="works" title="works"/></resource>',
  );
});

Deno.test("xml: collection envelope", () => {
  const xml = renderXml({
    _items: [{
      _id: new ObjectId(OID),
      name: "john",
      _updated: new Date(0),
      _links: { self: { href: `people/${OID}`, title: "person" } },
    }],
    _links: {
      self: { href: "people", title: "people" },
      parent: { href: "/", title: "home" },
      next: { href: "people?page=2", title: "next page" },
    },
    _meta: { total: 30, page: 1, max_results: 25 },
  }, O);
  assert.equal(
    xml,
    '<resource href="people" title="people">' +
      '<link rel="next" href="people?page=2" title="next page"/>' +
      '<link rel="parent" href="/" title="home"/>' +
      "<_meta><max_results>25</max_results><page>1</page><total>30</total></_meta>" +
      `<resource href="people/${OID}" title="person">` +
      `<_id>${OID}</_id><_updated>Thu, 01 Jan 1970 00:00:00 GMT</_updated><name>john</name>` +
      "</resource></resource>",
  );
  wellFormed(xml);
});

Deno.test("xml: item with nested dicts, lists, null, related links", () => {
  const xml = renderXml({
    name: "x",
    tags: ["a", "b"],
    address: { city: "Rome", zip: 100 },
    author: { _id: OID, name: "y", _links: { self: { href: "people/1", title: "person" } } },
    none: null,
    empty: [],
    flag: true,
    price: Decimal128.fromString("1.10"),
    coords: [[1, 2], [3, 4]],
    _links: {
      self: { href: "books/1", title: "book" },
      related: { author: { href: "people/1", title: "person" } },
    },
  }, O);
  assert.equal(
    xml,
    '<resource href="books/1" title="book">' +
      "<address><city>Rome</city><zip>100</zip></address>" +
      '<author href="people/1" title="person"><_id>' + OID + "</_id><name>y</name>" +
      '<link rel="self" href="people/1" title="person"/></author>' +
      "<coords><item>1</item><item>2</item></coords><coords><item>3</item><item>4</item></coords>" +
      "<flag>true</flag><name>x</name><none/><price>1.10</price>" +
      "<tags>a</tags><tags>b</tags></resource>",
  );
  wellFormed(xml);
});

Deno.test("xml: related links on list fields go one per element", () => {
  const xml = renderXml({
    refs: ["1", "2"],
    _links: { related: { refs: [{ href: "r/1", title: "r" }, { href: "r/2", title: "r" }] } },
  }, O);
  assert.equal(
    xml,
    '<resource><refs href="r/1" title="r">1</refs><refs href="r/2" title="r">2</refs></resource>',
  );
});

Deno.test("xml: escaping of text and attributes", () => {
  const xml = renderXml({
    name: `<script>&"'</script>`,
    _links: { self: { href: 'a?x=1&y="2"', title: "<t>" } },
  }, O);
  wellFormed(xml);
  assert.ok(!xml.includes("<script>"));
  assert.ok(xml.includes("&lt;script&gt;&amp;"));
  assert.ok(xml.includes('href="a?x=1&amp;y=&quot;2&quot;"'));
});

Deno.test("xml: hostile keys and characters still give well-formed XML", () => {
  const xml = renderXml({
    "a b": 1,
    "1st": 2,
    "x:y": 3,
    "<evil>": 4,
    "": 5,
    ctrl: "a\u0000b\u001fc",
    lone: "\ud800x",
  }, O);
  wellFormed(xml);
  assert.ok(xml.includes("<a_x0020_b>1</a_x0020_b>"));
  assert.ok(xml.includes("<_x0031_st>2</_x0031_st>"));
  assert.ok(xml.includes("<x_x003A_y>3</x_x003A_y>"));
  assert.ok(xml.includes("<_x003C_evil_x003E_>4</_x003C_evil_x003E_>"));
  assert.ok(xml.includes("<_x_>5</_x_>"));
  assert.ok(xml.includes("<ctrl>a\ufffdb\ufffdc</ctrl>"));
  assert.ok(xml.includes("<lone>\ufffdx</lone>"));
});

Deno.test("xml: tagName", () => {
  assert.equal(tagName("name"), "name");
  assert.equal(tagName("_id"), "_id");
  assert.equal(tagName("a.b-c"), "a.b-c");
  assert.equal(tagName("-x"), "_x002D_x");
  assert.equal(tagName(""), "_x_");
  assert.equal(tagName("a b"), "a_x0020_b");
  assert.equal(tagName("a:b"), "a_x003A_b");
  assert.equal(tagName("a_b"), "a_b");
  assert.equal(tagName("_x"), "_x005F_x");
  assert.equal(tagName("名前"), "名前");
  assert.equal(tagName("\ud800"), "_xD800_");
  assert.equal(tagName("\u{1F600}"), "_x1F600_");
});

/** The inverse of tagName (as .NET's XmlConvert.DecodeName). */
function decodeName(name: string): string {
  if (name === "_x_") return "";
  return name.replace(/_x([0-9A-F]{4,6})_/g, (_, hex) => String.fromCodePoint(parseInt(hex, 16)));
}

Deno.test("xml: no two keys share an element name (generated keys decode back)", () => {
  const rnd = random(fuzzSeed());
  const alphabet = [
    "a",
    "Z",
    "_",
    "x",
    "X",
    "0",
    "9",
    "-",
    ".",
    ":",
    " ",
    "<",
    "&",
    "é",
    "名",
    "\u0000",
    "\ud800",
    "\u{1F600}",
    "\u00B7",
    "\uFFFF",
    "_x",
    "005F",
    "_",
  ];
  const names = new Map<string, string>();
  for (let i = 0; i < 5000; i++) {
    const length = Math.floor(rnd() * 6);
    let key = "";
    for (let j = 0; j < length; j++) key += pick(rnd, alphabet);
    const name = tagName(key);
    assert.equal(decodeName(name), key, `${JSON.stringify(key)} -> ${name}`);
    const other = names.get(name);
    assert.ok(
      other === undefined || other === key,
      `${JSON.stringify(key)} and ${JSON.stringify(other)}`,
    );
    names.set(name, key);
    wellFormed(renderXml({ [key]: 1 }, O));
  }
});

Deno.test("xml: bulk and error bodies keep their status fields", () => {
  const xml = renderXml({
    _status: "ERR",
    _error: { code: 422, message: "Insertion failure" },
    _items: [{ _status: "ERR", _issues: { name: "required field" } }, { _status: "OK" }],
  }, O);
  assert.equal(
    xml,
    "<resource><_error><code>422</code><message>Insertion failure</message></_error>" +
      "<_status>ERR</_status>" +
      "<resource><_issues><name>required field</name></_issues><_status>ERR</_status></resource>" +
      "<resource><_status>OK</_status></resource></resource>",
  );
});

Deno.test("xml: a top-level list is a collection; pretty output indents", () => {
  assert.equal(renderXml([{ a: 1 }], O), "<resource><resource><a>1</a></resource></resource>");
  const pretty = renderXml({ a: { b: 1 } }, { ...O, pretty: true });
  assert.equal(pretty, "<resource>\n    <a>\n        <b>1</b>\n    </a>\n</resource>");
  wellFormed(pretty);
});

Deno.test("xml: a large collection renders quickly", () => {
  const items = Array.from({ length: 2000 }, (_, i) => ({
    _id: new ObjectId(),
    n: i,
    tags: ["a", "b"],
    d: new Date(),
  }));
  const t0 = performance.now();
  const xml = renderXml({ _items: items }, O);
  assert.ok(performance.now() - t0 < 2000);
  wellFormed(xml);
});
