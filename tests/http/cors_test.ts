/** The CORS middleware on routes other than the resource ones (any future endpoint). */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { cors, corsConfig } from "../../src/http/middleware/cors.ts";
import { HttpError } from "../../src/http/errors.ts";
import { checkSettings } from "../../src/settings/check.ts";

function app() {
  const config = corsConfig(
    checkSettings({ X_DOMAINS: ["https://a.test"], X_MAX_AGE: 5 }).settings,
    { problems: [], warnings: [] },
  );
  const hono = new Hono();
  hono.onError((error) =>
    new Response("{}", {
      status: (error as HttpError).status ?? 500,
      headers: (error as HttpError).extra?.headers,
    })
  );
  hono.use("*", cors(config));
  // An endpoint that knows nothing of OPTIONS: it refuses every other method with `Allow`.
  hono.all("/custom", (c) => {
    if (c.req.method === "GET") return c.json({ ok: true });
    throw new HttpError(405, "no", { headers: { allow: "GET, HEAD, OPTIONS" } });
  });
  return hono;
}

Deno.test("CORS: a preflight on an endpoint without OPTIONS uses its Allow header", async () => {
  const res = await app().request("/custom", {
    method: "OPTIONS",
    headers: { origin: "https://a.test", "access-control-request-method": "GET" },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("access-control-allow-origin"), "https://a.test");
  assert.equal(res.headers.get("access-control-allow-methods"), "GET, HEAD, OPTIONS");
  assert.equal(res.headers.get("access-control-max-age"), "5");
  await res.body?.cancel();
});

Deno.test("CORS: a non-preflight 405 stays a 405, with CORS headers", async () => {
  const res = await app().request("/custom", {
    method: "DELETE",
    headers: { origin: "https://a.test" },
  });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get("access-control-allow-origin"), "https://a.test");
  await res.body?.cancel();
});
