/** The harness' answer checker (tests/support/described.ts) refuses what a description does not allow. */
import assert from "node:assert/strict";
import { DescribedApi } from "../support/described.ts";

const DOC = {
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  servers: [{ url: "http://127.0.0.1:1/api" }],
  paths: {
    "/people/{_id}": {
      get: {
        parameters: [{ name: "_id", in: "path", required: true, schema: { pattern: "^\\d+$" } }],
        responses: {
          "200": {
            description: "ok",
            headers: { ETag: { required: true, schema: { type: "string" } } },
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: { name: { type: "string" } },
                  required: ["name"],
                },
              },
            },
          },
          "4XX": { $ref: "#/components/responses/Error" },
        },
      },
    },
  },
  components: {
    schemas: {
      Error: { type: "object", required: ["_status"], properties: { _status: { const: "ERR" } } },
    },
    responses: {
      Error: {
        description: "error",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      },
    },
  },
};

function exchange(status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = body === undefined ? "" : JSON.stringify(body);
  return {
    method: "GET",
    url: new URL("http://127.0.0.1:1/api/people/1"),
    status,
    headers: new Headers({ "content-type": "application/json", ...headers }),
    body,
    text,
  };
}

Deno.test("described: an answer the description allows has no problem", () => {
  const api = new DescribedApi(DOC);
  assert.deepEqual(api.check(exchange(200, { name: "ann" }, { etag: '"x"' })), []);
  assert.deepEqual(api.check(exchange(404, { _status: "ERR" })), []);
});

Deno.test("described: status, body, media type and required headers are checked", () => {
  const api = new DescribedApi(DOC);
  const problems = (x: ReturnType<typeof exchange>) => api.check(x).join("\n");
  assert.match(problems(exchange(201, { name: "ann" }, { etag: '"x"' })), /status not described/);
  assert.match(problems(exchange(200, { nom: "ann" }, { etag: '"x"' })), /body does not match/);
  assert.match(problems(exchange(200, { name: "ann" })), /required header ETag missing/);
  assert.match(problems(exchange(404, { error: 1 })), /body does not match/);
  const xml = exchange(200, "<r/>", { etag: '"x"', "content-type": "application/xml" });
  assert.match(problems(xml), /media type "application\/xml" not among application\/json/);
});

Deno.test("described: paths outside the description are not its to judge", () => {
  const api = new DescribedApi(DOC);
  const other = { ...exchange(503, { status: "down" }), url: new URL("http://127.0.0.1:1/ready") };
  assert.deepEqual(api.check(other), []);
  const head = { ...exchange(200, undefined), method: "HEAD", text: "" };
  assert.match(api.check(head).join(), /a HEAD answer the description lacks/);
});
