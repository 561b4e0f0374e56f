/**
 * Rate limiting: every scenario runs on both data stores and both limiters (Redis, started
 * by the test harness, and the in-process one); plus two instances sharing one Redis and
 * one database, and Redis killed while serving.
 */
import assert from "node:assert/strict";
import {
  type Running,
  SANITIZED,
  startService,
  STORES,
  storeSettings,
} from "../support/harness.ts";
import type { Answer, Client } from "../support/client.ts";
import { REDIS_SKIP, redisServer, type RedisTestServer, startRedis } from "../support/redis.ts";
import { createService, type Service, SettingsError } from "../../src/mod.ts";
import { createLogger, type Logger } from "../../src/log.ts";
import { skipUnless } from "../support/skip.ts";

// Without redis-server the Redis runs are skipped, the reason in their names (CI installs it).
const redis = REDIS_SKIP ? null! as RedisTestServer : await redisServer();
const LIMITERS = ["redis", "memory"] as const;
type LimiterKind = typeof LIMITERS[number];

const DOMAIN = {
  people: {
    resource_methods: ["GET", "POST"],
    item_methods: ["GET", "PATCH", "PUT", "DELETE"],
    schema: { name: { type: "string" } },
  },
};

let counter = 0;
/** A Redis key prefix no other run uses (every run starts with fresh counters). */
const freshPrefix = () => `rl-test:${Date.now().toString(36)}:${counter++}:`;

function limiterSettings(kind: LimiterKind): Record<string, unknown> {
  return {
    RATE_LIMIT_KEY_PREFIX: freshPrefix(),
    ...(kind === "redis" ? { REDIS_URL: redis.url } : {}),
  };
}

/** Registers `body` once per data store and limiter, each on a fresh service. */
function limitScenario(
  name: string,
  settings: Record<string, unknown>,
  body: (api: Client, running: Running) => Promise<void>,
) {
  for (const store of STORES) {
    for (const limiter of LIMITERS) {
      Deno.test({
        ...skipUnless(`[${store}/${limiter}] ${name}`, limiter === "redis" ? REDIS_SKIP : null),
        // The shared redis-server process outlives the first test that starts it.
        sanitizeOps: limiter === "memory" && SANITIZED[store],
        sanitizeResources: limiter === "memory" && SANITIZED[store],
        async fn() {
          const running = await startService(
            { DOMAIN, ...settings, ...limiterSettings(limiter) },
            store,
          );
          try {
            await body(running.api, running);
          } finally {
            await running.stop();
          }
        },
      });
    }
  }
}

function assertLimitHeaders(res: Answer, limit: number, left: number) {
  assert.equal(res.headers.get("x-ratelimit-limit"), String(limit), res.text);
  assert.equal(res.headers.get("x-ratelimit-remaining"), String(left), res.text);
  const reset = Number(res.headers.get("x-ratelimit-reset"));
  const now = Date.now() / 1000;
  assert.ok(Number.isInteger(reset) && reset >= now - 1 && reset <= now + 3600, `reset ${reset}`);
}

function assertNoLimitHeaders(res: Answer) {
  for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
    assert.equal(res.headers.get(name), null, `${name} must be absent`);
  }
}

function assertRefused(res: Answer, limit: number) {
  assert.equal(res.status, 429, res.text);
  assert.deepEqual(res.body, {
    _status: "ERR",
    _error: { code: 429, message: "Request limit exceeded" },
  });
  assertLimitHeaders(res, limit, 0);
  const retry = Number(res.headers.get("retry-after"));
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${retry}`);
}

limitScenario("rate limit: off by default, no headers", {}, async (api) => {
  for (let i = 0; i < 5; i++) {
    const res = await api.get("people");
    assert.equal(res.status, 200);
    assertNoLimitHeaders(res);
  }
});

limitScenario("rate limit: per method, with headers and a 429 past the limit", {
  RATE_LIMIT_GET: [3, 60],
  RATE_LIMIT_POST: [2, 60],
}, async (api) => {
  for (let left = 2; left >= 0; left--) {
    const res = await api.get("people");
    assert.equal(res.status, 200);
    assertLimitHeaders(res, 3, left);
  }
  assertRefused(await api.get("people"), 3);
  // HEAD counts as GET.
  const head = await api.head("people");
  assert.equal(head.status, 429);
  assertLimitHeaders(head, 3, 0);
  // POST has its own counter.
  const first = await api.post("people", { name: "a" });
  assert.equal(first.status, 201);
  assertLimitHeaders(first, 2, 1);
  assertLimitHeaders(await api.post("people", { name: "b" }), 2, 0);
  assertRefused(await api.post("people", { name: "c" }), 2);
  // PATCH has no limit: no headers; OPTIONS (preflights) are never limited.
  const patch = await api.patch(`people/${first.body._id}`, { name: "z" }, {
    "if-match": first.body._etag,
  });
  assert.equal(patch.status, 200, patch.text);
  assertNoLimitHeaders(patch);
  const options = await api.request("OPTIONS", "people");
  assert.equal(options.status, 200);
  assertNoLimitHeaders(options);
  // The refused POST created nothing (listed under another user: GETs are used up here).
  const list = await api.get("people", { authorization: "Bearer other" });
  assert.deepEqual(list.body._items.map((p: { name: string }) => p.name).sort(), ["b", "z"]);
});

limitScenario("rate limit: errors carry the headers and count", {
  RATE_LIMIT_GET: [3, 60],
  RATE_LIMIT_POST: [2, 60],
}, async (api) => {
  const missing = await api.get("nowhere");
  assert.equal(missing.status, 404);
  assertLimitHeaders(missing, 3, 2);
  const bad = await api.get("people?where={bad");
  assert.equal(bad.status, 400);
  assertLimitHeaders(bad, 3, 1);
  const invalid = await api.post("people", { name: 5 });
  assert.equal(invalid.status, 422);
  assertLimitHeaders(invalid, 2, 1);
  // Refused before the method is known (a bad override): counted too, by address.
  const override = await api.request("GET", "people", {
    headers: { "x-http-method-override": "BREW" },
  });
  assert.equal(override.status, 400);
  assertLimitHeaders(override, 3, 0);
  assertRefused(await api.get("nowhere"), 3);
  assertRefused(await api.get("people"), 3);
});

limitScenario("rate limit: per Authorization header, else per client address", {
  RATE_LIMIT_GET: [2, 60],
}, async (api) => {
  const as = (authorization?: string) =>
    api.get("people", authorization ? { authorization } : undefined);
  assertLimitHeaders(await as("Bearer alpha"), 2, 1);
  assertLimitHeaders(await as("Bearer alpha"), 2, 0);
  assertRefused(await as("Bearer alpha"), 2);
  assertLimitHeaders(await as("Bearer beta"), 2, 1);
  assertLimitHeaders(await as(), 2, 1);
  assertLimitHeaders(await as(), 2, 0);
  assertRefused(await as(), 2);
  assertLimitHeaders(await as("Bearer beta"), 2, 0);
});

limitScenario("rate limit: X-Forwarded-For is ignored unless the peer is a trusted proxy", {
  RATE_LIMIT_GET: [1, 60],
}, async (api) => {
  // The service is reached directly: a client cannot pick its own address.
  assert.equal((await api.get("people", { "x-forwarded-for": "203.0.113.1" })).status, 200);
  assertRefused(await api.get("people", { "x-forwarded-for": "203.0.113.2" }), 1);
});

limitScenario("rate limit: TRUSTED_PROXIES lets the proxy name the client", {
  RATE_LIMIT_GET: [1, 60],
  TRUSTED_PROXIES: ["127.0.0.1", "10.0.0.1"],
}, async (api) => {
  const from = (xff: string) => api.get("people", { "x-forwarded-for": xff });
  assert.equal((await from("203.0.113.1")).status, 200);
  assert.equal((await from("203.0.113.2")).status, 200);
  // A spoofed left-most entry does not help: the nearest untrusted hop is the client.
  assertRefused(await from("198.51.100.7, 203.0.113.1"), 1);
  assertRefused(await from("203.0.113.2, 10.0.0.1"), 1);
  // Something that is not an address: the proxy's own address is used.
  assert.equal((await from("not-an-address")).status, 200);
  assertRefused(await from("<script>"), 1);
});

limitScenario("rate limit: TRUSTED_PROXIES takes CIDR ranges", {
  RATE_LIMIT_GET: [1, 60],
  TRUSTED_PROXIES: ["127.0.0.0/8", "10.0.0.0/8", "fd00::/8"],
}, async (api) => {
  const from = (xff: string) => api.get("people", { "x-forwarded-for": xff });
  assert.equal((await from("203.0.113.1")).status, 200);
  // 10.1.2.3 and fd12::1 are proxies in the trusted ranges: the client is the hop before them.
  assertRefused(await from("203.0.113.1, 10.1.2.3"), 1);
  assertRefused(await from("203.0.113.1, fd12::1"), 1);
  // 11.0.0.1 is outside every range: it is the client.
  assert.equal((await from("203.0.113.1, 11.0.0.1")).status, 200);
});

limitScenario("rate limit: the count restarts after the window", {
  RATE_LIMIT_GET: [2, 1],
}, async (api) => {
  assertLimitHeaders(await api.get("people"), 2, 1);
  assertLimitHeaders(await api.get("people"), 2, 0);
  const refused = await api.get("people");
  assertRefused(refused, 2);
  const reset = Number(refused.headers.get("x-ratelimit-reset")) * 1000;
  assert.ok(reset - Date.now() <= 2000, "a 1 s window resets within 2 s");
  const deadline = Date.now() + 3000;
  let res = refused;
  while (res.status === 429) {
    assert.ok(Date.now() < deadline, "still refused 3 s after a 1 s window began");
    await new Promise((resolve) => setTimeout(resolve, 100));
    res = await api.get("people");
  }
  assert.equal(res.status, 200);
  assertLimitHeaders(res, 2, 1);
});

Deno.test("rate limit: malformed settings refuse to start, naming the key", async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ RATE_LIMIT_GET: [0, 60] }, "RATE_LIMIT_GET"],
    [{ RATE_LIMIT_POST: "300/min" }, "RATE_LIMIT_POST"],
    [{ RATE_LIMIT_DELETE: [1, 2, 3] }, "RATE_LIMIT_DELETE"],
    [{ RATE_LIMIT_PATCH: [1.5, 2] }, "RATE_LIMIT_PATCH"],
    [{ RATE_LIMIT_ON_REDIS_ERROR: "maybe" }, "RATE_LIMIT_ON_REDIS_ERROR"],
    [{ RATE_LIMIT_REDIS_TIMEOUT: 0 }, "RATE_LIMIT_REDIS_TIMEOUT"],
    [{ TRUSTED_PROXIES: "10.0.0.1" }, "TRUSTED_PROXIES"],
    [{ TRUSTED_PROXIES: ["10.0.0.0/33"] }, "TRUSTED_PROXIES"],
    [{ TRUSTED_PROXIES: ["proxy.internal"] }, "TRUSTED_PROXIES"],
    [{ RATE_LIMIT_GET: [1, 1], REDIS_URL: "localhost:6379" }, "REDIS_URL"],
  ];
  for (const [settings, key] of cases) {
    await assert.rejects(
      createService({ DOMAIN: {}, STORE: "embedded", ...settings }, { env: false }),
      (error: unknown) =>
        error instanceof SettingsError && error.problems.some((p) => p.startsWith(key)),
      key,
    );
  }
});

Deno.test({
  name: "rate limit: without REDIS_URL a start-up warning says the limit is per instance",
  async fn() {
    const records: Record<string, unknown>[] = [];
    const dir = await Deno.makeTempDir({ prefix: "restsvc-test-" });
    const service = await createService(
      { DOMAIN, STORE: "embedded", DATA_DIR: dir, RATE_LIMIT_GET: [1, 60] },
      { env: false, logger: createLogger((r) => records.push(r)) },
    );
    await service.close();
    await Deno.remove(dir, { recursive: true });
    assert.ok(
      records.some((r) => r.level === "warn" && /per instance|on its own/.test(String(r.message))),
      JSON.stringify(records),
    );
  },
});

/** Starts a service on a free port; `stop` shuts both down. */
async function serve(settings: Record<string, unknown>) {
  const service: Service = await createService(settings, {
    env: false,
    logger: createLogger(() => {}),
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, service.fetch);
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    async stop() {
      await server.shutdown();
      await service.close();
    },
  };
}

/** Two instances on one database; GETs split across them, concurrently; statuses back. */
async function twoInstances(limiter: Record<string, unknown>, requests: number) {
  const kind = STORES.includes("mongo") ? "mongo" : "embedded";
  const store = await storeSettings(kind);
  const settings = { DOMAIN, ...store, RATE_LIMIT_GET: [5, 60], ...limiter };
  const a = await serve(settings);
  const b = kind === "mongo" ? await serve(settings) : await serve({
    ...settings,
    ...await storeSettings("embedded"),
  });
  try {
    const statuses = await Promise.all(
      Array.from({ length: requests }, async (_, i) => {
        const res = await fetch(new URL("people", i % 2 ? a.url : b.url));
        await res.body?.cancel();
        return res.status;
      }),
    );
    return statuses;
  } finally {
    await a.stop();
    await b.stop();
  }
}

Deno.test({
  ...skipUnless(
    "rate limit: two instances sharing one Redis accept exactly `limit` in total",
    REDIS_SKIP,
  ),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const statuses = await twoInstances(
      { REDIS_URL: redis.url, RATE_LIMIT_KEY_PREFIX: freshPrefix() },
      20,
    );
    assert.equal(statuses.filter((s) => s === 200).length, 5, String(statuses));
    assert.equal(statuses.filter((s) => s === 429).length, 15, String(statuses));
  },
});

Deno.test({
  name: "rate limit: without Redis each instance counts on its own",
  async fn() {
    const statuses = await twoInstances({}, 20);
    assert.equal(statuses.filter((s) => s === 200).length, 10, String(statuses));
  },
});

/** A service on its own Redis, which the test then kills. */
async function withDoomedRedis(
  policy: "allow" | "refuse",
  body: (api: Client, redis: RedisTestServer) => Promise<void>,
  options: { logger?: Logger } = {},
) {
  const doomed = await startRedis();
  const running = await startService(
    {
      DOMAIN,
      RATE_LIMIT_GET: [100, 60],
      REDIS_URL: doomed.url,
      RATE_LIMIT_REDIS_TIMEOUT: 300,
      RATE_LIMIT_ON_REDIS_ERROR: policy,
    },
    "embedded",
    options,
  );
  try {
    await body(running.api, doomed);
  } finally {
    await running.stop();
    await doomed.stop();
  }
}

/** Times a request; asserts it answers well within the Redis timeout's bound. */
async function timed(api: Client, path: string): Promise<Answer> {
  const started = Date.now();
  const res = await api.get(path);
  const took = Date.now() - started;
  assert.ok(took < 3000, `answered after ${took} ms with Redis down (timeout 300 ms)`);
  return res;
}

Deno.test({
  ...skipUnless(
    'rate limit: Redis killed, policy "allow" serves without limit headers, never hangs',
    REDIS_SKIP,
  ),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await withDoomedRedis("allow", async (api, redis) => {
      assertLimitHeaders(await api.get("people"), 100, 99);
      await redis.stop();
      for (let i = 0; i < 3; i++) {
        const res = await timed(api, "people");
        assert.equal(res.status, 200, res.text);
        assertNoLimitHeaders(res);
      }
    });
  },
});

Deno.test({
  ...skipUnless('rate limit: Redis killed, policy "refuse" answers 503, never hangs', REDIS_SKIP),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const records: Record<string, unknown>[] = [];
    await withDoomedRedis("refuse", async (api, redis) => {
      assertLimitHeaders(await api.get("people"), 100, 99);
      await redis.stop();
      for (let i = 0; i < 3; i++) {
        const res = await timed(api, "people");
        assert.equal(res.status, 503, res.text);
        assert.equal(res.body._status, "ERR");
        assert.equal(res.body._error.code, 503);
        assert.equal(res.headers.get("retry-after"), "1");
      }
      // The outage is logged (once in a while), with the request that met it.
      const logged = records.filter((r) => /rate limiting unavailable/.test(String(r.message)));
      assert.equal(logged.length, 1, JSON.stringify(records));
      assert.equal(logged[0].url, `${api.base}people`);
      assert.equal(logged[0].method, "GET");
      assert.match(String(logged[0].requestid), /^[0-9a-f-]{36}$/);
    }, { logger: createLogger((r) => records.push(r), "debug") });
  },
});

Deno.test({
  ...skipUnless(
    "rate limit: a frozen Redis (no answer at all) is bounded by the timeout",
    REDIS_SKIP,
  ),
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    for (const policy of ["allow", "refuse"] as const) {
      await withDoomedRedis(policy, async (api, redis) => {
        assertLimitHeaders(await api.get("people"), 100, 99);
        redis.freeze!();
        const started = Date.now();
        const res = await timed(api, "people");
        assert.ok(Date.now() - started >= 250, "waited for the 300 ms timeout");
        assert.equal(res.status, policy === "allow" ? 200 : 503, res.text);
      });
    }
  },
});
