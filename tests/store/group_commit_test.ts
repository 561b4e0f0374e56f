/**
 * The group commit of the embedded store: writes sharing one transaction fail alone. A
 * one-statement write needs no savepoint (a failed statement leaves nothing); others run
 * in one.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { Database } from "../../src/store/embedded/sqlite.ts";

Deno.test("group commit: a failing write leaves the others of its group, with or without a savepoint", async () => {
  const dir = await Deno.makeTempDir({ prefix: "group_commit_test_" });
  try {
    const db = Database.open(dir);
    const insert = (id: string) => db.stmts.insertDoc.run("c", id, `{"_id":"${id}"}`);
    // A failing write throws at once; the others are acknowledged once their group is synced.
    const write = (fn: () => void, options?: { oneStatement: boolean }) => {
      try {
        return db.grouped(fn, options).then(() => "ok");
      } catch {
        return Promise.resolve("failed");
      }
    };
    const settled = [
      write(() => insert("a"), { oneStatement: true }),
      // The same key again: the statement fails, "a" stays.
      write(() => insert("a"), { oneStatement: true }),
      // Two statements, the second failing: the first is undone with it.
      write(() => {
        insert("b");
        insert("a");
      }),
      write(() => insert("c"), { oneStatement: true }),
    ];
    assert.deepEqual(await Promise.all(settled), ["ok", "failed", "failed", "ok"]);
    db.close();
    const raw = new DatabaseSync(`${dir}/store.sqlite`);
    const ids = raw.prepare("SELECT id FROM docs ORDER BY id").all().map((r) => r.id);
    raw.close();
    assert.deepEqual(ids, ["a", "c"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
