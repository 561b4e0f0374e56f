/** Request ids: the client's when safe (echoed in the answer), else generated (logs only). */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { createLogger } from "../../src/log.ts";

const records: Array<Record<string, unknown>> = [];
const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
};

scenario(
  "X-Request-Id is echoed when the client's is safe, generated and logged otherwise",
  SETTINGS,
  async (
    api,
  ) => {
    records.length = 0;
    const kept = await api.post("people", { name: "a" }, { "x-request-id": "abc-123.x:y" });
    assert.equal(kept.status, 201);
    assert.equal(kept.headers.get("x-request-id"), "abc-123.x:y");
    const logged = records.filter((r) => r.requestid === "abc-123.x:y");
    assert.ok(logged.length >= 1, JSON.stringify(records));
    // Errors carry it too.
    const missing = await api.get("nothing", { "x-request-id": "trace-9" });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get("x-request-id"), "trace-9");
    // An unsafe or absent id is replaced by a generated one in the logs, which the answer does
    // not carry: two requests for the same URL get the same headers (as in Eve, whose HEAD and
    // GET answers are compared header for header); a proxy in front sets an id per request.
    for (const unsafe of ["a b", "x".repeat(129), "<script>", "", undefined]) {
      records.length = 0;
      const headers: Record<string, string> = unsafe === undefined
        ? {}
        : { "x-request-id": unsafe };
      const res = await api.post("people", { name: "b" }, headers);
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("x-request-id"), null, JSON.stringify(unsafe));
      const ids = records.map((r) => r.requestid).filter((id) => id !== undefined);
      assert.ok(ids.length >= 1, JSON.stringify(records));
      for (const id of ids) {
        assert.notEqual(id, unsafe);
        assert.match(String(id), /^[0-9a-f-]{36}$/);
      }
    }
    // Generated ids differ between requests.
    records.length = 0;
    await api.post("people", { name: "c" });
    await api.post("people", { name: "d" });
    const generated = new Set(records.map((r) => r.requestid).filter((id) => id !== undefined));
    assert.equal(generated.size, 2, JSON.stringify(records));
  },
  { logger: createLogger((record) => records.push(record), "debug") },
);
