/**
 * The settings reference is generated (`deno task docs:settings`) and current: every key of
 * the settings tables has a one-line meaning, and docs/settings-reference.md is what the
 * generator writes today.
 */
import assert from "node:assert/strict";
import { meaningProblems, REFERENCE_PATH, renderReference } from "../tools/settings-reference.ts";
import { GLOBAL_KEYS, RESOURCE_KEYS } from "../src/settings/keys.ts";

Deno.test("docs: every setting and resource key has a meaning", () => {
  assert.deepEqual(meaningProblems(), []);
});

Deno.test("docs: the settings reference names every key and is not stale", async () => {
  const text = renderReference();
  for (const key of [...Object.keys(GLOBAL_KEYS), ...Object.keys(RESOURCE_KEYS)]) {
    assert.ok(text.includes(`- \`${key}\` (`), `${key} is not in the reference`);
  }
  const current = await Deno.readTextFile(new URL(`../${REFERENCE_PATH}`, import.meta.url));
  assert.ok(
    current === text,
    `${REFERENCE_PATH} is stale: run \`deno task docs:settings\` and commit the result`,
  );
});
