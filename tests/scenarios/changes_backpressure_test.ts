/**
 * Change feed backpressure: a client that stops reading is dropped once its queue is full
 * (the connection is closed), while a client that reads keeps receiving every event.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { openFeed, stalledFeed } from "../support/sse.ts";
import { createLogger } from "../../src/log.ts";

const records: Record<string, unknown>[] = [];

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  CHANGES: true,
  CHANGES_QUEUE_LIMIT: 8,
  DOMAIN: { blobs: { schema: { n: { type: "integer" }, blob: { type: "string" } } } },
};

/** Documents big enough to fill the socket buffers between the server and a stalled client. */
const BLOB = "x".repeat(256 * 1024);
const BATCHES = 10;
const PER_BATCH = 6;

scenario(
  "a slow client is dropped while a fast one keeps receiving",
  SETTINGS,
  async (api, running) => {
    const url = running.url + "blobs/_changes?documents=1";
    const slow = await stalledFeed(url);
    const fast = await openFeed(url);
    assert.equal((await fast.event()).event, "ready");
    const total = BATCHES * PER_BATCH;
    const received = fast.events(total, 60_000);
    for (let batch = 0; batch < BATCHES; batch++) {
      const docs = Array.from({ length: PER_BATCH }, (_, i) => ({
        n: batch * PER_BATCH + i,
        blob: BLOB,
      }));
      const res = await api.post("blobs", docs);
      assert.equal(res.status, 201, res.text);
    }
    const events = await received;
    assert.deepEqual(
      events.map((e) => e.data.document.n),
      Array.from({ length: total }, (_, i) => i),
    );
    const drained = await slow.drain(10_000);
    assert.ok(drained.closed, "the server closed the slow client's connection");
    assert.ok(
      (drained.events.insert ?? 0) < total,
      `the slow client got ${drained.events.insert} of ${total} events before it was dropped`,
    );
    assert.ok(records.some((r) => String(r.message).includes("fell behind")));
    await fast.close();
  },
  { logger: createLogger((record) => records.push(record), "info") },
);
