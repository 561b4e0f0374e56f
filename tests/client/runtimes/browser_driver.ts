/**
 * Child process of tests/client/client_runtimes_test.ts: opens a page at the service's
 * origin in Chromium (playwright-core; the page, the bundled client and smoke.mjs are served
 * by a route, everything else by the service) and prints what smoke() answered as JSON.
 *
 * Arguments: service url, directory of client.mjs and smoke.mjs, tag, chromium path.
 */
import { chromium } from "../../support/browser_deps.ts";

const [url, dir, tag, executablePath] = Deno.args;
const TIMEOUT_MS = 30_000;
const profile = await Deno.makeTempDir({ prefix: "restsvc-chromium-" });
const context = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
  timeout: TIMEOUT_MS,
});
try {
  const page = await context.newPage();
  const page_ = `${url}__client_test/`;
  await page.route(`${page_}**`, async (route) => {
    const name = new URL(route.request().url()).pathname.split("/").pop() || "index.html";
    if (name === "index.html") {
      return route.fulfill({
        contentType: "text/html",
        body: `<!doctype html><script type="module">
          import { smoke } from "./smoke.mjs";
          smoke(${JSON.stringify(url)}, ${JSON.stringify(tag)}).then(
            (r) => { window.__result = r; },
            (e) => { window.__result = { error: String(e && e.stack || e) }; });
        </script>`,
      });
    }
    return route.fulfill({
      contentType: "text/javascript",
      body: await Deno.readTextFile(`${dir}/${name}`),
    });
  });
  await page.goto(`${page_}index.html`, { timeout: TIMEOUT_MS });
  await page.waitForFunction(() => "__result" in window, undefined, { timeout: TIMEOUT_MS });
  // deno-lint-ignore no-explicit-any
  console.log(JSON.stringify(await page.evaluate(() => (window as any).__result)));
} finally {
  await context.close();
  await Deno.remove(profile, { recursive: true }).catch(() => {});
}
