/**
 * The docs page in a real browser (Debian chromium + playwright-core): it loads with no
 * console error, under its CSP, touching no other host, and lists every resource. A
 * screenshot is written to tests/artifacts/docs.png (docs-mongo.png for MongoDB).
 */
import assert from "node:assert/strict";
import { startService, STORES } from "../support/harness.ts";
import { CHROMIUM_SKIP, visit } from "../support/browser.ts";
import { SECRET_HASH } from "../support/auth.ts";

const SETTINGS = JSON.parse(
  await Deno.readTextFile(new URL("../../config/settings.json", import.meta.url)),
);
const ARTIFACTS = new URL("../artifacts/", import.meta.url);

for (const kind of STORES) {
  Deno.test({
    name: `[${kind}] the docs page renders every resource with no console error` +
      (CHROMIUM_SKIP ? ` (skipped: ${CHROMIUM_SKIP})` : ""),
    ignore: CHROMIUM_SKIP !== null,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const running = await startService(SETTINGS, kind);
      try {
        await Deno.mkdir(ARTIFACTS, { recursive: true });
        const name = kind === "embedded" ? "docs.png" : `docs-${kind}.png`;
        const seen = await visit(`${running.url}docs`, {
          // Swagger UI renders one section per tag: home and every public resource.
          selector: ".opblock-tag-section",
          screenshot: new URL(name, ARTIFACTS).pathname,
        });
        assert.equal(seen.status, 200);
        assert.deepEqual(seen.problems, []);
        assert.deepEqual(seen.tags, ["home", "people", "works", "people_works"]);
        assert.ok(!seen.text.includes("audit"), "the internal resource is not listed");
        assert.match(seen.text, /\/people\/\{_id\}/);
        assert.match(seen.text, /\/people\/\{owner\}\/works/);
        assert.ok((await Deno.stat(new URL(name, ARTIFACTS))).size > 0);
      } finally {
        await running.stop();
      }
    },
  });
}

for (const kind of STORES) {
  Deno.test({
    name: `[${kind}] with authentication on, the docs page asks for credentials in the page` +
      (CHROMIUM_SKIP ? ` (skipped: ${CHROMIUM_SKIP})` : ""),
    ignore: CHROMIUM_SKIP !== null,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const running = await startService({
        ...SETTINGS,
        AUTH_SCHEMES: ["basic", "token"],
        AUTH_USERS: [{ username: "alice", password: SECRET_HASH, token: "alice-token-0123456789" }],
      }, kind);
      try {
        await Deno.mkdir(ARTIFACTS, { recursive: true });
        const name = kind === "embedded" ? "docs-login.png" : `docs-login-${kind}.png`;
        const seen = await visit(`${running.url}docs`, {
          selector: ".opblock-tag-section",
          screenshot: new URL(name, ARTIFACTS).pathname,
          login: { user: "alice", password: "secret" },
        });
        assert.equal(seen.status, 200);
        // The first fetch of the description is refused (the console reports the 401).
        assert.deepEqual(seen.problems.filter((p) => !/\b401\b/.test(p)), []);
        assert.deepEqual(seen.tags, ["home", "people", "works", "people_works"]);
        assert.ok(seen.text.includes("Authorize"), "Try it out can be authorised");
      } finally {
        await running.stop();
      }
    },
  });
}
