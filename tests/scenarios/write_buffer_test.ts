/**
 * The write buffer's padding (src/http/write_buffer.ts) over real connections, on each store:
 * the second answer of a keep-alive connection carries `X-Padding` of WRITE_BUFFER_BYTES and
 * is otherwise the answer it would be; the first and later ones, an answer to a request that
 * asks to close the connection, and every answer with WRITE_BUFFER_BYTES 0 carry none.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { closeQuietly, readAnswer } from "../support/net.ts";

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { people: { schema: { name: { type: "string" } } } },
};

/** The answers to `requests` sent in turn over one connection to `url`: head fields and body. */
async function exchange(url: string, requests: string[]) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(url).port) });
  const answers: Array<{ fields: Map<string, string>; body: string }> = [];
  try {
    for (const request of requests) {
      await conn.write(new TextEncoder().encode(request));
      const { text, complete } = await readAnswer(conn, 5000);
      assert.ok(complete, `no complete answer to ${request}: ${text}`);
      const end = text.indexOf("\r\n\r\n");
      const fields = new Map(
        text.slice(0, end).split("\r\n").slice(1).map((line) => {
          const at = line.indexOf(":");
          return [line.slice(0, at).toLowerCase(), line.slice(at + 1).trim()];
        }),
      );
      answers.push({ fields, body: text.slice(end + 4) });
    }
  } finally {
    closeQuietly(conn);
  }
  return answers;
}

const get = (path: string, extra = "") => `GET /${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;

scenario("a keep-alive connection's second answer carries the padding, once", {
  ...SETTINGS,
  WRITE_BUFFER_BYTES: 1000,
}, async (api, running) => {
  const created = await api.create("people", { name: "Ada" });
  const path = `people/${created._id}`;
  const answers = await exchange(running.url, [get(path), get(path), get(path), get("people")]);
  assert.deepEqual(answers.map((a) => a.fields.get("x-padding")?.length), [
    undefined,
    1000,
    undefined,
    undefined,
  ]);
  assert.equal(answers[1].fields.get("x-padding"), ".".repeat(1000));
  // Otherwise the same answer as the first and third: body and every other field.
  const rest = (a: (typeof answers)[number]) =>
    [...a.fields].filter(([name]) => name !== "x-padding" && name !== "date");
  for (const other of [answers[0], answers[2]]) {
    assert.deepEqual(rest(answers[1]), rest(other));
    assert.equal(answers[1].body, other.body);
  }
  assert.equal(JSON.parse(answers[1].body)._id, created._id);
  // Another connection starts over; a request asking to close is not padded.
  const closing = await exchange(running.url, [get(path), get(path, "Connection: close\r\n")]);
  assert.deepEqual(closing.map((a) => a.fields.has("x-padding")), [false, false]);
  // Errors are answers like any other.
  const missing = await exchange(running.url, [get("nowhere"), get("nowhere")]);
  assert.deepEqual(missing.map((a) => a.fields.get("x-padding")?.length), [undefined, 1000]);
});

scenario("WRITE_BUFFER_BYTES 0: no answer is padded", {
  ...SETTINGS,
  WRITE_BUFFER_BYTES: 0,
}, async (api, running) => {
  const created = await api.create("people", { name: "Ada" });
  const path = `people/${created._id}`;
  const answers = await exchange(running.url, [get(path), get(path), get(path)]);
  assert.deepEqual(answers.map((a) => a.fields.has("x-padding")), [false, false, false]);
});
