import assert from "node:assert/strict";
import { isValidJsonpCallback, wrapJsonp } from "../../src/http/jsonp.ts";
import { HttpError } from "../../src/http/errors.ts";

Deno.test("jsonp: wraps JSON in the callback", () => {
  assert.equal(wrapJsonp("cb", '{"a":1}'), '/**/cb({"a":1})');
  assert.equal(wrapJsonp("jQuery.handlers.cb_12", "[]"), "/**/jQuery.handlers.cb_12([])");
});

Deno.test("jsonp: escapes U+2028/U+2029 inside the payload", () => {
  assert.equal(wrapJsonp("cb", '"\u2028\u2029"'), '/**/cb("\\u2028\\u2029")');
});

Deno.test("jsonp: valid names", () => {
  for (const n of ["cb", "_x", "$", "a.b.c", "A1", "x".repeat(128)]) {
    assert.ok(isValidJsonpCallback(n), n);
  }
});

Deno.test("jsonp: injection attempts are refused", () => {
  const bad = [
    "",
    "alert(1);cb",
    "cb//",
    "cb</script>",
    "a..b",
    ".a",
    "a.",
    "1abc",
    "a b",
    "a-b",
    "a[0]",
    "a\nb",
    "eval('x')",
    "x".repeat(129),
    "cb\u2028",
    "(function(){})",
  ];
  for (const n of bad) {
    assert.equal(isValidJsonpCallback(n), false, JSON.stringify(n));
    assert.throws(
      () => wrapJsonp(n, "{}"),
      (e: unknown) => e instanceof HttpError && e.status === 400,
    );
  }
});
