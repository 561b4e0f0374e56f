/** Shared checks of the hostile-input scenarios (issue 8). */
import assert from "node:assert/strict";
import type { Answer, Client } from "./client.ts";

/**
 * Asserts the service still answers a normal request within 100 ms: the best of three
 * tries, so one scheduling hiccup of a busy test machine does not count, while a blocked
 * event loop or a poisoned state does.
 */
export async function answersQuickly(api: Client, path = "") {
  let best = Infinity;
  for (let i = 0; i < 3 && best >= 100; i++) {
    const started = performance.now();
    const res = await api.get(path);
    best = Math.min(best, performance.now() - started);
    assert.equal(res.status, 200, `GET /${path} answered ${res.status}: ${res.text}`);
  }
  assert.ok(best < 100, `a normal request took ${best.toFixed(0)} ms`);
}

/** Asserts an error answer: `status`, our envelope, and a message containing `fragment`. */
export function isError(res: Answer, status: number, fragment = "") {
  assert.equal(res.status, status, `answered ${res.status}: ${res.text.slice(0, 300)}`);
  assert.equal(res.body._status, "ERR", res.text.slice(0, 300));
  const message = String(res.body._error?.message ?? "");
  assert.ok(message.includes(fragment), `"${message}" lacks "${fragment}"`);
  assert.doesNotMatch(res.text, /Cannot read properties|is not a function|TypeError|at .*\.ts:\d+/);
}

/** Asserts nothing was added to Object.prototype (the service runs in this process). */
export function prototypeClean() {
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), BASELINE);
  assert.equal(({} as Record<string, unknown>).zzz, undefined);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
}

const BASELINE = Object.getOwnPropertyNames(Object.prototype).sort();

/** A JSON request with a raw body text (keeps `__proto__` keys as sent). */
export function rawJson(api: Client, method: string, path: string, text: string) {
  return api.request(method, path, { raw: text, headers: { "content-type": "application/json" } });
}
