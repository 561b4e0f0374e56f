import assert from "node:assert/strict";
import { parseSort } from "../../src/query/sort.ts";
import { QueryError } from "../../src/query/errors.ts";

function refused(raw: string, pattern: RegExp): void {
  assert.throws(() => parseSort(raw), (e: unknown) => {
    assert.ok(e instanceof QueryError);
    assert.equal(e.status, 400);
    assert.equal(e.param, "sort");
    assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("sort: comma form with - prefix, order kept", () => {
  const s = parseSort("-age,name, +city ,address.zip");
  assert.deepEqual(s, { age: -1, name: 1, city: 1, "address.zip": 1 });
  assert.deepEqual(Object.keys(s), ["age", "name", "city", "address.zip"]);
});

Deno.test("sort: Eve's Python tuple list form", () => {
  assert.deepEqual(parseSort('[("lastname", -1)]'), { lastname: -1 });
  const s = parseSort('[("a", 1), ("b", -1),]');
  assert.deepEqual(Object.entries(s), [["a", 1], ["b", -1]]);
});

Deno.test("sort: JSON list form", () => {
  assert.deepEqual(parseSort('[["a",1],["b",-1]]'), { a: 1, b: -1 });
  assert.deepEqual(parseSort(' [ [ "a" , +1 ] ] '), { a: 1 });
});

Deno.test("sort: single quotes are refused with position", () => {
  refused("[('a', 1)]", /single quotes are not allowed at position 2/);
  refused("'a'", /single quotes are not allowed at position 0/);
});

Deno.test("sort: bad syntax and directions", () => {
  refused('[("a", 2)]', /direction must be 1 or -1/);
  refused('[("a", "asc")]', /direction must be 1 or -1/);
  refused('[("a" 1)]', /expected ','/);
  refused('[("a", 1]', /expected '\)'/);
  refused('[("a", 1)', /expected ',' or '\]'/);
  refused('[("a", 1)] x', /expected end of sort/);
  refused("[a]", /expected '\(' or '\['/);
  refused("[]", /sort is empty/);
  refused("", /sort is empty/);
  refused("a,,b", /empty field name at position 2/);
  refused("-", /empty field name/);
  refused("$where", /invalid field name/);
  refused('[("$natural", 1)]', /invalid field name/);
  refused("a b", /invalid field name/);
  refused("a,a", /duplicate/);
  refused("__proto__", /"__proto__" is not allowed/);
  refused("a.constructor", /"constructor" is not allowed/);
  refused("a.$", /invalid field name/);
});

Deno.test("sort: bounded size", () => {
  refused(Array.from({ length: 40 }, (_, i) => `f${i}`).join(","), /more than 32 fields/);
  refused("a".repeat(3000), /too long/);
});
