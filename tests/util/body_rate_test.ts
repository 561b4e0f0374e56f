/**
 * The minimum body data rate (src/util/body_rate.ts) on its own: only time spent waiting for
 * the body counts; a trickle fails at the moment it falls under the rate; a steady body and
 * a rule of 0 pass.
 */
import assert from "node:assert/strict";
import { RateWatch, SlowBodyError } from "../../src/util/body_rate.ts";

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A read resolving to `bytes` bytes after `ms`. */
const read = (bytes: number, ms: number) => delay(ms).then(() => bytes);
const size = (n: number) => n;

Deno.test("time the reader spends elsewhere does not count against the body", async () => {
  const watch = new RateWatch({ bytesPerSecond: 1000, graceMs: 50 });
  // 10 bytes per read, at once; the reader then works 100 ms: 100 bytes per second overall.
  for (let i = 0; i < 5; i++) {
    assert.equal(await watch.read(read(10, 0), size), 10);
    await delay(100);
  }
});

Deno.test("a trickle fails once the grace period is waited out and the rate is not met", async () => {
  const watch = new RateWatch({ bytesPerSecond: 1000, graceMs: 200 });
  const t0 = performance.now();
  assert.equal(await watch.read(read(1, 100), size), 1);
  // 1 byte covers 1 ms: the remaining 100 ms of grace and the slack (at most the grace
  // period, 200 ms) are all the next read gets.
  await assert.rejects(watch.read(read(1, 2000), size), SlowBodyError);
  const ms = performance.now() - t0;
  assert.ok(ms >= 390 && ms < 900, `failed after ${ms.toFixed(0)} ms`);
});

Deno.test("a steady body above the rate is never cut, long past the grace period", async () => {
  const watch = new RateWatch({ bytesPerSecond: 1000, graceMs: 50 });
  // 30 bytes every 20 ms: 1,500 bytes per second, for 400 ms.
  for (let i = 0; i < 20; i++) await watch.read(read(30, 20), size);
});

Deno.test("no rule, or a rate of 0: reads pass through", async () => {
  for (const rule of [null, { bytesPerSecond: 0, graceMs: 0 }]) {
    const watch = new RateWatch(rule);
    assert.equal(await watch.read(read(1, 150), size), 1);
  }
});
