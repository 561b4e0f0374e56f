/** The soft-delete module: the flag, the live condition and when a read shows deleted items. */
import assert from "node:assert/strict";
import { softDeleteOf } from "../../src/services/soft-delete.ts";
import type { Runtime } from "../../src/services/runtime.ts";
import type { Resource } from "../../src/domain/types.ts";

const rt = { settings: { DELETED: "_gone" } } as unknown as Runtime;
const on = softDeleteOf(rt, { softDelete: true } as Resource);
const off = softDeleteOf(rt, { softDelete: false } as Resource);

Deno.test("soft delete: the flag, its condition and the marked copy", () => {
  assert.deepEqual(on.fields, ["_gone"]);
  assert.deepEqual(on.liveOnly, { _gone: { $ne: true } });
  assert.deepEqual(on.uniqueIndexCondition, { _gone: false });
  assert.equal(on.isDeleted({ _gone: true }), true);
  // Documents stored without the flag are live.
  assert.equal(on.isDeleted({}), false);
  const original = { a: 1 };
  assert.deepEqual(on.marked(original), { a: 1, _gone: true });
  assert.deepEqual(original, { a: 1 });
});

Deno.test("soft delete: a missing flag reads false; a PUT or PATCH restores", () => {
  const doc: Record<string, unknown> = {};
  on.setFlag(doc);
  assert.equal(doc._gone, false);
  const deleted: Record<string, unknown> = { _gone: true };
  on.setFlag(deleted);
  assert.equal(deleted._gone, true);
  on.setFlag(deleted, { restore: true });
  assert.equal(deleted._gone, false);
});

Deno.test("soft delete: show_deleted, or a where naming the flag at any depth", () => {
  assert.equal(on.showsDeleted({ showDeleted: true }), true);
  assert.equal(on.showsDeleted({ showDeleted: false }), false);
  assert.equal(on.showsDeleted({ showDeleted: false, where: { _gone: true } }), true);
  const nested = { $or: [{ a: 1 }, { $and: [{ _gone: false }] }] };
  assert.equal(on.showsDeleted({ showDeleted: false, where: nested }), true);
  // A value equal to the flag's name is not naming the flag.
  assert.equal(on.showsDeleted({ showDeleted: false, where: { a: "_gone" } }), false);
});

Deno.test("soft delete: a resource without it has no flag and shows everything", () => {
  assert.deepEqual(off.fields, []);
  assert.equal(off.liveOnly, undefined);
  assert.deepEqual(off.uniqueIndexCondition, {});
  assert.equal(off.isDeleted({ _gone: true }), false);
  const doc: Record<string, unknown> = {};
  off.setFlag(doc, { restore: true });
  assert.deepEqual(doc, {});
  assert.equal(off.showsDeleted({ showDeleted: true }), false);
});
