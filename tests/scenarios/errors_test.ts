/** Bad input gets a clear 4xx with the standard error body, and changes nothing. */
import assert from "node:assert/strict";
import { scenario, sharedService } from "../support/harness.ts";
import { GENERIC_500 } from "../support/assertions.ts";
import { memoryLogger } from "../events/record.ts";
import { stubOperation } from "../support/store_stub.ts";
import type { Json } from "../support/client.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  MAX_BODY_SIZE: 1024,
  BULK_MAX_DOCUMENTS: 3,
  DOMAIN: { notes: { schema: { text: { type: "string" } } } },
};

function assertError(res: { status: number; body: Json }, status: number) {
  assert.equal(res.status, status);
  assert.equal(res.body._status, "ERR");
  assert.equal(res.body._error.code, status);
  assert.equal(typeof res.body._error.message, "string");
  assert.ok(res.body._error.message.length > 0);
}

// Scenarios that read back only what they stored share one service per store.
const shared = sharedService("client mistakes", SETTINGS);

shared("unknown paths answer 404 with the error body", async (api) => {
  assertError(await api.get("nothing"), 404);
  assertError(await api.get("notes/abc/def"), 404);
});

shared("an id that cannot be an id is 404", async (api) => {
  assertError(await api.get("notes/not-an-object-id"), 404);
  assertError(await api.get("notes/5f0c5e0d9d1b2c3a4b5c6d7"), 404);
});

scenario("malformed JSON is 400 and stores nothing", SETTINGS, async (api) => {
  const res = await api.request("POST", "notes", {
    raw: '{"text": ',
    headers: { "content-type": "application/json" },
  });
  assertError(res, 400);
  assert.equal((await api.get("notes")).body._meta.total, 0);
});

scenario("a body that is not an object or list is 400", SETTINGS, async (api) => {
  assertError(await api.post("notes", "text"), 400);
  assertError(await api.post("notes", 42), 400);
  assertError(await api.post("notes", [1, 2]), 400);
  assertError(await api.post("notes", []), 400);
  assert.equal((await api.get("notes")).body._meta.total, 0);
});

shared("an unsupported content type is 415", async (api) => {
  const res = await api.request("POST", "notes", {
    raw: "text=hi",
    headers: { "content-type": "text/plain" },
  });
  assertError(res, 415);
});

scenario(
  "JSON sent as a form (curl -d's default type) is 415 naming the type",
  SETTINGS,
  async (api) => {
    for (const raw of ['{"text": "hi"}', ' [{"text": "hi"}]']) {
      const res = await api.request("POST", "notes", {
        raw,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      assertError(res, 415);
      assert.match(res.body._error.message, /Content-Type: application\/json/);
      assert.doesNotMatch(res.body._error.message, /unknown field/);
    }
    // A real form still works.
    const form = await api.request("POST", "notes", {
      raw: "text=hi",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    assert.equal(form.status, 201, form.text);
    assert.equal((await api.get("notes")).body._meta.total, 1);
  },
);

scenario("a body over MAX_BODY_SIZE is 413", SETTINGS, async (api) => {
  assertError(await api.post("notes", { text: "x".repeat(2000) }), 413);
  assert.equal((await api.get("notes")).body._meta.total, 0);
});

shared("more documents than BULK_MAX_DOCUMENTS is 413", async (api) => {
  assertError(await api.post("notes", [{}, {}, {}, {}]), 413);
});

shared("an empty body is 400", async (api) => {
  assertError(
    await api.request("POST", "notes", {
      raw: "",
      headers: { "content-type": "application/json" },
    }),
    400,
  );
});

shared("form-encoded bodies are accepted", async (api) => {
  const res = await api.request("POST", "notes", {
    raw: "text=hello+world",
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  assert.equal(res.status, 201);
  assert.equal((await api.get(`notes/${res.body._id}`)).body.text, "hello world");
});

shared("an unknown override method is 400", async (api) => {
  const res = await api.request("GET", "notes", { headers: { "x-http-method-override": "BREW" } });
  assertError(res, 400);
});

shared("a client mistake answers without a stack trace", async (api) => {
  const res = await api.request("POST", "notes", {
    raw: "{bad",
    headers: { "content-type": "application/json" },
  });
  assertError(res, 400);
  assert.doesNotMatch(res.text, /at .*\.ts:\d+/);
});

const internal = memoryLogger();
/** A secret-looking message an internal failure might carry. */
const SECRET = "connect failed: mongodb://admin:hunter2@10.0.0.5:27017/prod";

scenario(
  "an internal error answers a generic 500 without its message or stack; the log has both",
  SETTINGS,
  async (api, { service }) => {
    await api.create("notes", { text: "kept" });
    internal.clear();
    // A store that fails the way a broken driver would: a real Error, with a stack.
    const restore = stubOperation(service.store, "notes", "find", () => {
      return Promise.reject(new Error(SECRET));
    });
    try {
      for (const path of ["notes", 'notes?where={"text":"kept"}']) {
        const res = await api.get(path);
        assert.equal(res.status, 500, res.text);
        assert.deepEqual(res.body, GENERIC_500);
        assert.ok(!res.text.includes("hunter2") && !res.text.includes("connect failed"), res.text);
        assert.doesNotMatch(res.text, /\bat .*\.ts:\d+|Error:/);
      }
    } finally {
      restore();
    }
    // The store's record and the 500's, each with the stack and the request's fields.
    const errors = internal.records.filter((r) => r.level === "error");
    assert.deepEqual(errors.map((r) => r.message), [
      "database error in find on notes",
      "unhandled error",
      "database error in find on notes",
      "unhandled error",
    ]);
    for (const record of errors) {
      assert.match(String(record.error), /^Error: connect failed: .*\n\s+at /);
      assert.match(String(record.requestid), /^[0-9a-f-]{36}$/);
      assert.match(String(record.url), /\/notes/);
    }
  },
  { logger: internal.logger },
);

scenario("a query the store refuses is 400, not 500", {
  ...SETTINGS,
  DOMAIN: { notes: { schema: { text: { type: "string" }, n: { type: "integer" } } } },
}, async (api) => {
  await api.create("notes", { text: "a", n: 1 });
  assertError(await api.get('notes?where={"n": {"$in": 5}}'), 400);
  assertError(await api.get('notes?where={"n": {"$size": "x"}}'), 400);
});

scenario(
  "a body that is not JSON is a 400 in our words, with where parsing stopped",
  SETTINGS,
  async (
    api,
  ) => {
    const cases: Array<[string, string]> = [
      ['{"text": "x",}', "the request body is not valid JSON (at character 13)"],
      ["pa", "the request body is not valid JSON"],
      ['{"text": "x"', "the request body is not valid JSON (at character 12)"],
    ];
    for (const [text, message] of cases) {
      const res = await api.request("POST", "notes", {
        raw: text,
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body._error.message, message, text);
    }
    const latin1 = await api.request("POST", "notes", {
      raw: new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]),
      headers: { "content-type": "application/json" },
    });
    assert.equal(latin1.status, 400);
    assert.equal(
      latin1.body._error.message,
      "the request body is not valid JSON: it is not UTF-8 text",
    );
  },
);
