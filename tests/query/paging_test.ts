import assert from "node:assert/strict";
import { parseEmbedded, parsePaging } from "../../src/query/paging.ts";
import { QueryError } from "../../src/query/errors.ts";

const O = { default: 25, limit: 50 };

Deno.test("parsePaging: defaults", () => {
  assert.deepEqual(parsePaging({}, O), { page: 1, maxResults: 25 });
  assert.deepEqual(parsePaging({ page: "", max_results: "" }, O), { page: 1, maxResults: 25 });
});

Deno.test("parsePaging: values and clamping to the limit", () => {
  assert.deepEqual(parsePaging({ page: "3", max_results: "10" }, O), { page: 3, maxResults: 10 });
  assert.deepEqual(parsePaging({ max_results: "1000" }, O), { page: 1, maxResults: 50 });
  assert.deepEqual(parsePaging({ page: " 2 " }, O), { page: 2, maxResults: 25 });
});

Deno.test("parsePaging: bad values answer 400 naming the parameter", () => {
  const bad: Array<[Record<string, string>, string]> = [
    [{ page: "0" }, "page"],
    [{ page: "-1" }, "page"],
    [{ page: "1.5" }, "page"],
    [{ page: "abc" }, "page"],
    [{ page: "1e3" }, "page"],
    [{ page: "99999999999999999999" }, "page"],
    [{ max_results: "0" }, "max_results"],
    [{ max_results: "-5" }, "max_results"],
    [{ max_results: "x" }, "max_results"],
  ];
  for (const [params, name] of bad) {
    assert.throws(() => parsePaging(params, O), (e: unknown) => {
      assert.ok(e instanceof QueryError);
      assert.equal(e.status, 400);
      assert.equal(e.param, name);
      return true;
    }, JSON.stringify(params));
  }
});

Deno.test("parseEmbedded: object of 0/1", () => {
  assert.deepEqual(parseEmbedded('{"author": 1, "a.b": 0}'), { author: 1, "a.b": 0 });
  for (const raw of ["[1]", "{'a': 1}", "{", "not-a-dict", '{"a": {"b": 1}}']) {
    assert.throws(() => parseEmbedded(raw), QueryError, raw);
  }
  // As in Eve, values other than 0 and 1, and names no field could have, are ignored.
  assert.deepEqual(parseEmbedded('{"a": 2, "$x": 1, "b": "x", "c": 1}'), { c: 1 });
});
