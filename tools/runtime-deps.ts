/**
 * Removes the test-only imports from `deno.json` (in place), so that `deno install` then
 * installs only what the service needs: the container build runs it on its own copy (see
 * the Dockerfile). Deno drops the removed packages from `deno.lock` on that install; every
 * other package keeps its locked version and integrity.
 *
 * ```sh
 * deno run --allow-read=deno.json --allow-write=deno.json tools/runtime-deps.ts
 * ```
 */

/**
 * Imports the service never loads: the MongoDB emulator, the OpenAPI validator, the browser
 * driver and the YAML parser (of the deployment's compose file) of the tests.
 */
export const TEST_ONLY_IMPORTS = [
  "jongodb",
  "@seriousme/openapi-schema-validator",
  "playwright-core",
  "yaml",
];

/** `config` (deno.json's text) without the test-only imports. */
export function runtimeConfig(config: string): string {
  const parsed = JSON.parse(config);
  for (const name of TEST_ONLY_IMPORTS) delete parsed.imports?.[name];
  return JSON.stringify(parsed, null, 2) + "\n";
}

if (import.meta.main) {
  const path = Deno.args[0] ?? "deno.json";
  await Deno.writeTextFile(path, runtimeConfig(await Deno.readTextFile(path)));
}
