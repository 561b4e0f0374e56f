/**
 * Child process of tests/support/browser.ts: opens one page in Chromium with
 * playwright-core and prints what it saw as one JSON line.
 *
 * Arguments: url, selector to wait for, screenshot path, chromium path, and optionally a
 * JSON `{"login": {"user": ..., "password": ...}}`: the page's own login form is filled in
 * and sent first.
 */
import { chromium } from "./browser_deps.ts";

const [url, selector, screenshot, executablePath, steps] = Deno.args;
const login = steps ? JSON.parse(steps).login as { user: string; password: string } : null;
const TIMEOUT_MS = 30_000;
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const profile = await Deno.makeTempDir({ prefix: "restsvc-chromium-" });
const context = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  args: ARGS,
  timeout: TIMEOUT_MS,
});
try {
  const page = await context.newPage();
  const problems: string[] = [];
  const origin = new URL(url).origin;
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`failed: ${r.url()}`));
  page.on("request", (r) => {
    const target = r.url();
    if (!target.startsWith(origin) && !target.startsWith("data:")) {
      problems.push(`request elsewhere: ${target}`);
    }
  });
  const res = await page.goto(url, { timeout: TIMEOUT_MS });
  if (login) {
    await page.waitForSelector("#docs-login", { timeout: TIMEOUT_MS });
    await page.fill("#docs-login input[name=username]", login.user);
    await page.fill("#docs-login input[name=password]", login.password);
    await page.click("#docs-login button[type=submit]");
  }
  await page.waitForSelector(selector, { timeout: TIMEOUT_MS });
  await page.waitForLoadState("networkidle", { timeout: TIMEOUT_MS });
  const tags = await page.$$eval(
    "[data-tag]",
    (nodes) => nodes.map((n) => n.getAttribute("data-tag") ?? ""),
  );
  const text = await page.textContent("#swagger-ui") ?? "";
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(JSON.stringify({ status: res?.status() ?? null, tags, text, problems }));
} finally {
  await context.close();
  await Deno.remove(profile, { recursive: true }).catch(() => {});
}
