/**
 * Bodies holding texts rendered already (`RenderedJson`, as read answers hold their cached
 * items) render exactly as the data those texts stand for: compact JSON writes the texts as
 * they are, any other rendering (pretty, sorted keys, XML) reads them back.
 */
import assert from "node:assert/strict";
import { HOLDS_RENDERED, jsonText, RenderedJson, renderJson } from "../../src/render/json.ts";
import { renderXml } from "../../src/render/xml.ts";
import { ObjectId } from "../../src/doc/bson.ts";

const formatDate = (d: Date) => d.toUTCString();

const items = () => [
  { _id: new ObjectId("6b092cafa9f41e9b0776ee05"), at: new Date(0), n: 1.5, tags: ["é", "\u2028"] },
  { _id: "x", gone: undefined, nested: { deep: [1, null, undefined] }, ["__proto__"]: 1 },
];

function bodies() {
  const plain = { _items: items(), skipped: undefined, _links: { self: { href: "a" } }, _meta: {} };
  const rendered: Record<string, unknown> = {
    _items: items().map((doc) => new RenderedJson(jsonText(doc, formatDate))),
    skipped: undefined,
    _links: { self: { href: "a" } },
    _meta: {},
  };
  (rendered as { [HOLDS_RENDERED]?: boolean })[HOLDS_RENDERED] = true;
  return { plain, rendered };
}

Deno.test("rendered items: every rendering is the plain body's, byte for byte", () => {
  const { plain, rendered } = bodies();
  for (const pretty of [false, true]) {
    for (const sortKeys of [false, true]) {
      const opts = { pretty, sortKeys, formatDate };
      assert.equal(renderJson(rendered, opts), renderJson(plain, opts), `${pretty} ${sortKeys}`);
    }
  }
  assert.equal(
    renderXml(rendered, { pretty: false, formatDate }),
    renderXml(plain, { pretty: false, formatDate }),
  );
  // One item alone (an item GET's body).
  const doc = items()[0];
  const one = new RenderedJson(jsonText(doc, formatDate));
  assert.equal(
    renderJson(one, { pretty: false, formatDate }),
    renderJson(doc, { pretty: false, formatDate }),
  );
  assert.equal(
    renderJson(one, { pretty: true, formatDate }),
    renderJson(doc, { pretty: true, formatDate }),
  );
});

Deno.test("rendered items: a mix of texts and documents renders as the documents", () => {
  const docs = items();
  const body: Record<string, unknown> = {
    _items: [new RenderedJson(jsonText(docs[0], formatDate)), docs[1]],
  };
  (body as { [HOLDS_RENDERED]?: boolean })[HOLDS_RENDERED] = true;
  assert.equal(
    renderJson(body, { pretty: false, formatDate }),
    renderJson({ _items: items() }, { pretty: false, formatDate }),
  );
});
