/**
 * Hostile input (issue 8): client keys never reach Object.prototype. A corpus of
 * prototype-reaching names goes through every entry point (POST JSON, bulk, PATCH dotted,
 * PUT, form, multipart, where / projection / embedded / sort), each refused with a 4xx;
 * then valid requests on every resource still behave, the prototype is untouched and the
 * heap has not grown by more than 100 MB.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { q } from "../support/assertions.ts";
import type { Client } from "../support/client.ts";
import { answersQuickly, isError, prototypeClean, rawJson } from "../support/hostile.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  IF_MATCH: false,
  DOMAIN: {
    people: {
      schema: {
        lastname: { type: "string", required: true },
        role: { type: "string" },
        location: { type: "dict", schema: { city: { type: "string" } } },
        tags: { type: "list", schema: { type: "string" } },
        photo: { type: "media" },
      },
    },
    notes: {
      allow_unknown: true,
      schema: {
        title: { type: "string" },
        author: {
          type: "objectid",
          data_relation: { resource: "people", embeddable: true },
        },
      },
    },
  },
};

/** Document bodies (raw JSON text, so `__proto__` stays a key) refused with 422. */
const DOCUMENTS = [
  '{"lastname":"Q","constructor":{"prototype":{"zzz":{"$x":1}}}}',
  '{"lastname":"Q","__proto__":{"zzz":1}}',
  '{"lastname":"Q","prototype":{"zzz":1}}',
  '{"lastname":"Q","location":{"constructor":{"prototype":{"polluted":1}}}}',
  '{"lastname":"Q","location":{"__proto__":{"polluted":1}}}',
  '{"lastname":"Q","tags":[{"__proto__":{"polluted":1}}]}',
  '{"lastname":"Q","m":{"_bsontype":"ObjectId"}}',
  '{"lastname":"Q","m":{"_bsontype":"Code","code":"x"}}',
];

/** PATCH bodies: dotted keys through prototype names. */
const PATCHES = [
  '{"location.constructor.prototype.x":"y"}',
  '{"constructor.prototype.zzz":1}',
  '{"__proto__.zzz":1}',
  '{"location.__proto__.polluted":1}',
  '{"a.prototype":1}',
  '{"m._bsontype":"ObjectId"}',
  '{"tags.$":"y"}',
  '{"location.$x":1}',
  '{"a..b":1}',
  '{"__proto__":{"zzz":1}}',
];

/** `embedded` naming no embeddable relation: ignored as Eve ignores it (200). */
const IGNORED = [
  `embedded=${q('{"author.nope":1}')}`,
];

/** Query parameters refused with 400. */
const QUERIES = [
  // Not a plain JSON object to the parser: 400, as Eve answers a malformed `embedded`.
  `embedded=${q('{"constructor":1}')}`,
  `embedded=${q('{"__proto__":{"x":1}}')}`,
  `embedded=${q('{"author.prototype":1}')}`,
  `where=${q('{"constructor.prototype.zzz":1}')}`,
  `where=${q('{"__proto__":{"zzz":1}}')}`,
  `where=${q('{"lastname":{"constructor":1}}')}`,
  `where=${q('{"m":{"_bsontype":"ObjectId"}}')}`,
  `where=${q('constructor == "x"')}`,
  `where=${q("location.__proto__.x == 1")}`,
  `projection=${q('{"constructor":1}')}`,
  `projection=${q('{"location.prototype":1}')}`,
  `projection=${q('{"__proto__":1}')}`,
  `sort=constructor`,
  `sort=-location.__proto__`,
  `sort=${q('[("prototype", 1)]')}`,
];

async function hostileCorpus(api: Client, personId: string, noteId: string) {
  for (const resource of ["people", "notes"]) {
    for (const text of DOCUMENTS) {
      isError(await rawJson(api, "POST", resource, text), 422);
      isError(await rawJson(api, "POST", resource, `[{"lastname":"Ok"},${text}]`), 422);
      const id = resource === "people" ? personId : noteId;
      isError(await rawJson(api, "PUT", `${resource}/${id}`, text), 422);
    }
    for (const text of PATCHES) {
      const id = resource === "people" ? personId : noteId;
      isError(await rawJson(api, "PATCH", `${resource}/${id}`, text), 422);
    }
    for (const query of QUERIES) {
      isError(await api.get(`${resource}?${query}`), 400);
    }
    for (const query of IGNORED) {
      const res = await api.get(`${resource}?${query}`);
      assert.equal(res.status, 200, res.text);
    }
    for (const form of ["constructor=x&lastname=Q", "__proto__=x&lastname=Q", "prototype=1"]) {
      const res = await api.request("POST", resource, { raw: new URLSearchParams(form) });
      isError(res, 422);
    }
    for (const name of ["__proto__", "constructor", "prototype"]) {
      const data = new FormData();
      data.append("lastname", "Q");
      data.append(name, "x");
      isError(await api.request("POST", resource, { raw: data }), 422);
      const file = new FormData();
      file.append("lastname", "Q");
      file.append(name, new Blob([new Uint8Array([1, 2])]), "a.bin");
      isError(await api.request("POST", resource, { raw: file }), 422);
    }
  }
}

scenario(
  "prototype names are refused at every entry point; every resource still behaves",
  SETTINGS,
  async (api) => {
    const person = await api.create("people", { lastname: "Ada", location: { city: "L" } });
    const note = await api.create("notes", { title: "n", author: person._id });
    const before = Deno.memoryUsage().heapUsed;

    await hostileCorpus(api, person._id, note._id);
    prototypeClean();
    await answersQuickly(api, "people");

    // Closed schema: writes, projections and dotted PATCH as before.
    const created = await api.post("people", { lastname: "Bo", location: { city: "M" } });
    assert.equal(created.status, 201, created.text);
    const unknown = await api.post("people", { lastname: "Bo", zzz: 1 });
    isError(unknown, 422);
    assert.deepEqual(unknown.body._issues, { zzz: "unknown field" });
    const patched = await api.patch(`people/${person._id}`, { "location.city": "P" });
    assert.equal(patched.status, 200, patched.text);
    const projected = await api.get(`people/${person._id}?projection=${q('{"lastname":1}')}`);
    assert.equal(projected.status, 200, projected.text);
    assert.equal(projected.body.lastname, "Ada");
    const full = await api.get(`people/${person._id}`);
    assert.deepEqual(full.body.location, { city: "P" });
    const sorted = await api.get(`people?sort=-lastname&where=${q('{"lastname":"Bo"}')}`);
    assert.equal(sorted.body._items.length, 1);

    // Open schema: unknown fields, embedding, PUT.
    const free = await api.post("notes", { title: "x", zzz: { a: 1 }, author: person._id });
    assert.equal(free.status, 201, free.text);
    const embedded = await api.get(`notes/${free.body._id}?embedded=${q('{"author":1}')}`);
    assert.equal(embedded.status, 200, embedded.text);
    assert.equal(embedded.body.author.lastname, "Ada");
    assert.deepEqual(embedded.body.zzz, { a: 1 });
    const put = await api.put(`notes/${note._id}`, { title: "replaced" });
    assert.equal(put.status, 200, put.text);

    // Form keys that exist on Object.prototype are plain fields, not [inherited, value].
    const form = await api.request("POST", "notes", {
      raw: new URLSearchParams("toString=y&valueOf=z&hasOwnProperty=w&title=t"),
    });
    assert.equal(form.status, 201, form.text);
    const stored = (await api.get(`notes/${form.body._id}`)).body;
    assert.equal(stored.toString, "y");
    assert.equal(stored.valueOf, "z");
    assert.equal(stored.hasOwnProperty, "w");

    // XML rendering of a document with such keys.
    const xml = await api.get(`notes/${form.body._id}`, { accept: "application/xml" });
    assert.equal(xml.status, 200);
    assert.match(xml.text, /<toString>y<\/toString>/);

    prototypeClean();
    await answersQuickly(api, "notes");
    const grown = Deno.memoryUsage().heapUsed - before;
    assert.ok(grown < 100 * 1024 * 1024, `heap grew by ${(grown / 1048576).toFixed(0)} MB`);
  },
);

scenario(
  "issues for prototype-named unknown fields are plain keys of the issue tree",
  SETTINGS,
  async (api) => {
    const res = await rawJson(api, "POST", "people", '{"lastname":"Q","toString":1}');
    isError(res, 422);
    assert.deepEqual(res.body._issues, { toString: "unknown field" });
    const nested = await rawJson(
      api,
      "POST",
      "people",
      '{"lastname":"Q","location":{"constructor":{"prototype":{"x":1}}}}',
    );
    isError(nested, 422);
    assert.deepEqual(nested.body._issues, { location: { constructor: "field name not allowed" } });
    prototypeClean();
    await answersQuickly(api, "people");
  },
);
