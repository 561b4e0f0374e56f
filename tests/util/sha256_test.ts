/**
 * The plain-JavaScript SHA-256 and HMAC-SHA-256 give exactly what the runtime's `createHash`
 * and `createHmac` give: around every padding boundary (55, 56, 63, 64 bytes and the next
 * block's), for multi-byte text, for keys shorter than, equal to and longer than a block,
 * for cut digests, and one after another (the buffers are reused).
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash, createHmac } from "node:crypto";
import { hmacSha256Hex, sha256 } from "../../src/util/sha256.ts";

const LENGTHS = [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 1000, 70_000];

Deno.test("sha256 equals createHash at every padding boundary", () => {
  for (const n of LENGTHS) {
    const bytes = crypto.getRandomValues(new Uint8Array(Math.min(n, 65536)));
    const expected = createHash("sha256").update(bytes).digest("hex");
    assert.equal(Buffer.from(sha256(bytes)).toString("hex"), expected, `${bytes.length} bytes`);
  }
});

Deno.test("hmacSha256Hex equals createHmac, whole and cut, text of every length", () => {
  const keys: Array<string | Uint8Array> = [
    "",
    "k",
    "z".repeat(64),
    "é".repeat(40),
    crypto.getRandomValues(new Uint8Array(20)),
    crypto.getRandomValues(new Uint8Array(65)),
  ];
  // Each length minus the 64-byte inner pad lands the message on a padding boundary.
  const texts = LENGTHS.map((n) => "x".repeat(n)).concat([
    "Zoë ✓ 😀".repeat(30),
    '{"name":"Customer 1","_id":{"$oid":"0123456789abcdef01234567"}}',
  ]);
  for (const key of keys) {
    for (const text of texts) {
      const expected = createHmac("sha256", key).update(text).digest("hex");
      assert.equal(hmacSha256Hex(key, text), expected, `key ${key.length}, text ${text.length}`);
      assert.equal(hmacSha256Hex(key, text, 20), expected.slice(0, 40));
    }
  }
});
