/**
 * The ETag's keyed hash: HMAC-SHA-256 written with two plain hashes must give exactly what
 * `createHmac` gives, for short keys, keys longer than a hash block, raw byte keys and
 * non-ASCII text. A write's ETag is 160 random bits as 40 hex digits.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { freshToken, hmacSha256Hex } from "../../src/services/etag.ts";

Deno.test("hmacSha256Hex equals createHmac for string and byte keys of every length", () => {
  const texts = ["", "{}", '{"name":"Zoë","n":{"$numberInt":"1"}}', "x".repeat(10_000)];
  const keys: Array<string | Uint8Array> = [
    "",
    "k",
    "a shared secret key",
    "é".repeat(40), // 80 bytes: longer than a block, hashed first
    "z".repeat(64), // exactly a block
    crypto.getRandomValues(new Uint8Array(20)),
    crypto.getRandomValues(new Uint8Array(100)),
  ];
  for (const key of keys) {
    for (const text of texts) {
      assert.equal(
        hmacSha256Hex(key, text),
        createHmac("sha256", key).update(text).digest("hex"),
        `key of ${key.length} (${typeof key}), text of ${text.length}`,
      );
    }
  }
});

Deno.test("freshToken gives 40 lowercase hex digits, new ones every time, every digit used", () => {
  const tokens = new Set<string>();
  const digits = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const token = freshToken();
    assert.match(token, /^[0-9a-f]{40}$/);
    tokens.add(token);
    for (const d of token) digits.add(d);
  }
  assert.equal(tokens.size, 1000);
  assert.equal(digits.size, 16);
});
