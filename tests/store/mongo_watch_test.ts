/**
 * Change stream events as store changes (src/store/mongo/watch.ts). The stream itself needs
 * a replica set, which the jongodb emulator is not (its gap "change-streams"): the mapping is
 * checked here on the events' documented shapes.
 */
import assert from "node:assert/strict";
import { toStoreChange } from "../../src/store/mongo/watch.ts";

const ns = { db: "eve", coll: "people" };

Deno.test("inserts, updates, replaces and deletes map to store changes", () => {
  const doc = { _id: 1, name: "Ada" };
  assert.deepEqual(
    toStoreChange({ operationType: "insert", ns, documentKey: { _id: 1 }, fullDocument: doc }),
    { collection: "people", op: "insert", id: 1, doc, before: null },
  );
  // Without pre-images the state before is unknown (undefined), not "none" (null).
  assert.deepEqual(
    toStoreChange({
      operationType: "update",
      ns,
      documentKey: { _id: 1 },
      fullDocument: doc,
      fullDocumentBeforeChange: null,
    }),
    { collection: "people", op: "update", id: 1, doc, before: undefined },
  );
  assert.deepEqual(
    toStoreChange({
      operationType: "replace",
      ns,
      documentKey: { _id: 1 },
      fullDocument: doc,
      fullDocumentBeforeChange: { _id: 1, name: "A" },
    }),
    { collection: "people", op: "replace", id: 1, doc, before: { _id: 1, name: "A" } },
  );
  assert.deepEqual(
    toStoreChange({ operationType: "delete", ns, documentKey: { _id: 1 } }),
    { collection: "people", op: "delete", id: 1, doc: null, before: undefined },
  );
  // An update whose document is gone by the time it is looked up.
  assert.equal(
    toStoreChange({ operationType: "update", ns, documentKey: { _id: 1 }, fullDocument: null })!
      .doc,
    null,
  );
  assert.equal(toStoreChange({ operationType: "drop", ns }), null);
  assert.equal(toStoreChange({ operationType: "insert", documentKey: { _id: 1 } }), null);
});
