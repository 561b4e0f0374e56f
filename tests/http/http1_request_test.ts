/**
 * The server's lazy requests (src/http/http1_request.ts) against full `Request`s made from
 * the same parts: fields read, changed and iterated, bodies, clones, and Deno's own functions
 * taking a request; and request URLs taken as they are against the URL parser's.
 */
import assert from "node:assert/strict";
import { LAZY_REQUESTS, type RequestParts, toRequest } from "../../src/http/http1_request.ts";
import { parseHead, requestUrl } from "../../src/http/http1.ts";
import { pick, random } from "../support/random.ts";

const lazy = (parts: RequestParts) => toRequest(parts, { lazy: true });
const full = (parts: RequestParts) => toRequest(parts, { lazy: false });
const body = (text: string) => new Blob([text]).stream();

Deno.test("lazy requests: on for this Deno (the fast path is the one tested and served)", () => {
  assert.equal(LAZY_REQUESTS, true);
});

Deno.test("lazy requests: what a Request tells, and what Deno does with one", async () => {
  const parts = (): RequestParts => ({
    method: "POST",
    url: "http://example.org:8080/a/b?c=d",
    fields: [["host", "example.org:8080"], ["content-type", "application/json"], ["x-a", "1"], [
      "x-a",
      "2",
    ]],
    body: body('{"n":1}'),
  });
  const [l, f] = [lazy(parts()), full(parts())];
  assert.ok(l instanceof Request);
  assert.equal(Object.prototype.toString.call(l), Object.prototype.toString.call(f));
  for (const key of ["method", "url", "bodyUsed", "redirect", "cache", "mode"] as const) {
    assert.equal(l[key], f[key], key);
  }
  assert.equal(l.headers.get("x-a"), "1, 2");
  assert.deepEqual([...l.headers], [...f.headers]);
  assert.equal(l.signal.aborted, false);
  assert.match(Deno.inspect(l), /^Request \{/);
  // A clone and the original each read the whole body.
  const clone = l.clone();
  assert.ok(clone instanceof Request);
  assert.deepEqual(await clone.json(), { n: 1 });
  assert.equal(await l.text(), '{"n":1}');
  assert.equal(l.bodyUsed, true);
  await assert.rejects(() => l.text(), TypeError);
  // Deno's own functions read a lazy request through its internal properties.
  const copied = new Request(lazy(parts()), { method: "PUT" });
  assert.equal(copied.url, f.url);
  assert.equal(copied.headers.get("content-type"), "application/json");
  assert.equal(await copied.text(), '{"n":1}');
  const answer = new Response(lazy(parts()).body);
  assert.equal(await answer.text(), '{"n":1}');
});

Deno.test("lazy requests: fields changed before and after the request is made in full", async () => {
  const request = lazy({
    method: "PATCH",
    url: "http://h/x",
    fields: [["host", "h"], ["accept", "text/plain"]],
    body: body("abc"),
  });
  const headers = request.headers;
  headers.set("accept", "application/json");
  headers.append("x-b", "1");
  assert.equal(headers.get("Accept"), "application/json");
  assert.equal(await request.text(), "abc"); // makes the request in full
  assert.equal(request.headers, headers, "the same Headers after");
  headers.delete("x-b");
  assert.equal(request.headers.has("x-b"), false);
  assert.equal(new Headers(request.headers).get("accept"), "application/json");
  assert.deepEqual([...headers.keys()], ["accept", "host"]);
});

Deno.test("lazy requests: refused as new Request refuses them", () => {
  for (const method of ["CONNECT", "TRACE", "TRACK"]) {
    const parts = { method, url: "http://h/", fields: [], body: null };
    assert.throws(() => lazy(parts), TypeError);
    assert.throws(() => full(parts), TypeError);
  }
  // Invalid names are refused by get and has, as by Headers.
  const headers = lazy({ method: "GET", url: "http://h/", fields: [["a", "1"]], body: null })
    .headers;
  assert.throws(() => headers.get("bad name"), TypeError);
  assert.throws(() => headers.has("bad\u0100"), TypeError);
});

Deno.test("lazy requests: get and has answer as Headers does, for generated fields", () => {
  const rnd = random(16);
  const NAMES = ["a", "A", "x-id", "X-Id", "accept", "Accept", "content-type", "set-cookie", "b-"];
  const FIELD_NAMES = NAMES.filter((name) => name === name.toLowerCase()); // as parsed
  const VALUES = ["", "1", "a b", "x,y", "\u00e9t\u00e9", '"q"'];
  for (let round = 0; round < 500; round++) {
    const fields: [string, string][] = [];
    for (let i = Math.floor(rnd() * 7); i > 0; i--) {
      fields.push([pick(rnd, FIELD_NAMES), pick(rnd, VALUES)]);
    }
    const headers = lazy({ method: "GET", url: "http://h/", fields, body: null }).headers;
    const expected = new Headers(fields);
    for (const name of NAMES) {
      assert.equal(headers.get(name), expected.get(name), `${JSON.stringify(fields)} ${name}`);
      assert.equal(headers.has(name), expected.has(name));
    }
  }
});

Deno.test("request URLs: taken as sent only where the URL parser keeps them", () => {
  const rnd = random(61);
  const PIECES = [
    "/",
    "a",
    "B",
    "0",
    ".",
    "..",
    "%2e",
    "%2E",
    "%41",
    "%",
    "%zz",
    "?",
    "#",
    "\\",
    "'",
    '"',
    "<",
    ">",
    "^",
    "`",
    "{",
    "}",
    "|",
    "[",
    "]",
    "~",
    "!",
    "$",
    "&",
    "(",
    ")",
    "*",
    "+",
    ",",
    ";",
    "=",
    ":",
    "@",
    "-",
    "_",
  ];
  const HOSTS = ["h", "H", "localhost:8080", "h:80", "127.0.0.1:1", "[::1]:2", "0x7f.1", "a..b"];
  for (let round = 0; round < 5000; round++) {
    let target = "/";
    for (let i = Math.floor(rnd() * 9); i > 0; i--) target += pick(rnd, PIECES);
    const host = pick(rnd, HOSTS);
    const head = parseHead(`GET ${target} HTTP/1.1\r\nHost: ${host}`);
    assert.ok(!("refuse" in head), target);
    let expected: string | null;
    try {
      expected = new Request(`http://${host}${target}`).url;
    } catch {
      expected = null;
    }
    assert.equal(requestUrl(head, "fallback"), expected, `${host} ${target}`);
  }
});
