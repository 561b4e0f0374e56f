/**
 * Compression: answers over COMPRESS_MIN_BYTES are compressed with brotli or gzip when the
 * client accepts it (the higher quality value wins; brotli on a tie).
 */
import assert from "node:assert/strict";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { Buffer } from "node:buffer";
import { scenario } from "../support/harness.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  COMPRESS_MIN_BYTES: 512,
  DOMAIN: { notes: { schema: { text: { type: "string" } } } },
};

/** GET with explicit Accept-Encoding; the raw (still compressed) body. */
async function raw(base: string, path: string, encoding: string | null) {
  const headers: Record<string, string> = {};
  if (encoding) headers["accept-encoding"] = encoding;
  // Deno's fetch decompresses transparently; read the bytes through a raw HTTP/1.1 exchange.
  const url = new URL(path, base);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const lines = [
    `GET ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    "Connection: close",
  ];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  await conn.write(new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n"));
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(65536);
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const n = await conn.read(buffer);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
  }
  conn.close();
  const all = Buffer.concat(chunks);
  const split = all.indexOf("\r\n\r\n");
  const head = all.subarray(0, split).toString();
  let body = all.subarray(split + 4);
  if (/transfer-encoding: chunked/i.test(head)) {
    const parts: Buffer[] = [];
    let at = 0;
    while (at < body.length) {
      const eol = body.indexOf("\r\n", at);
      const size = parseInt(body.subarray(at, eol).toString(), 16);
      if (!size) break;
      parts.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  }
  return { head, body };
}

scenario("large answers are gzip'd when accepted; small ones and others are not", SETTINGS, async (
  api,
  running,
) => {
  for (let i = 0; i < 20; i++) await api.create("notes", { text: `note number ${i} `.repeat(5) });
  const zipped = await raw(running.url, "notes", "gzip");
  assert.match(zipped.head, /content-encoding: gzip/i);
  assert.match(zipped.head, /vary: .*accept-encoding/i);
  const json = JSON.parse(gunzipSync(zipped.body).toString());
  assert.equal(json._items.length, 20);
  const plain = await raw(running.url, "notes", null);
  assert.doesNotMatch(plain.head, /content-encoding/i);
  assert.equal(JSON.parse(plain.body.toString())._items.length, 20);
  const small = await raw(running.url, "", "gzip"); // the home answer: a few bytes
  assert.doesNotMatch(small.head, /content-encoding/i);
});

scenario(
  "COMPRESS_MIN_BYTES 0 turns compression off",
  { ...SETTINGS, COMPRESS_MIN_BYTES: 0 },
  async (
    api,
    running,
  ) => {
    for (let i = 0; i < 20; i++) await api.create("notes", { text: `note number ${i} `.repeat(5) });
    const res = await raw(running.url, "notes", "gzip");
    assert.doesNotMatch(res.head, /content-encoding/i);
  },
);

scenario("brotli when the client accepts it and prefers it (or does not mind)", SETTINGS, async (
  api,
  running,
) => {
  for (let i = 0; i < 20; i++) await api.create("notes", { text: `note number ${i} `.repeat(5) });
  const decode: Record<string, (b: Buffer) => Buffer> = {
    br: brotliDecompressSync,
    gzip: gunzipSync,
    deflate: inflateSync,
  };
  const cases: [string, string | null][] = [
    ["gzip, deflate, br", "br"], // equal quality: brotli
    ["br", "br"],
    ["br;q=1.0, gzip;q=0.8", "br"],
    ["gzip;q=1, br;q=0.5", "gzip"],
    ["br;q=0, gzip;q=0.1", "gzip"],
    ["deflate, br;q=0.2", "deflate"],
    ["*", "br"],
    ["gzip;q=0, *;q=0.5", "br"],
    ["identity", null],
    ["br;q=0", null],
    ["br;q=banana", null], // a malformed quality counts as "not acceptable"
  ];
  for (const [accept, expected] of cases) {
    const res = await raw(running.url, "notes", accept);
    const encoding = /content-encoding: (\S+)/i.exec(res.head)?.[1] ?? null;
    assert.equal(encoding, expected, accept);
    assert.match(res.head, /vary: .*accept-encoding/i);
    const body = encoding ? decode[encoding](res.body) : res.body;
    assert.equal(JSON.parse(body.toString())._items.length, 20, accept);
  }
  // A large item: its ETag becomes weak when compressed, and still works for If-None-Match.
  const big = await api.create("notes", { text: "x".repeat(2000) });
  const item = await raw(running.url, `notes/${big._id}`, "br");
  assert.match(item.head, /content-encoding: br/i);
  const etag = /etag: (\S+)/i.exec(item.head)![1];
  assert.match(etag, /^W\//);
  assert.equal(JSON.parse(brotliDecompressSync(item.body).toString()).text.length, 2000);
  const again = await api.get(`notes/${big._id}`, { "if-none-match": etag });
  assert.equal(again.status, 304);
});

for (const threshold of [512, 0]) {
  scenario(
    `uncompressed answers carry the exact length of their UTF-8 bytes (COMPRESS_MIN_BYTES ${threshold})`,
    { ...SETTINGS, COMPRESS_MIN_BYTES: threshold },
    async (api, running) => {
      const note = await api.create("notes", { text: "Zoë 😀 ünïcode ".repeat(3) });
      // No Accept-Encoding, an encoding refused, and (compression off) one accepted.
      for (const encoding of [null, "identity", "gzip"]) {
        for (const path of ["notes", `notes/${note._id}`]) {
          if (threshold > 0 && encoding === "gzip") continue; // compressed: see above
          const { head, body } = await raw(running.url, path, encoding);
          assert.doesNotMatch(head, /transfer-encoding|content-encoding/i, `${path} ${encoding}`);
          const length = /content-length: (\d+)/i.exec(head)?.[1];
          assert.equal(Number(length), body.length, `${path} ${encoding}`);
          assert.match(body.toString("utf8"), /Zoë 😀 ünïcode/);
          // Caches learn the answer depends on Accept-Encoding exactly when it may be
          // compressed: compression on and the answer long enough.
          const vary = /^vary: (.*)$/im.exec(head)?.[1] ?? "";
          assert.equal(
            /accept-encoding/i.test(vary),
            threshold > 0 && body.length >= threshold,
            `${path} ${encoding}`,
          );
        }
      }
      // A 304 carries the Vary its 200 may carry (RFC 9110 15.4.5), once.
      const etag = (await api.get(`notes/${note._id}`)).headers.get("etag")!;
      const unchanged = await api.get(`notes/${note._id}`, { "if-none-match": etag });
      assert.equal(unchanged.status, 304);
      assert.equal(unchanged.headers.get("vary"), threshold > 0 ? "Accept-Encoding" : null);
    },
  );
}
