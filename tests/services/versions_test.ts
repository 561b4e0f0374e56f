/** The versioning module's pure parts: version fields, stamps and versioned references. */
import assert from "node:assert/strict";
import {
  versionFields,
  versionKey,
  versionRef,
  versionStamp,
} from "../../src/services/versions.ts";
import type { Runtime } from "../../src/services/runtime.ts";
import type { Resource } from "../../src/domain/types.ts";
import { ObjectId } from "../../src/doc/bson.ts";

const rt = { settings: { VERSION: "_v", LATEST_VERSION: "_latest" } } as unknown as Runtime;
const versioned = { versioning: true } as Resource;
const plain = { versioning: false } as Resource;

Deno.test("versions: fields and stamps; a document from before versioning is version 1", () => {
  assert.deepEqual(versionFields(rt, versioned), ["_v", "_latest"]);
  assert.deepEqual(versionFields(rt, plain), []);
  assert.deepEqual(versionStamp(rt, versioned, { doc: { _v: 3 } }), { _v: 3, _latest: 3 });
  assert.deepEqual(versionStamp(rt, versioned, { doc: {} }), { _v: 1, _latest: 1 });
  assert.deepEqual(versionStamp(rt, versioned, { doc: { _v: 2 }, latest: 5 }), {
    _v: 2,
    _latest: 5,
  });
  assert.deepEqual(versionStamp(rt, plain, { doc: { _v: 2 } }), {});
});

Deno.test("versions: a versioned reference names an id and a numbered version", () => {
  const id = new ObjectId();
  assert.deepEqual(versionRef(rt, { field: "_id", ref: { _id: id, _v: 2 } }), { id, version: 2 });
  assert.equal(versionRef(rt, { field: "_id", ref: { _id: id } }), undefined);
  assert.equal(versionRef(rt, { field: "_id", ref: { _id: id, _v: "2" } }), undefined);
  assert.equal(versionRef(rt, { field: "_id", ref: id.toHexString() }), undefined);
  assert.equal(versionRef(rt, { field: "_id", ref: [id, 2] }), undefined);
  // Keys tell ObjectIds from their hex strings.
  assert.notEqual(
    versionKey({ id, version: 1 }),
    versionKey({ id: id.toHexString(), version: 1 }),
  );
  assert.equal(versionKey({ id, version: 1 }), versionKey({ id: new ObjectId(id), version: 1 }));
});
