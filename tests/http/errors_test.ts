/** The one mapping of errors to statuses and bodies (src/http/errors.ts). */
import assert from "node:assert/strict";
import { HttpError, httpErrorOf } from "../../src/http/errors.ts";
import { ServiceError, type ServiceErrorKind } from "../../src/services/errors.ts";
import { checkSettings } from "../../src/settings/check.ts";
import { QueryError } from "../../src/query/errors.ts";
import {
  InvalidQueryError,
  PartialWriteError,
  QueryTimeoutError,
  StoreError,
} from "../../src/store/store.ts";
import { ObjectId } from "../../src/doc/bson.ts";

const { settings } = checkSettings({ VALIDATION_ERROR_STATUS: 400 });

Deno.test("http errors: each service error kind has its status", () => {
  const expected: Record<ServiceErrorKind, number> = {
    "bad-request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not-found": 404,
    "method-not-allowed": 405,
    "conflict": 409,
    "precondition-failed": 412,
    "too-large": 413,
    "unsupported-media-type": 415,
    "validation": 400, // VALIDATION_ERROR_STATUS
    "precondition-required": 428,
    "unavailable": 503,
  };
  for (const [kind, status] of Object.entries(expected)) {
    const http = httpErrorOf(new ServiceError(kind as ServiceErrorKind, "m"), settings);
    assert.equal(http?.status, status, kind);
    assert.equal(http?.message, "m");
  }
});

Deno.test("http errors: issues, body fields and headers are carried over", () => {
  const error = new ServiceError("validation", "bad", {
    issues: { name: "required field" },
    headers: { etag: '"x"' },
    cause: new Error("internal detail"),
  });
  const http = httpErrorOf(error, settings)!;
  assert.deepEqual(http.extra.body, { _issues: { name: "required field" } });
  assert.deepEqual(http.extra.headers, { etag: '"x"' });
  assert.ok(!JSON.stringify(http.extra).includes("internal detail"));
});

Deno.test("http errors: query and store errors", () => {
  assert.equal(httpErrorOf(new QueryError("where: bad", "where"), settings)?.status, 400);
  const refused = httpErrorOf(
    new InvalidQueryError("MongoDB: unknown operator: $foo", { reason: "unknown operator: $foo" }),
    settings,
  )!;
  assert.equal(refused.status, 400);
  assert.equal(refused.message, "The database refused this query: unknown operator: $foo");
  const engine = httpErrorOf(new InvalidQueryError("mingo: internal text"), settings)!;
  assert.equal(engine.status, 400);
  assert.doesNotMatch(engine.message, /mingo/);
  assert.equal(httpErrorOf(new QueryTimeoutError("slow"), settings)?.status, 503);
  assert.equal(httpErrorOf(new StoreError("MongoDB: down"), settings)?.status, 503);
  const id = new ObjectId();
  const partial = httpErrorOf(
    new PartialWriteError([id], { cause: new Error("dup"), cleanup: new Error("reset") }),
    settings,
  )!;
  assert.equal(partial.status, 503);
  assert.match(
    partial.message,
    new RegExp(`removing the ones that were failed too.*${id.toHexString()}`),
  );
  const hook = new HttpError(418, "teapot");
  assert.equal(httpErrorOf(hook, settings), hook);
  assert.equal(httpErrorOf(new TypeError("a bug"), settings), null);
});
