/** Assertions shared by the scenarios. */
import assert from "node:assert/strict";
import type { Client } from "./client.ts";

/** URL-encodes a query parameter value. */
export const q = (s: string) => encodeURIComponent(s);

/** GETs `path` and asserts a 400 error body whose message contains `fragment`. */
export async function refused(api: Client, path: string, fragment: string) {
  const res = await api.get(path);
  assert.equal(res.status, 400, `${path} answered ${res.status}: ${res.text}`);
  assert.equal(res.body._status, "ERR");
  assert.ok(
    res.body._error.message.includes(fragment),
    `"${res.body._error.message}" lacks "${fragment}"`,
  );
}
