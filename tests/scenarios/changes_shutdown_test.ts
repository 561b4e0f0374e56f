/**
 * The change feed behind the command line's server (the TCP front with connection limits):
 * events stream through it, and SIGTERM ends open feeds at once instead of waiting out the
 * drain deadline (10 s). Embedded store: the shutdown path does not depend on the store.
 */
import assert from "node:assert/strict";
import { freePort } from "../support/net.ts";
import { openFeed } from "../support/sse.ts";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
const SETTINGS = new URL("../../config/settings.json", import.meta.url).pathname;

/** Polls `url` until it answers 200; throws past `waitMs`. */
async function waitUntilUp(url: string, waitMs: number) {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer within ${waitMs} ms`);
}

Deno.test("cli: a feed streams through the server, and SIGTERM ends it at once", async () => {
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "restsvc-feed-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--settings", SETTINGS],
    env: {
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
      PORT: String(port),
      STORE: "embedded",
      DATA_DIR: dir,
    },
    stdout: "null",
    stderr: "null",
    signal: AbortSignal.timeout(30_000),
  }).spawn();
  try {
    const base = `http://127.0.0.1:${port}/`;
    await waitUntilUp(base + "health", 15_000);
    const feed = await openFeed(base + "people/_changes?documents=1");
    assert.equal(feed.status, 200);
    assert.equal((await feed.event()).event, "ready");
    const res = await fetch(base + "people", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ firstname: "Ada", lastname: "Lovelace" }),
    });
    assert.equal(res.status, 201, await res.text());
    const event = await feed.event();
    assert.equal(event.event, "insert");
    assert.equal(event.data.document.lastname, "Lovelace");
    const stopping = Date.now();
    child.kill("SIGTERM");
    await feed.end(5000);
    const status = await child.status;
    const took = Date.now() - stopping;
    assert.equal(status.code, 0);
    assert.ok(took < 5000, `shutdown took ${took} ms with a feed open`);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});
