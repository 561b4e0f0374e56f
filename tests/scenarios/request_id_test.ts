/** Request ids: the client's when safe, else generated; on every answer and log record. */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { createLogger } from "../../src/log.ts";

const records: Array<Record<string, unknown>> = [];
const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
};

scenario("X-Request-Id is kept when safe, generated otherwise, and logged", SETTINGS, async (
  api,
) => {
  records.length = 0;
  const kept = await api.post("people", { name: "a" }, { "x-request-id": "abc-123.x:y" });
  assert.equal(kept.status, 201);
  assert.equal(kept.headers.get("x-request-id"), "abc-123.x:y");
  const logged = records.filter((r) => r.requestid === "abc-123.x:y");
  assert.ok(logged.length >= 1, JSON.stringify(records));
  for (const unsafe of ["a b", "x".repeat(129), "<script>", ""]) {
    const res = await api.get("people", { "x-request-id": unsafe });
    const id = res.headers.get("x-request-id")!;
    assert.notEqual(id, unsafe);
    assert.match(id, /^[0-9a-f-]{36}$/);
  }
  // Errors carry it too; ids differ between requests.
  const a = await api.get("nothing");
  const b = await api.get("nothing");
  assert.equal(a.status, 404);
  assert.match(a.headers.get("x-request-id")!, /^[0-9a-f-]{36}$/);
  assert.notEqual(a.headers.get("x-request-id"), b.headers.get("x-request-id"));
}, { logger: createLogger((record) => records.push(record), "debug") });
