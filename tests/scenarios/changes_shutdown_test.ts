/**
 * The change feed behind the command line's server (its own HTTP server, with connection limits):
 * events stream through it, and SIGTERM ends open feeds at once instead of waiting out the
 * drain deadline (10 s). Embedded store: the shutdown path does not depend on the store.
 */
import assert from "node:assert/strict";
import { startMain } from "../support/main_process.ts";
import { openFeed } from "../support/sse.ts";

const SETTINGS = new URL("../../config/settings.json", import.meta.url).pathname;

Deno.test("cli: a feed streams through the server, and SIGTERM ends it at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-feed-" });
  const main = await startMain(SETTINGS, {
    env: { STORE: "embedded", DATA_DIR: dir },
    lifetimeMs: 30_000,
  });
  const { child } = main;
  try {
    const base = main.base;
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
    await main.kill();
    await Deno.remove(dir, { recursive: true });
  }
});
