/**
 * Every combination of EXTENDED_MEDIA_INFO, RETURN_MEDIA_AS_BASE64_STRING and
 * RETURN_MEDIA_AS_URL, read through an item, a collection, an embedded reference and a
 * stored version, in JSON and in XML: one table, each row a service per store.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { base64, multipart, sendForm } from "../support/media.ts";
import type { ObjectId } from "../../src/doc/bson.ts";
import type { Json } from "../support/client.ts";

const INFO = ["content_type", "name", "length"];
const CONTENT = "hello <media> & more";
const FILENAME = "hello.txt";

interface Combo {
  EXTENDED_MEDIA_INFO: string[];
  RETURN_MEDIA_AS_BASE64_STRING: boolean;
  RETURN_MEDIA_AS_URL: boolean;
}

const COMBOS: Combo[] = [];
for (const info of [[], INFO]) {
  for (const asBase64 of [true, false]) {
    for (const asUrl of [false, true]) {
      COMBOS.push({
        EXTENDED_MEDIA_INFO: info,
        RETURN_MEDIA_AS_BASE64_STRING: asBase64,
        RETURN_MEDIA_AS_URL: asUrl,
      });
    }
  }
}

/** What a media field holds under `combo` for the stored file `fileId`. */
function expected(combo: Combo, fileId: string): unknown {
  const file = combo.RETURN_MEDIA_AS_URL
    ? `/media/${fileId}`
    : combo.RETURN_MEDIA_AS_BASE64_STRING
    ? base64(CONTENT)
    : null;
  if (combo.EXTENDED_MEDIA_INFO.length === 0) return file;
  return { file, content_type: "text/plain", name: FILENAME, length: CONTENT.length };
}

/** The XML element of field `key` holding `value` (keys sorted, null empty). */
function xmlField(key: string, value: unknown): string {
  if (value === null) return `<${key}/>`;
  if (typeof value === "object") {
    const inner = Object.keys(value!).sort()
      .map((k) => xmlField(k, (value as Record<string, unknown>)[k])).join("");
    return `<${key}>${inner}</${key}>`;
  }
  return `<${key}>${String(value)}</${key}>`;
}

/** Where each kind of read puts the media field of the uploaded document. */
const READS: Array<{ kind: string; path: (ids: Ids) => string; field: (body: Json) => unknown }> = [
  { kind: "item", path: (ids) => `files/${ids.doc}`, field: (body) => body.data },
  { kind: "collection", path: () => "files", field: (body) => body._items[0].data },
  {
    kind: "embedded",
    path: (ids) => `notes/${ids.note}?embedded=${encodeURIComponent('{"file": 1}')}`,
    field: (body) => body.file.data,
  },
  { kind: "version", path: (ids) => `files/${ids.doc}?version=1`, field: (body) => body.data },
];

interface Ids {
  doc: string;
  note: string;
}

const label = (combo: Combo) =>
  `EXTENDED_MEDIA_INFO=${combo.EXTENDED_MEDIA_INFO.length ? "[...]" : "[]"} ` +
  `RETURN_MEDIA_AS_BASE64_STRING=${combo.RETURN_MEDIA_AS_BASE64_STRING} ` +
  `RETURN_MEDIA_AS_URL=${combo.RETURN_MEDIA_AS_URL}`;

for (const combo of COMBOS) {
  const settings = {
    ...combo,
    RESOURCE_METHODS: ["GET", "POST"],
    ITEM_METHODS: ["GET", "PATCH"],
    DOMAIN: {
      files: { versioning: true, schema: { name: { type: "string" }, data: { type: "media" } } },
      notes: {
        schema: {
          file: { type: "objectid", data_relation: { resource: "files", embeddable: true } },
        },
      },
    },
  };
  scenario(`media reads with ${label(combo)}`, settings, async (api, running) => {
    const created = await sendForm(api, {
      method: "POST",
      path: "files",
      form: multipart({ name: "one" }, { data: { name: FILENAME, content: CONTENT } }),
    });
    assert.equal(created.status, 201, created.text);
    const doc = created.body._id as string;
    // A second version, so that version 1 is read from the stored versions.
    const patched = await sendForm(api, {
      method: "PATCH",
      path: `files/${doc}`,
      form: multipart({ name: "two" }),
      headers: { "if-match": created.body._etag },
    });
    assert.equal(patched.status, 200, patched.text);
    const note = (await api.create("notes", { file: doc }))._id as string;
    const [stored] = await running.service.store.collection("files").find({});
    const want = expected(combo, (stored.data as ObjectId).toHexString());
    for (const read of READS) {
      const path = read.path({ doc, note });
      const json = await api.get(path);
      assert.equal(json.status, 200, `${read.kind}: ${json.text}`);
      assert.deepEqual(read.field(json.body), want, `${read.kind} (JSON)`);
      const xml = await api.get(path, { accept: "application/xml" });
      assert.equal(xml.status, 200, `${read.kind} XML: ${xml.text}`);
      const element = xmlField("data", want).replaceAll("&", "&amp;");
      assert.ok(xml.text.includes(element), `${read.kind} (XML): ${element} in ${xml.text}`);
    }
    if (combo.RETURN_MEDIA_AS_URL) {
      const served = await api.get(`/media/${(stored.data as ObjectId).toHexString()}`);
      assert.equal(served.text, CONTENT);
    }
  });
}
