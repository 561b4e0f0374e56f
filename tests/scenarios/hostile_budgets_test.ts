/**
 * Hostile input (issue 8): the budgets. Fields per document and per body, list length,
 * nesting depth, bulk size, parts per multipart body, documents embedded per response and
 * inline media per response are refused with a 4xx naming the setting; the XML renderer
 * holds long and deep data. After each, a normal request answers within 100 ms.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q } from "../support/assertions.ts";
import { answersQuickly, isError, rawJson } from "../support/hostile.ts";

const DOMAIN = {
  people: {
    allow_unknown: true,
    schema: {
      lastname: { type: "string" },
      tags: { type: "list" },
      photo: { type: "media" },
    },
  },
  notes: {
    schema: {
      title: { type: "string" },
      contributors: {
        type: "list",
        schema: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
      },
    },
  },
};

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  IF_MATCH: false,
  DOMAIN,
};

/** `n` keys `k0`..`kn` as JSON object text. */
function manyKeys(n: number): string {
  const parts: string[] = new Array(n);
  for (let i = 0; i < n; i++) parts[i] = `"k${i}":0`;
  return `{${parts.join(",")}}`;
}

scenario(
  "a 1.2M-key JSON body is refused fast, without blocking the loop",
  SETTINGS,
  async (api) => {
    const text = manyKeys(1_200_000);
    const started = performance.now();
    const res = await rawJson(api, "POST", "people", text);
    const took = performance.now() - started;
    isError(res, 413, "MAX_DOCUMENT_FIELDS");
    assert.ok(took < 3000, `took ${took.toFixed(0)} ms`);
    await answersQuickly(api, "people");
  },
);

scenario("fields per document, per body, list length and depth budgets", {
  ...SETTINGS,
  MAX_DOCUMENT_FIELDS: 50,
  MAX_BODY_FIELDS: 120,
  MAX_LIST_LENGTH: 20,
  MAX_DOCUMENT_DEPTH: 5,
}, async (api) => {
  isError(await rawJson(api, "POST", "people", manyKeys(51)), 413, "MAX_DOCUMENT_FIELDS");
  assert.equal((await rawJson(api, "POST", "people", manyKeys(50))).status, 201);
  // Nested fields count too.
  const nested = JSON.stringify({ a: JSON.parse(manyKeys(30)), b: JSON.parse(manyKeys(30)) });
  isError(await rawJson(api, "POST", "people", nested), 413, "MAX_DOCUMENT_FIELDS");
  // A bulk insert: each document within its budget, the body past its own.
  const bulk = `[${Array.from({ length: 3 }, () => manyKeys(45)).join(",")}]`;
  isError(await rawJson(api, "POST", "people", bulk), 413, "MAX_BODY_FIELDS");
  const small = `[${Array.from({ length: 2 }, () => manyKeys(45)).join(",")}]`;
  assert.equal((await rawJson(api, "POST", "people", small)).status, 201);

  const list = (n: number) => JSON.stringify({ tags: Array.from({ length: n }, (_, i) => i) });
  isError(await rawJson(api, "POST", "people", list(21)), 413, "MAX_LIST_LENGTH");
  assert.equal((await rawJson(api, "POST", "people", list(20))).status, 201);
  // Strings holding the structure's characters are not structure.
  const tricky = JSON.stringify({ lastname: '{[:,,,:]}"\\'.repeat(50) });
  assert.equal((await rawJson(api, "POST", "people", tricky)).status, 201);

  const deep = (n: number) => '{"a":'.repeat(n - 1) + '{"a":1}' + "}".repeat(n - 1);
  isError(await rawJson(api, "POST", "people", deep(6)), 413, "MAX_DOCUMENT_DEPTH");
  assert.equal((await rawJson(api, "POST", "people", deep(5))).status, 201);
  isError(await rawJson(api, "POST", "people", `[${deep(6)}]`), 413, "MAX_DOCUMENT_DEPTH");
  // PATCH bodies are held to the same budgets.
  const id = (await api.create("people", { lastname: "x" }))._id;
  isError(await rawJson(api, "PATCH", `people/${id}`, list(21)), 413, "MAX_LIST_LENGTH");
  // A dotted key is as deep as its segments.
  const dotted = JSON.stringify({ [Array.from({ length: 100 }, () => "a").join(".")]: 1 });
  const tooDeep = await rawJson(api, "PATCH", `people/${id}`, dotted);
  isError(tooDeep, 422);
  assert.match(tooDeep.text, /nested too deeply/);

  // Form fields count against the document budget.
  const form = new URLSearchParams(Array.from({ length: 51 }, (_, i) => [`f${i}`, "x"]));
  isError(await api.request("POST", "people", { raw: form }), 413, "MAX_DOCUMENT_FIELDS");
  await answersQuickly(api, "people");
});

scenario("parts per multipart body (MAX_MULTIPART_PARTS)", {
  ...SETTINGS,
  MAX_MULTIPART_PARTS: 10,
  MULTIPART_FORM_FIELDS_AS_JSON: true,
  MAX_LIST_LENGTH: 5,
}, async (api) => {
  const many = new FormData();
  for (let i = 0; i < 11; i++) many.append(`f${i}`, '"x"');
  isError(await api.request("POST", "people", { raw: many }), 413, "MAX_MULTIPART_PARTS");
  const ok = new FormData();
  for (let i = 0; i < 10; i++) ok.append(`f${i}`, '"x"');
  assert.equal((await api.request("POST", "people", { raw: ok })).status, 201);
  // A JSON field is held to the document budgets.
  const long = new FormData();
  long.append("tags", JSON.stringify([1, 2, 3, 4, 5, 6]));
  isError(await api.request("POST", "people", { raw: long }), 413, "MAX_LIST_LENGTH");
  await answersQuickly(api, "people");
});

scenario("documents embedded per response (MAX_EMBEDDED_DOCUMENTS)", {
  ...SETTINGS,
  MAX_EMBEDDED_DOCUMENTS: 5,
}, async (api) => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await api.create("people", { lastname: `p${i}` }))._id);
  const a = await api.create("notes", { title: "a", contributors: ids });
  await api.create("notes", { title: "b", contributors: ids });
  const embed = `embedded=${q('{"contributors":1}')}`;
  const one = await api.get(`notes/${a._id}?${embed}`);
  assert.equal(one.status, 200, one.text);
  assert.equal(one.body.contributors[2].lastname, "p2");
  isError(await api.get(`notes?${embed}`), 400, "MAX_EMBEDDED_DOCUMENTS");
  const page = await api.get(`notes?${embed}&max_results=1`);
  assert.equal(page.status, 200, page.text);
  await answersQuickly(api, "notes");
});

const PHOTO = new Uint8Array(600).fill(7);

async function upload(api: import("../support/client.ts").Client, name: string) {
  const data = new FormData();
  data.append("lastname", name);
  data.append("photo", new Blob([PHOTO], { type: "image/png" }), "p.png");
  const res = await api.request("POST", "people", { raw: data });
  assert.equal(res.status, 201, res.text);
  return res.body._id as string;
}

scenario("inline media per response (MAX_RESPONSE_MEDIA_BYTES)", {
  ...SETTINGS,
  MAX_RESPONSE_MEDIA_BYTES: 1000,
}, async (api) => {
  const id = await upload(api, "a");
  await upload(api, "b");
  const one = await api.get(`people/${id}`);
  assert.equal(one.status, 200, one.text);
  assert.equal(one.body.photo.length, 800);
  isError(await api.get("people"), 400, "RETURN_MEDIA_AS_URL");
  assert.equal((await api.get("people?max_results=1")).status, 200);
  await answersQuickly(api, `people/${id}`);
});

scenario("media as URLs are not held to the inline budget", {
  ...SETTINGS,
  MAX_RESPONSE_MEDIA_BYTES: 1000,
  RETURN_MEDIA_AS_URL: true,
}, async (api) => {
  await upload(api, "a");
  await upload(api, "b");
  const all = await api.get("people");
  assert.equal(all.status, 200, all.text);
  assert.equal(all.body._items.length, 2);
});

scenario("XML renders a 150k-member list and deep documents", {
  ...SETTINGS,
  MAX_LIST_LENGTH: 200_000,
}, async (api) => {
  const long = Array.from({ length: 150_000 }, (_, i) => i % 10);
  const created = await api.post("people", { lastname: "long", tags: long });
  assert.equal(created.status, 201, created.text);
  const xml = await api.get(`people/${created.body._id}`, { accept: "application/xml" });
  assert.equal(xml.status, 200, xml.text.slice(0, 300));
  assert.equal(xml.text.split("<tags>").length - 1, 150_000);
  let deep: unknown = "leaf";
  for (let i = 0; i < 30; i++) deep = { d: deep };
  const nested = await api.post("people", { lastname: "deep", n: deep });
  assert.equal(nested.status, 201, nested.text);
  const page = await api.get("people", { accept: "application/xml" });
  assert.equal(page.status, 200);
  assert.match(page.text, /leaf/);
  await answersQuickly(api, `people/${nested.body._id}`);
});
