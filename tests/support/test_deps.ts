/**
 * The packages only the tests use: the OpenAPI description validator, the browser driver
 * and the MongoDB emulator. They are imported here, by versioned specifier, and not through
 * deno.json's import map: Deno installs every package of the import map on the first
 * `deno task start`, and the service needs none of these. `deno task test` installs them
 * first (`deno install --entrypoint tests/support/test_deps.ts tests/support/browser_deps.ts`).
 * The browser driver is in browser_deps.ts: loading it reads system paths that only
 * `--allow-all` opens, so only the browser's child process (browser_driver.ts) loads it.
 */
export { Validator } from "npm:@seriousme/openapi-schema-validator@2.11.0";
export { parse as parseYaml } from "npm:yaml@2.9.1";
// deno-lint-ignore no-import-prefix -- test-only: kept out of the service's import map
import jongodbPackage from "npm:@jongodb/memory-server-bin-linux-x64-gnu@0.1.6/package.json" with {
  type: "json",
};

/** The emulator's launcher binary, inside its installed package. */
export const JONGODB_BINARY = new URL(
  jongodbPackage.jongodb.binary,
  import.meta.resolve("npm:@jongodb/memory-server-bin-linux-x64-gnu@0.1.6/package.json"),
);

/** The test-only packages, by name (none of them may be in deno.json's import map). */
export const TEST_ONLY_PACKAGES = [
  "@seriousme/openapi-schema-validator",
  "playwright-core",
  "@jongodb/memory-server-bin-linux-x64-gnu",
  "yaml",
];
