/** Compression: answers over COMPRESS_MIN_BYTES are gzip'd when the client accepts it. */
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
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
