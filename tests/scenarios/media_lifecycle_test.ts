/**
 * No orphans: after every kind of write the store holds exactly the files that documents
 * or their versions reference (counted through the store interface), and a failed upload
 * (refused document, file past MAX_FILE_SIZE, client gone mid-body) leaves no file behind.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";
import { fileCount, multipart, sendForm } from "../support/media.ts";
import type { ObjectId } from "../../src/doc/bson.ts";
import type { Running } from "../support/harness.ts";
import { createLogger } from "../../src/log.ts";

const SCHEMA = {
  name: { type: "string" },
  age: { type: "integer" },
  data: { type: "media" },
  extra: { type: "media" },
};
const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  MAX_FILE_SIZE: 512 * 1024,
  DOMAIN: {
    plain: { schema: SCHEMA },
    versioned: { versioning: true, schema: SCHEMA },
    soft: { soft_delete: true, schema: SCHEMA },
  },
};

const file = (text: string) => ({ data: { name: `${text}.txt`, content: text } });

/** POSTs a document with a file; its id and ETag. */
async function create(api: Client, path: string, text: string) {
  const res = await sendForm(api, {
    method: "POST",
    path,
    form: multipart({ name: text }, file(text)),
  });
  assert.equal(res.status, 201, res.text);
  return { id: res.body._id as string, etag: res.body._etag as string };
}

/** The file id a stored document (or version) holds. */
async function storedFile(running: Running, source: string, filter: Record<string, unknown>) {
  const [doc] = await running.service.store.collection(source).find(filter);
  return (doc.data as ObjectId).toHexString();
}

async function edit(
  api: Client,
  request: { method: string; path: string; etag: string; form: FormData },
) {
  const res = await sendForm(api, { ...request, headers: { "if-match": request.etag } });
  assert.equal(res.status, 200, res.text);
  return res.body._etag as string;
}

scenario(
  "POST, PUT and PATCH keep exactly the referenced files",
  SETTINGS,
  async (api, running) => {
    const { id, etag } = await create(api, "plain", "one");
    assert.equal(await fileCount(running), 1);
    const first = await storedFile(running, "plain", {});
    // PUT replacing the file: the old one goes.
    let tag = await edit(api, {
      method: "PUT",
      path: `plain/${id}`,
      etag,
      form: multipart({ name: "two" }, file("two")),
    });
    const second = await storedFile(running, "plain", {});
    assert.notEqual(second, first);
    assert.equal(await fileCount(running), 1);
    // PATCH replacing the file.
    tag = await edit(api, {
      method: "PATCH",
      path: `plain/${id}`,
      etag: tag,
      form: multipart({}, file("three")),
    });
    const third = await storedFile(running, "plain", {});
    assert.notEqual(third, second);
    assert.equal(await fileCount(running), 1);
    // PATCH not touching it keeps it.
    tag = await edit(api, {
      method: "PATCH",
      path: `plain/${id}`,
      etag: tag,
      form: multipart({ name: "x" }),
    });
    assert.equal(await storedFile(running, "plain", {}), third);
    assert.equal(await fileCount(running), 1);
    // PUT without the file drops it.
    await edit(api, {
      method: "PUT",
      path: `plain/${id}`,
      etag: tag,
      form: multipart({ name: "y" }),
    });
    assert.equal(await fileCount(running), 0);
  },
);

scenario("item and resource DELETE remove their files; soft delete keeps them", SETTINGS, async (
  api,
  running,
) => {
  const a = await create(api, "plain", "a");
  await create(api, "plain", "b");
  await create(api, "plain", "c");
  assert.equal(await fileCount(running), 3);
  assert.equal((await api.delete(`plain/${a.id}`, { "if-match": a.etag })).status, 204);
  assert.equal(await fileCount(running), 2);
  assert.equal((await api.delete("plain")).status, 204);
  assert.equal(await fileCount(running), 0);

  const s = await create(api, "soft", "s");
  await create(api, "soft", "t");
  assert.equal((await api.delete(`soft/${s.id}`, { "if-match": s.etag })).status, 204);
  assert.equal(await fileCount(running), 2, "a soft delete keeps the file");
  assert.equal((await api.delete("soft")).status, 204);
  assert.equal(await fileCount(running), 2, "a soft resource delete keeps the files");
});

scenario("versions share stored files; a file goes when nothing references it", SETTINGS, async (
  api,
  running,
) => {
  const { id, etag } = await create(api, "versioned", "v1");
  assert.equal(await fileCount(running), 1);
  // A PATCH that does not touch the file: version 2 references the same stored file.
  let tag = await edit(api, {
    method: "PATCH",
    path: `versioned/${id}`,
    etag,
    form: multipart({ name: "renamed" }),
  });
  assert.equal(await fileCount(running), 1, "versions do not copy the file");
  const versions = running.service.store.collection("versioned_versions");
  const held = new Set((await versions.find({})).map((v) => (v.data as ObjectId).toHexString()));
  assert.equal(held.size, 1);
  // Replacing it: version 1 and 2 still reference the old file, so it stays.
  tag = await edit(api, {
    method: "PATCH",
    path: `versioned/${id}`,
    etag: tag,
    form: multipart({}, file("v3")),
  });
  assert.equal(await fileCount(running), 2);
  const v1 = await api.get(`versioned/${id}?version=1`);
  const v3 = await api.get(`versioned/${id}?version=3`);
  assert.equal(atob(v1.body.data), "v1");
  assert.equal(atob(v3.body.data), "v3");
  // PUT replacing again: three files, each referenced by some version.
  await edit(api, {
    method: "PUT",
    path: `versioned/${id}`,
    etag: tag,
    form: multipart({}, file("v4")),
  });
  assert.equal(await fileCount(running), 3);
  // The item DELETE removes the document, its versions and every file they referenced.
  const current = await api.get(`versioned/${id}`);
  const res = await api.delete(`versioned/${id}`, { "if-match": current.body._etag });
  assert.equal(res.status, 204);
  assert.equal(await fileCount(running), 0);
});

scenario("a refused or failed write leaves no new file", SETTINGS, async (api, running) => {
  const { id, etag } = await create(api, "plain", "kept");
  const refusals: Array<[string, string, FormData, Record<string, string>, number]> = [
    // The document fails validation after its file has streamed into the store.
    ["POST", "plain", multipart({ age: "not a number" }, file("x")), {}, 422],
    ["PATCH", `plain/${id}`, multipart({ age: "x" }, file("x")), { "if-match": etag }, 422],
    ["PUT", `plain/${id}`, multipart({ age: "x" }, file("x")), { "if-match": etag }, 422],
    // Conditional failures, unknown items, files for non-media fields.
    ["PATCH", `plain/${id}`, multipart({}, file("x")), { "if-match": '"stale"' }, 412],
    [
      "PATCH",
      "plain/5f0c5e0d9d1b2c3a4b5c6d7e",
      multipart({}, file("x")),
      { "if-match": etag },
      404,
    ],
    ["POST", "plain", multipart({}, { name: { name: "n.txt", content: "n" } }), {}, 422],
  ];
  for (const [method, path, form, headers, status] of refusals) {
    const res = await sendForm(api, { method, path, form, headers });
    assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
    assert.equal(await fileCount(running), 1, `${method} ${path} left a file`);
  }
  // Past MAX_FILE_SIZE: 413, nothing stored, also when an earlier file of the body was.
  const big = { name: "big.bin", content: new Uint8Array(600 * 1024) };
  const small = { name: "s.txt", content: "s" };
  const res = await sendForm(api, {
    method: "POST",
    path: "plain",
    form: multipart({}, { extra: small, data: big }),
  });
  assert.equal(res.status, 413, res.text);
  assert.equal(await fileCount(running), 1);
  // Without AUTO_COLLAPSE_MULTI_KEYS the second file of a key is not kept either.
  const twice = await sendForm(api, {
    method: "POST",
    path: "plain",
    form: multipart({}, { data: [small, small] }),
  });
  assert.equal(twice.status, 201, twice.text);
  assert.equal(await fileCount(running), 2);
});

/** Log records, for waiting on what the service did with a request. */
const records: Array<Record<string, unknown>> = [];

scenario("a client that goes away mid-upload leaves no file", SETTINGS, async (api, running) => {
  records.length = 0;
  const url = new URL(api.base);
  const boundary = "abort-boundary-3c9e";
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="data"; filename="a.bin"\r\n` +
    "Content-Type: application/octet-stream\r\n\r\n";
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const encoder = new TextEncoder();
  await conn.write(encoder.encode(
    `POST /plain HTTP/1.1\r\nHost: ${url.host}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `Content-Length: ${10 * 1024 * 1024}\r\n\r\n${head}`,
  ));
  // More than one stored chunk of the file, then the client is gone.
  const piece = new Uint8Array(64 * 1024).fill(7);
  for (let i = 0; i < 8; i++) await conn.write(piece);
  conn.close();
  const deadline = Date.now() + 10_000;
  while (!records.some((r) => r.message === "client aborted the request body")) {
    assert.ok(Date.now() < deadline, "the service never noticed the aborted body");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(await fileCount(running), 0);
  // The service still answers.
  await create(api, "plain", "after");
  assert.equal(await fileCount(running), 1);
}, { logger: createLogger((record) => records.push(record as Record<string, unknown>)) });
