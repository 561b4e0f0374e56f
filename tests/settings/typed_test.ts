/**
 * Settings are typed from the key tables: a misspelt key fails `deno check` (the
 * `@ts-expect-error` lines below would fail it if the key were accepted), and each value has
 * its kind's type.
 */
import assert from "node:assert/strict";
import { checkSettings } from "../../src/settings/check.ts";
import { optionReader } from "../../src/settings/keys.ts";

Deno.test("settings: reads are typed by the key table", () => {
  const { settings, problems } = checkSettings({ PAGINATION_LIMIT: 10 });
  assert.deepEqual(problems, []);
  const limit: number = settings.PAGINATION_LIMIT;
  const methods: string[] = settings.RESOURCE_METHODS;
  const lookup: string = settings.ITEM_LOOKUP_FIELD; // filled from ID_FIELD
  assert.deepEqual([limit, methods, lookup], [10, ["GET"], "_id"]);
  // @ts-expect-error: a misspelt key is no setting
  assert.equal(settings.PAGINATON_LIMIT, undefined);
});

Deno.test("settings: a resource key falls back to the global it overrides", () => {
  const { settings } = checkSettings({ RESOURCE_METHODS: ["GET", "POST"] });
  const get = optionReader(settings, { pagination_limit: 5 });
  const own: number = get("pagination_limit");
  const global: string[] = get("resource_methods");
  const none: string | undefined = get("url");
  assert.deepEqual([own, global, none], [5, ["GET", "POST"], undefined]);
  // @ts-expect-error: a misspelt resource key is no key
  assert.throws(() => get("pagination_limt"));
});
