/**
 * Which answers carry the write buffer's padding (src/http/write_buffer.ts): a connection's
 * second one only, told apart by the peer's port and host, with a port idle for ten seconds
 * taken for a new connection.
 */
import assert from "node:assert/strict";
import { writeBufferPadding } from "../../src/http/write_buffer.ts";

Deno.test("a connection's second answer is padded, and no other", () => {
  let now = 1_000;
  const padding = writeBufferPadding(600, { now: () => now });
  assert.equal(padding.value, ".".repeat(600));
  const answers = [1, 2, 3, 4].map(() => padding.shouldPad("10.0.0.1", 40001));
  assert.deepEqual(answers, [false, true, false, false]);
  // Another connection is counted on its own, whatever the first one does meanwhile.
  assert.equal(padding.shouldPad("10.0.0.1", 40002), false);
  now += 50;
  assert.equal(padding.shouldPad("10.0.0.1", 40001), false);
  assert.equal(padding.shouldPad("10.0.0.1", 40002), true);
  // An unknown peer (no port) is never padded.
  assert.equal(padding.shouldPad(undefined, undefined), false);
  assert.equal(padding.shouldPad(undefined, undefined), false);
});

Deno.test("the same port from another host, or after ten idle seconds, is a new connection", () => {
  let now = 0;
  const padding = writeBufferPadding(600, { now: () => now });
  assert.equal(padding.shouldPad("10.0.0.1", 40001), false);
  assert.equal(padding.shouldPad("10.0.0.1", 40001), true);
  assert.equal(padding.shouldPad("10.0.0.2", 40001), false);
  assert.equal(padding.shouldPad("10.0.0.2", 40001), true);
  now += 10_000;
  // Ten seconds since its last request: the same connection still.
  assert.equal(padding.shouldPad("10.0.0.2", 40001), false);
  now += 10_001;
  assert.equal(padding.shouldPad("10.0.0.2", 40001), false);
  assert.equal(padding.shouldPad("10.0.0.2", 40001), true);
});

Deno.test("past 4,096 connections the idle ones are forgotten, and counting goes on", () => {
  let now = 0;
  const padding = writeBufferPadding(600, { now: () => now });
  for (let port = 1; port <= 4096; port++) padding.shouldPad("10.0.0.1", port);
  now += 20_000;
  // A fresh connection, then its second request: padded, with the idle ones forgotten.
  assert.equal(padding.shouldPad("10.0.0.1", 5000), false);
  assert.equal(padding.shouldPad("10.0.0.1", 5000), true);
  // 4,096 busy connections and a new one: all are forgotten, and the new one is counted.
  for (let port = 10_001; port <= 14_096; port++) padding.shouldPad("10.0.0.1", port);
  assert.equal(padding.shouldPad("10.0.0.1", 20_000), false);
  assert.equal(padding.shouldPad("10.0.0.1", 20_000), true);
  // A busy connection forgotten so: its next request counts as its first.
  assert.equal(padding.shouldPad("10.0.0.1", 10_001), false);
  assert.equal(padding.shouldPad("10.0.0.1", 10_001), true);
});
