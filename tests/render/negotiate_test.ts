import assert from "node:assert/strict";
import { negotiate } from "../../src/render/negotiate.ts";

const BOTH = ["json", "xml"];

Deno.test("negotiate: JSON by default", () => {
  assert.equal(negotiate(null, BOTH), "json");
  assert.equal(negotiate("", BOTH), "json");
  assert.equal(negotiate("*/*", BOTH), "json");
  assert.equal(negotiate("application/*", BOTH), "json");
  assert.equal(negotiate("text/html", BOTH), "json");
  assert.equal(negotiate("application/json", BOTH), "json");
});

Deno.test("negotiate: XML when asked", () => {
  assert.equal(negotiate("application/xml", BOTH), "xml");
  assert.equal(negotiate("text/xml", BOTH), "xml");
  assert.equal(negotiate("Application/XML; charset=utf-8", BOTH), "xml");
  assert.equal(negotiate("text/*", BOTH), "xml");
});

Deno.test("negotiate: q-values", () => {
  assert.equal(negotiate("application/json;q=0.5, application/xml", BOTH), "xml");
  assert.equal(negotiate("application/xml;q=0.5, application/json", BOTH), "json");
  assert.equal(negotiate("application/xml;q=0.9, */*;q=0.8", BOTH), "xml");
  assert.equal(
    negotiate("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", BOTH),
    "xml",
  );
  assert.equal(negotiate("*/*;q=0.1, application/json;q=0", BOTH), "xml");
  assert.equal(negotiate("application/json;q=0.5, application/xml;q=0.5", BOTH), "json");
});

Deno.test("negotiate: only enabled renderers", () => {
  assert.equal(negotiate("application/xml", ["json"]), "json");
  assert.equal(negotiate("application/json", ["xml"]), "xml");
  assert.equal(negotiate(null, ["xml"]), "xml");
  assert.equal(negotiate(null, []), null);
  assert.equal(negotiate("text/xml", ["JSON", "XML"]), "xml");
  assert.equal(negotiate("application/json", ["yaml"]), null);
});

Deno.test("negotiate: hostile headers are bounded", () => {
  const huge = "a/b;q=0.1,".repeat(100_000) + "application/xml";
  assert.equal(negotiate(huge, BOTH), "json");
  assert.equal(negotiate("application/xml;q=abc", BOTH), "xml");
  assert.equal(negotiate(";;;,,,", BOTH), "json");
});

Deno.test("negotiate: an answer kept for an Accept value is that of its own renderers", () => {
  const jsonOnly = ["json"];
  const xmlOnly = ["xml"];
  for (let round = 0; round < 2; round++) {
    assert.equal(negotiate("application/xml", BOTH), "xml");
    assert.equal(negotiate("application/xml", jsonOnly), "json");
    assert.equal(negotiate("application/json", xmlOnly), "xml");
    assert.equal(negotiate("application/json", BOTH), "json");
  }
  // More Accept values than are kept: every answer is still worked out right.
  for (let n = 0; n < 200; n++) {
    assert.equal(negotiate(`application/xml;q=0.${n % 9 + 1}, x/y${n}`, BOTH), "xml");
    assert.equal(negotiate(`application/json, x/y${n}`, BOTH), "json");
  }
});
