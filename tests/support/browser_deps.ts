/**
 * The browser driver (test-only, see test_deps.ts): loading it reads system paths that only
 * `--allow-all` opens, so only browser_driver.ts, a child process, imports this module.
 */
export { chromium } from "npm:playwright-core@1.65.1";
