/**
 * The media endpoint: with RETURN_MEDIA_AS_URL, media fields are URLs served at
 * `/<MEDIA_ENDPOINT>/<id>` with conditional requests and byte ranges, only to clients that
 * may read a document referencing the file.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import type { Client } from "../support/client.ts";
import { bearer } from "../support/auth.ts";

const SETTINGS = {
  RETURN_MEDIA_AS_URL: true,
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "DELETE"],
  DOMAIN: {
    files: { soft_delete: true, schema: { name: { type: "string" }, data: { type: "media" } } },
    // A view that only shows public files: files of other documents are not served through it.
    secrets: {
      internal_resource: true,
      schema: { data: { type: "media" } },
    },
  },
};

function form(name: string, content: string | Uint8Array, type = "text/plain"): FormData {
  const f = new FormData();
  f.append("data", new Blob([content as BlobPart], { type }), name);
  return f;
}

async function upload(api: Client, path: string, f: FormData) {
  const res = await api.request("POST", path, { raw: f });
  assert.equal(res.status, 201, res.text);
  const item = await api.get(`${path}/${res.body._id}`);
  return { id: res.body._id, etag: res.body._etag, url: item.body.data as string };
}

scenario("media fields are URLs served with type, length, validators and ranges", SETTINGS, async (
  api,
) => {
  const { url } = await upload(api, "files", form("hello.txt", "hello world"));
  assert.match(url, /^\/media\/[0-9a-f]{24}$/);
  const res = await api.get(url);
  assert.equal(res.status, 200);
  assert.equal(res.text, "hello world");
  assert.equal(res.headers.get("content-type"), "text/plain");
  assert.equal(res.headers.get("content-length"), "11");
  assert.equal(res.headers.get("accept-ranges"), "bytes");
  assert.match(res.headers.get("content-disposition")!, /filename="hello.txt"/);
  const etag = res.headers.get("etag")!;
  assert.ok(etag && res.headers.get("last-modified"));
  const head = await api.head(url);
  assert.equal(head.status, 200);
  assert.equal(head.text, "");
  assert.equal(head.headers.get("content-length"), "11");
  assert.equal((await api.get(url, { "if-none-match": etag })).status, 304);
  const ranges: Array<[string, number, string, string | null]> = [
    ["bytes=0-4", 206, "hello", "bytes 0-4/11"],
    ["bytes=6-", 206, "world", "bytes 6-10/11"],
    ["bytes=-5", 206, "world", "bytes 6-10/11"],
    ["bytes=6-100", 206, "world", "bytes 6-10/11"],
    ["bytes=0-1,4-5", 200, "hello world", null],
    ["items=0-1", 200, "hello world", null],
  ];
  for (const [range, status, body, contentRange] of ranges) {
    const part = await api.get(url, { range });
    assert.equal(part.status, status, range);
    assert.equal(part.text, body, range);
    assert.equal(part.headers.get("content-range"), contentRange, range);
    assert.equal(part.headers.get("content-length"), String(body.length), range);
  }
  const beyond = await api.get(url, { range: "bytes=11-" });
  assert.equal(beyond.status, 416);
  assert.equal(beyond.headers.get("content-range"), "bytes */11");
  assert.equal((await api.request("DELETE", url)).status, 405);
});

scenario("large files stream in chunks, whole and ranged", SETTINGS, async (api) => {
  const bytes = new Uint8Array(1_000_000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
  const { url } = await upload(api, "files", form("big.bin", bytes, "application/octet-stream"));
  const whole = await fetch(new URL(url.slice(1), api.base));
  const got = new Uint8Array(await whole.arrayBuffer());
  assert.equal(got.length, bytes.length);
  assert.ok(got.every((b, i) => b === bytes[i]));
  const part = await fetch(new URL(url.slice(1), api.base), {
    headers: { range: "bytes=300000-700000" },
  });
  const slice = new Uint8Array(await part.arrayBuffer());
  assert.equal(part.status, 206);
  assert.equal(slice.length, 400001);
  assert.ok(slice.every((b, i) => b === bytes[300000 + i]));
});

scenario("only files a readable document references are served", SETTINGS, async (
  api,
  running,
) => {
  assert.equal((await api.get("media/5f0c5e0d9d1b2c3a4b5c6d7e")).status, 404);
  assert.equal((await api.get("media/not-an-id")).status, 404);
  // A file only an internal resource references is not served.
  const stored = await running.service.store.files.put(new TextEncoder().encode("x"), {
    filename: "x.txt",
    contentType: "text/plain",
  });
  await running.service.store.collection("secrets").insertMany([{ data: stored.id }]);
  assert.equal((await api.get(`media/${stored.id.toHexString()}`)).status, 404);
  // A soft-deleted document's file is not served; restored, it is again.
  const { id, url, etag } = await upload(api, "files", form("a.txt", "a"));
  assert.equal((await api.get(url)).status, 200);
  assert.equal((await api.delete(`files/${id}`, { "if-match": etag })).status, 204);
  assert.equal((await api.get(url)).status, 404);
});

scenario("without RETURN_MEDIA_AS_URL there is no media endpoint", {
  ...SETTINGS,
  RETURN_MEDIA_AS_URL: false,
}, async (api, running) => {
  const res = await api.request("POST", "files", { raw: form("a.txt", "abc") });
  const [doc] = await running.service.store.collection("files").find({});
  assert.equal(res.status, 201);
  const id = (doc.data as { toHexString(): string }).toHexString();
  assert.equal((await api.get(`media/${id}`)).status, 404);
});

const OWNED = {
  RETURN_MEDIA_AS_URL: true,
  AUTH_SCHEMES: ["token"],
  AUTH_USERS: ["alice", "bob"].map((name) => ({
    username: name,
    token: `${name}-token-0123456789`,
  })),
  AUTH_FIELD: "owner",
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    docs: { schema: { owner: { type: "string" }, data: { type: "media" } } },
  },
};

scenario("a user-restricted file is served to its owner only", OWNED, async (api) => {
  const alice = bearer("alice-token-0123456789");
  const bob = bearer("bob-token-0123456789");
  const f = form("mine.txt", "alice's");
  const created = await api.request("POST", "docs", { raw: f, headers: alice });
  assert.equal(created.status, 201, created.text);
  const item = await api.get(`docs/${created.body._id}`, alice);
  const url = item.body.data as string;
  assert.equal((await api.get(url, alice)).text, "alice's");
  assert.equal((await api.get(url, bob)).status, 404);
  assert.equal((await api.get(url)).status, 404);
});

const EMBEDDED_MEDIA = {
  RETURN_MEDIA_AS_URL: true,
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    files: { schema: { data: { type: "media" } } },
    posts: {
      schema: {
        file: { type: "objectid", data_relation: { resource: "files", embeddable: true } },
      },
    },
  },
};

scenario("embedded documents show media as their own reads do", EMBEDDED_MEDIA, async (api) => {
  const { id, url } = await upload(api, "files", form("e.txt", "embedded"));
  const post = await api.create("posts", { file: id });
  const res = await api.get(`posts/${post._id}?embedded={"file":1}`);
  assert.equal(res.body.file.data, url);
  assert.equal((await api.get(res.body.file.data)).text, "embedded");
});
