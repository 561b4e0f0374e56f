/**
 * Concurrent writes to one document (src/services/item_writes.ts): requests that pinned no
 * version are applied one after another, none lost and none refused; requests that pinned
 * the same version (If-Match) still conflict, one wins and the others get 412.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";

const FIELDS = Array.from({ length: 24 }, (_, i) => `f${i}`);

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    notes: {
      schema: {
        title: { type: "string" },
        ...Object.fromEntries(FIELDS.map((f) => [f, { type: "integer" }])),
      },
    },
  },
};

scenario(
  "concurrent PATCHes without If-Match on one document are all applied",
  { ...SETTINGS, IF_MATCH: false },
  async (api) => {
    const { _id } = await api.create("notes", { title: "shared" });
    const answers = await Promise.all(
      FIELDS.map((field, i) => api.patch(`notes/${_id}`, { [field]: i })),
    );
    assert.deepEqual(answers.map((a) => a.status), FIELDS.map(() => 200));
    const doc = (await api.get(`notes/${_id}`)).body;
    for (const [i, field] of FIELDS.entries()) assert.equal(doc[field], i, `${field} was lost`);
    assert.equal(doc.title, "shared");
  },
);

scenario(
  "concurrent PATCHes pinning one version: one is applied, the others get 412",
  SETTINGS,
  async (api) => {
    const created = await api.create("notes", { title: "shared" });
    const etag = `"${created._etag}"`;
    const answers = await Promise.all(
      FIELDS.map((field, i) =>
        api.patch(`notes/${created._id}`, { [field]: i }, { "If-Match": etag })
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, ...FIELDS.slice(1).map(() => 412)]);
    const doc = (await api.get(`notes/${created._id}`)).body;
    assert.equal(FIELDS.filter((f) => f in doc).length, 1);
  },
);

scenario(
  "concurrent PUTs and a DELETE on one document leave it consistent",
  { ...SETTINGS, IF_MATCH: false, UPSERT_ON_PUT: false },
  async (api) => {
    const { _id } = await api.create("notes", { title: "v0" });
    const puts = FIELDS.map((_, i) => api.put(`notes/${_id}`, { title: `v${i + 1}` }));
    const answers = await Promise.all([...puts, api.delete(`notes/${_id}`)]);
    // Each write ran against the version before it: a PUT after the DELETE finds nothing.
    for (const a of answers) assert.ok([200, 204, 404].includes(a.status), a.text);
    assert.equal(answers.filter((a) => a.status === 204).length, 1);
    const after = await api.get(`notes/${_id}`);
    assert.equal(after.status, 404);
  },
);
