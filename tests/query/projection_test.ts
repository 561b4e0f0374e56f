import assert from "node:assert/strict";
import { effectiveProjection, parseProjection } from "../../src/query/projection.ts";
import { QueryError } from "../../src/query/errors.ts";

const KEYS = ["_id", "_created", "_updated", "_etag"];

function refused(raw: string, pattern: RegExp): void {
  assert.throws(() => parseProjection(raw, { keyFields: KEYS }), (e: unknown) => {
    assert.ok(e instanceof QueryError);
    assert.equal(e.status, 400);
    assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("parseProjection: inclusive and exclusive objects", () => {
  assert.deepEqual(parseProjection('{"name": 1, "age": 1}', { keyFields: KEYS }), {
    name: 1,
    age: 1,
  });
  assert.deepEqual(parseProjection('{"name": 0}', { keyFields: KEYS }), { name: 0 });
  assert.deepEqual(parseProjection('{"name": true, "a.b": 1}', { keyFields: KEYS }), {
    name: 1,
    "a.b": 1,
  });
});

Deno.test("parseProjection: mixing refused except for key fields", () => {
  refused('{"name": 1, "age": 0}', /cannot mix/);
  assert.deepEqual(parseProjection('{"name": 1, "_id": 0}', { keyFields: KEYS }), {
    name: 1,
    _id: 0,
  });
  assert.deepEqual(parseProjection('{"name": 0, "_created": 1}', { keyFields: KEYS }), {
    name: 0,
    _created: 1,
  });
  // A custom ID_FIELD is a key field too: the caller names the resource's key fields.
  assert.deepEqual(parseProjection('{"uid": 1, "name": 0}', { keyFields: ["uid"] }), {
    uid: 1,
    name: 0,
  });
  assert.throws(() => parseProjection('{"name": 1, "_id": 0}', { keyFields: [] }), QueryError);
});

Deno.test("parseProjection: bad input", () => {
  refused('{"name": 2}', /must be 0 or 1/);
  refused('{"name": "1"}', /must be 0 or 1/);
  refused('{"$where": 1}', /invalid field name/);
  refused('{"a": {"$slice": 1}}', /nesting deeper|must be 0 or 1/);
  refused('["a"]', /JSON object/);
  refused("{'a': 1}", /single quotes are not allowed at position 1/);
  refused('{"a": 1', /position/);
});

Deno.test("effectiveProjection: default applies when the client gives none", () => {
  assert.equal(effectiveProjection(undefined, undefined, KEYS), undefined);
  assert.deepEqual(effectiveProjection(undefined, { name: 1 }, KEYS), {
    name: 1,
    _id: 1,
    _created: 1,
    _updated: 1,
    _etag: 1,
  });
  assert.deepEqual(effectiveProjection({}, { secret: 0 }, KEYS), { secret: 0 });
});

Deno.test("effectiveProjection: a field hidden by default appears when asked for", () => {
  assert.deepEqual(effectiveProjection({ secret: 1 }, { secret: 0 }, KEYS), {
    secret: 1,
    _id: 1,
    _created: 1,
    _updated: 1,
    _etag: 1,
  });
  assert.deepEqual(effectiveProjection({ other: 0 }, { secret: 0 }, KEYS), {
    secret: 0,
    other: 0,
  });
});

Deno.test("effectiveProjection: inclusive default restricts client inclusions", () => {
  const d = { name: 1 as const, address: 1 as const };
  assert.deepEqual(effectiveProjection({ name: 1, password: 1 }, d, ["_id"]), {
    name: 1,
    _id: 1,
  });
  assert.deepEqual(effectiveProjection({ "address.city": 1 }, d, ["_id"]), {
    "address.city": 1,
    _id: 1,
  });
  assert.deepEqual(effectiveProjection({ password: 1 }, d, ["_id"]), { _id: 1 });
  assert.deepEqual(effectiveProjection({ name: 0 }, d, ["_id"]), { address: 1, _id: 1 });
});

Deno.test("effectiveProjection: key fields are never excluded, always included", () => {
  assert.deepEqual(effectiveProjection({ _id: 0, name: 0 }, undefined, KEYS), { name: 0 });
  assert.equal(effectiveProjection({ _id: 0 }, undefined, KEYS), undefined);
  assert.deepEqual(effectiveProjection({ name: 1, _etag: 0 }, undefined, KEYS), {
    name: 1,
    _id: 1,
    _created: 1,
    _updated: 1,
    _etag: 1,
  });
  const v = effectiveProjection({ name: 1 }, undefined, ["_id", "_version"]);
  assert.deepEqual(v, { name: 1, _id: 1, _version: 1 });
});
