/** HEAD answers carry the headers GET would send, without a body. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  CACHE_CONTROL: "max-age=20",
  CACHE_EXPIRES: 20,
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
};

const SAME = ["content-type", "content-length", "etag", "last-modified", "cache-control"];

scenario("HEAD of an item and a collection has GET's headers", SETTINGS, async (api) => {
  const created = await api.create("people", { name: "Ada" });
  for (const path of [`people/${created._id}`, "people", ""]) {
    const get = await api.get(path);
    const head = await api.head(path);
    assert.equal(head.status, 200);
    assert.equal(head.text, "");
    for (const name of SAME) {
      assert.equal(head.headers.get(name), get.headers.get(name), `${path}: ${name}`);
    }
    assert.ok(head.headers.get("content-length"), `${path}: content-length`);
    assert.equal(
      Number(head.headers.get("content-length")),
      new TextEncoder().encode(get.text).length,
    );
  }
});

scenario("HEAD negotiates XML like GET", SETTINGS, async (api) => {
  await api.create("people", { name: "Ada" });
  const accept = { accept: "application/xml" };
  const get = await api.get("people", accept);
  const head = await api.head("people", accept);
  assert.match(head.headers.get("content-type") ?? "", /xml/);
  assert.equal(head.headers.get("content-length"), get.headers.get("content-length"));
});

scenario("a short answer's Content-Length counts bytes, not characters", SETTINGS, async (api) => {
  const created = await api.create("people", { name: "Åsa Ødegård 😀" });
  for (const path of [`people/${created._id}`, "people"]) {
    const get = await api.get(path);
    assert.equal(get.status, 200);
    assert.match(get.text, /Åsa Ødegård 😀/);
    const bytes = new TextEncoder().encode(get.text).length;
    assert.ok(bytes > get.text.length);
    assert.equal(Number(get.headers.get("content-length")), bytes, `${path}: GET`);
    assert.equal(Number((await api.head(path)).headers.get("content-length")), bytes, path);
  }
});
