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

/** An HTTP date as the service writes `_created` / `_updated` by default (RFC 1123). */
export const RFC1123_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** The message of a validation error on one document. */
const ONE_INVALID = "Insertion failure: 1 document(s) contain(s) error(s)";

/** POSTs one document, asserts it was created (201) and returns the answer's body. */
// deno-lint-ignore no-explicit-any
export async function assertCreated(api: Client, path: string, doc: unknown): Promise<any> {
  const res = await api.post(path, doc);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

/** Asserts the whole validation-error answer for one document, with exactly `issues`. */
// deno-lint-ignore no-explicit-any
export function assertInvalid(res: { status: number; body: any }, issues: unknown, status = 422) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(res.body, {
    _status: "ERR",
    _error: { code: status, message: ONE_INVALID },
    _issues: issues,
  });
}

/** Asserts a validation error (422) on one document and returns its issues. */
// deno-lint-ignore no-explicit-any
export function issuesOf(res: { status: number; body: any }): any {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body._status, "ERR");
  assert.deepEqual(res.body._error, { code: 422, message: ONE_INVALID });
  return res.body._issues;
}

/** The body of every internal error: nothing of the failure itself. */
export const GENERIC_500 = {
  _status: "ERR",
  _error: { code: 500, message: "The server could not complete the request." },
};
