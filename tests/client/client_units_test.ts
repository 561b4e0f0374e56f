/**
 * Units of the client where the wire format is subtle: the SSE reader (line endings split
 * across chunks, comments, multi-line data, bounds), Retry-After, the HMAC signer against
 * the service's own string to sign, and the ETag cache bound.
 */
import assert from "node:assert/strict";
import { readEvents } from "../../src/client/sse.ts";
import { retryAfter } from "../../src/client/http.ts";
import { HmacSigner } from "../../src/client/auth.ts";
import { createClient, EtagCache } from "../../src/client/mod.ts";
import { stringToSign } from "../../src/auth/hmac.ts";
import { hmacHex } from "../../src/auth/secrets.ts";

function stream(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(body: ReadableStream<Uint8Array>, onRetry?: (ms: number) => void) {
  const out = [];
  for await (const event of readEvents(body, { onRetry, maxEventBytes: 64 })) out.push(event);
  return out;
}

Deno.test("client sse: events across chunk and line-ending boundaries", async () => {
  const retries: number[] = [];
  const events = await all(
    stream(
      "id: r-1\r",
      '\nevent: ready\r\ndata: {"resumed":false}\r\n\r\n: heartbeat\n\n',
      "retry: 2500\nid: r-2\nevent: insert\ndata: line one\ndata:line two\n\n",
      "data: no id or name\n\nid: r-3\nevent: half",
    ),
    (ms) => retries.push(ms),
  );
  assert.deepEqual(events, [
    { id: "r-1", event: "ready", data: '{"resumed":false}' },
    { id: "r-2", event: "insert", data: "line one\nline two" },
    { id: null, event: "message", data: "no id or name" },
  ]);
  assert.deepEqual(retries, [2500]);
});

Deno.test("client sse: an event past the bound is an error, not a memory sink", async () => {
  await assert.rejects(all(stream(`data: ${"x".repeat(100)}\n\n`)), /larger than 64/);
  await assert.rejects(all(stream(`data: ${"x".repeat(100)}`)), /longer than 64/);
});

Deno.test("client retry-after: seconds, HTTP dates, garbage", () => {
  assert.equal(retryAfter(new Headers({ "retry-after": "3" })), 3000);
  const inTwo = new Date(Date.now() + 2000).toUTCString();
  const ms = retryAfter(new Headers({ "retry-after": inTwo }))!;
  assert.ok(ms > 0 && ms <= 2000);
  assert.equal(retryAfter(new Headers({ "retry-after": "soon" })), null);
  assert.equal(retryAfter(new Headers()), null);
});

Deno.test("client hmac: the service's string to sign, and never one signature twice", async () => {
  let now = Date.parse("2026-11-27T10:00:00.200Z");
  const signer = new HmacSigner(() => now);
  const account = { username: "ada", secret: "the-secret-of-ada" };
  const url = new URL("http://h/people?where=%7B%22a%22%3A1%7D&page=2");
  const body = new TextEncoder().encode('{"name":"Ann"}');
  const headers = new Headers();
  await signer.sign(account, { method: "POST", url, headers, body });
  const date = headers.get("x-date")!;
  assert.equal(date, "Fri, 27 Nov 2026 10:00:00 GMT");
  const text = stringToSign(new Request(url, { method: "POST" }), body, date);
  assert.equal(headers.get("authorization"), `HMAC ada:${hmacHex(account.secret, text)}`);

  // The same request again in the same second waits for the next one (the service would
  // refuse a replayed signature).
  const again = new Headers();
  const started = performance.now();
  const signing = signer.sign(account, { method: "POST", url, headers: again, body });
  setTimeout(() => (now += 1000), 10);
  await signing;
  assert.ok(performance.now() - started >= 700);
  assert.notEqual(again.get("authorization"), headers.get("authorization"));
  assert.equal(again.get("x-date"), "Fri, 27 Nov 2026 10:00:01 GMT");
});

Deno.test("client etag cache: bounded, least recently set forgotten first", () => {
  const cache = new EtagCache(2);
  cache.set("a", "1");
  cache.set("b", "2");
  cache.set("a", "3");
  cache.set("c", "4");
  assert.equal(cache.get("b"), undefined);
  assert.equal(cache.get("a"), "3");
  assert.equal(cache.get("c"), "4");
});

Deno.test("client credentials: never sent to an origin the client was not pointed at", async () => {
  const seen: Array<{ url: string; authorization: string | null; extra: string | null }> = [];
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    seen.push({
      url: String(input),
      authorization: headers.get("authorization"),
      extra: headers.get("x-extra"),
    });
    return Promise.resolve(new Response("x", { status: 200 }));
  };
  const api = createClient({
    baseUrl: "http://api.test/v1",
    auth: { basic: { username: "u", password: "p" } },
    headers: { "x-extra": "1" },
    trustedOrigins: ["https://files.test"],
    fetch,
  });
  await api.download("/v1/media/abc");
  await api.download("https://files.test/media/abc");
  await api.download("https://elsewhere.test/steal");
  assert.deepEqual(seen, [
    { url: "http://api.test/v1/media/abc", authorization: "Basic dTpw", extra: "1" },
    { url: "https://files.test/media/abc", authorization: "Basic dTpw", extra: "1" },
    { url: "https://elsewhere.test/steal", authorization: null, extra: null },
  ]);
});
