/** Liveness and readiness probes: exempt from authentication and rate limits. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { REDIS_SKIP, startRedis } from "../support/redis.ts";
import { skipUnless } from "../support/skip.ts";

const SETTINGS = {
  READY_TIMEOUT_MS: 100,
  AUTH_SCHEMES: ["token"],
  AUTH_USERS: [{ username: "ann", token: "ann-token-0123456789" }],
  RATE_LIMIT_GET: [1, 60],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
};

scenario("health and ready answer without credentials or rate limits", SETTINGS, async (
  api,
  running,
) => {
  assert.equal((await api.get("people")).status, 401, "the API itself needs credentials");
  for (let i = 0; i < 3; i++) {
    const health = await api.get("health");
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: "ok" });
    const ready = await api.get("ready");
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: "ok", checks: { store: "ok" } });
    assert.equal(ready.headers.get("x-ratelimit-limit"), null);
  }
  // A store that does not answer makes the service not ready (and says no more than that).
  running.service.store.ping = () => Promise.reject(new Error("connection refused at 10.0.0.1"));
  const down = await api.get("ready");
  assert.equal(down.status, 503);
  assert.deepEqual(down.body, { status: "unavailable", checks: { store: "unavailable" } });
  running.service.store.ping = () => new Promise(() => {});
  const started = Date.now();
  const slow = await api.get("ready");
  assert.equal(slow.status, 503);
  assert.match(slow.body.checks.store, /no answer within 100 ms/);
  assert.ok(Date.now() - started < 2000);
});

scenario("probe paths are settings", {
  HEALTH_PATH: "/livez",
  READY_PATH: "/readyz",
  READY_TIMEOUT_MS: 100,
  DOMAIN: { people: {} },
}, async (api) => {
  assert.equal((await api.get("livez")).status, 200);
  assert.equal((await api.get("readyz")).status, 200);
  assert.equal((await api.get("health")).status, 404);
  // HEAD answers as GET, without a body; other methods are not probes.
  const head = await api.head("livez");
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-type"), "application/json");
  assert.equal(head.text, "");
  assert.equal((await api.request("POST", "livez", {})).status, 404);
  // The path as Hono reads it: percent-decoded.
  assert.equal((await api.get("%6civez")).status, 200);
});

Deno.test({
  ...skipUnless("ready reports Redis when rate limiting uses it", REDIS_SKIP),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const redis = await startRedis();
    const { startService } = await import("../support/harness.ts");
    const running = await startService({
      RATE_LIMIT_GET: [100, 60],
      REDIS_URL: redis.url,
      READY_TIMEOUT_MS: 300,
      DOMAIN: { people: {} },
    }, "embedded");
    try {
      const ready = await running.api.get("ready");
      assert.equal(ready.status, 200, ready.text);
      assert.deepEqual(ready.body.checks, { store: "ok", redis: "ok" });
      await redis.stop();
      const down = await running.api.get("ready");
      assert.equal(down.status, 503);
      assert.notEqual(down.body.checks.redis, "ok");
    } finally {
      await running.stop();
      await redis.stop().catch(() => {});
    }
  },
});
