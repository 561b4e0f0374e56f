/**
 * `unique` through HTTP: against stored documents, within one bulk request, ignoring
 * soft-deleted documents, on edits, and under a race of concurrent writers (the store's
 * unique index has the last word: a validation error, never a 500).
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { issuesOf } from "../support/assertions.ts";
import type { Json } from "../support/client.ts";
import { stubOperation } from "../support/store_stub.ts";
import { StoreError } from "../../src/store/store.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    users: {
      schema: {
        email: { type: "string", unique: true },
        name: { type: "string" },
      },
    },
    handles: {
      schema: {
        profile: { type: "dict", schema: { handle: { type: "string", unique: true } } },
        note: { type: "string" },
      },
    },
    members: {
      soft_delete: true,
      schema: { email: { type: "string", unique: true } },
    },
  },
};

scenario("a value already stored is refused", SETTINGS, async (api) => {
  await api.create("users", { email: "a@x" });
  const res = await api.post("users", { email: "a@x", name: "other" });
  assert.deepEqual(issuesOf(res), { email: "value 'a@x' is not unique" });
  assert.equal((await api.get("users")).body._meta.total, 1);
  await api.create("users", { email: "A@x" });
});

scenario("a nested unique field is checked, issues nested", SETTINGS, async (api) => {
  await api.create("handles", { profile: { handle: "ada" } });
  const nested = await api.post("handles", { profile: { handle: "ada" } });
  assert.deepEqual(issuesOf(nested), {
    profile: { handle: "value 'ada' is not unique" },
  });
});

scenario("documents without the unique field do not collide", SETTINGS, async (api) => {
  await api.create("users", { name: "no email" });
  await api.create("users", { name: "no email either" });
  await api.create("handles", { note: "no profile" });
  await api.create("handles", { profile: {} });
  await api.create("handles", { note: "no profile either" });
  assert.equal((await api.get("handles")).body._meta.total, 3);
});

scenario("edits may keep their own value but not take another's", SETTINGS, async (api) => {
  const a = await api.create("users", { email: "a@x" });
  await api.create("users", { email: "b@x" });
  const same = await api.patch(`users/${a._id}`, { email: "a@x", name: "n" }, {
    "if-match": a._etag,
  });
  assert.equal(same.status, 200, same.text);
  const put = await api.put(`users/${a._id}`, { email: "a@x" }, { "if-match": same.body._etag });
  assert.equal(put.status, 200, put.text);
  const patch = await api.patch(`users/${a._id}`, { email: "b@x" }, {
    "if-match": put.body._etag,
  });
  assert.deepEqual(issuesOf(patch), { email: "value 'b@x' is not unique" });
  const replace = await api.put(`users/${a._id}`, { email: "b@x" }, {
    "if-match": put.body._etag,
  });
  assert.deepEqual(issuesOf(replace), {
    email: "value 'b@x' is not unique",
  });
  assert.equal((await api.get(`users/${a._id}`)).body.email, "a@x");
});

scenario("a bulk request repeating a value stores nothing", SETTINGS, async (api) => {
  await api.create("users", { email: "old@x" });
  const res = await api.post("users", [
    { email: "n@x" },
    { email: "m@x" },
    { email: "n@x" },
    { email: "old@x" },
  ]);
  assert.equal(res.status, 422);
  assert.deepEqual(res.body._items, [
    { _status: "OK" },
    { _status: "OK" },
    { _status: "ERR", _issues: { email: "value 'n@x' is not unique" } },
    { _status: "ERR", _issues: { email: "value 'old@x' is not unique" } },
  ]);
  assert.equal(res.body._error.message, "Insertion failure: 2 document(s) contain(s) error(s)");
  assert.equal((await api.get("users")).body._meta.total, 1);
});

scenario(
  "a bulk request runs at most 32 uniqueness checks at a time",
  SETTINGS,
  async (api, running) => {
    await api.create("users", { email: "u7@x" });
    let inFlight = 0;
    let most = 0;
    let checks = 0;
    const restore = stubOperation(running.service.store, "users", "count", async (count, args) => {
      checks++;
      most = Math.max(most, ++inFlight);
      try {
        // Each check takes a while, so that checks not held back would overlap.
        await new Promise((resolve) => setTimeout(resolve, 2));
        return await count(...args);
      } finally {
        inFlight--;
      }
    });
    try {
      const docs = Array.from({ length: 100 }, (_, n) => ({ email: `u${n}@x` }));
      const res = await api.post("users", docs);
      assert.equal(res.status, 422);
      assert.equal(res.body._items.length, 100);
      assert.deepEqual(res.body._items[7]._issues, { email: "value 'u7@x' is not unique" });
      assert.equal(res.body._items[8]._status, "OK");
      assert.equal(checks, 100);
      assert.equal(most, 32);
    } finally {
      restore();
    }
    assert.equal((await api.get("users")).body._meta.total, 1);
  },
);

scenario(
  "a bulk request whose check fails stores nothing and stops validating",
  SETTINGS,
  async (api, running) => {
    let checks = 0;
    const restore = stubOperation(running.service.store, "users", "count", async (count, args) => {
      if (++checks === 40) throw new StoreError("the database went away");
      await new Promise((resolve) => setTimeout(resolve, 2));
      return await count(...args);
    });
    try {
      const docs = Array.from({ length: 200 }, (_, n) => ({ email: `f${n}@x` }));
      const res = await api.post("users", docs);
      assert.equal(res.status, 503, res.text);
      // The documents in progress finish their checks; no new one starts.
      assert.ok(checks < 40 + 32, `${checks} checks`);
    } finally {
      restore();
    }
    assert.equal((await api.get("users")).body._meta.total, 0);
  },
);

scenario("soft-deleted documents are ignored by the check", SETTINGS, async (api) => {
  const a = await api.create("members", { email: "a@x" });
  const dup = await api.post("members", { email: "a@x" });
  assert.deepEqual(issuesOf(dup), { email: "value 'a@x' is not unique" });
  const del = await api.delete(`members/${a._id}`, { "if-match": a._etag });
  assert.equal(del.status, 204);
  const again = await api.post("members", { email: "a@x" });
  assert.equal(again.status, 201, again.text);
});

/** Fires `n` POSTs of the same unique value at once; returns the statuses, sorted. */
async function race(api: Json, path: string, doc: unknown, n = 10): Promise<number[]> {
  const answers = await Promise.all(Array.from({ length: n }, () => api.post(path, doc)));
  for (const a of answers) {
    if (a.status === 422) {
      assert.deepEqual(a.body._issues, { email: "value 'race@x' is not unique" }, a.text);
    }
  }
  return answers.map((a) => a.status).sort();
}

scenario("a race of concurrent POSTs: exactly one wins, the rest 422", SETTINGS, async (api) => {
  const statuses = await race(api, "users", { email: "race@x" });
  assert.deepEqual(statuses, [201, ...Array(9).fill(422)]);
  const list = await api.get(`users?where=${encodeURIComponent('{"email": "race@x"}')}`);
  assert.equal(list.body._items.length, 1);
});

scenario("a race with soft delete on: exactly one wins", SETTINGS, async (api) => {
  const statuses = await race(api, "members", { email: "race@x" });
  assert.deepEqual(statuses, [201, ...Array(9).fill(422)]);
});

scenario("a race of concurrent PATCHes to one value: one wins", SETTINGS, async (api) => {
  const docs = [];
  for (let i = 0; i < 6; i++) docs.push(await api.create("users", { email: `u${i}@x` }));
  const answers = await Promise.all(
    docs.map((d) => api.patch(`users/${d._id}`, { email: "race@x" }, { "if-match": d._etag })),
  );
  const statuses = answers.map((a) => a.status).sort();
  assert.deepEqual(statuses, [200, 422, 422, 422, 422, 422], answers.map((a) => a.text).join());
});
