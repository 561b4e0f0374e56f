/**
 * A body read before the body parser (HMAC authentication signs it): the parser takes the
 * bytes kept for the request (src/util/read_body.ts) and does not read the stream again, for
 * JSON and multipart bodies alike, and still holds them to MAX_BODY_SIZE.
 */
import assert from "node:assert/strict";
import { readBody } from "../../src/http/body/mod.ts";
import { HttpError } from "../../src/http/errors.ts";
import { keepBody } from "../../src/util/read_body.ts";

const budget = {
  maxFields: 100,
  maxBodyFields: 100,
  maxListLength: 100,
  maxDepth: 10,
  maxDocuments: 10,
  maxParts: 10,
};
const options = {
  limit: 1000,
  multipartFieldsAsJson: false,
  budget,
  collapseMultiKeys: false,
  maxFileSize: null,
};

/** A request whose body has been read to the end, its bytes kept as the reader keeps them. */
async function readFirst(type: string, text: string): Promise<Request> {
  const request = new Request("http://localhost/people", {
    method: "POST",
    headers: { "content-type": type },
    body: text,
  });
  const reader = request.body!.getReader();
  const chunks: number[] = [];
  for (let step = await reader.read(); !step.done; step = await reader.read()) {
    chunks.push(...step.value);
  }
  const bytes = new Uint8Array(chunks);
  // The stream is spent: the parser can only have the kept bytes.
  assert.equal(request.body!.locked, true);
  keepBody(request, bytes);
  return request;
}

Deno.test("a JSON body read before the parser reaches it from the kept bytes", async () => {
  const request = await readFirst("application/json", JSON.stringify({ name: "Ann" }));
  assert.deepEqual(await readBody(request, options), { name: "Ann" });
});

Deno.test("a multipart body read before the parser is parsed from the kept bytes", async () => {
  const boundary = "kept-42";
  const text = `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nAnn\r\n` +
    `--${boundary}--\r\n`;
  const request = await readFirst(`multipart/form-data; boundary=${boundary}`, text);
  assert.deepEqual(await readBody(request, options), { name: "Ann" });
});

Deno.test("kept bytes are held to the body size limit", async () => {
  const request = await readFirst("application/json", JSON.stringify({ name: "x".repeat(2000) }));
  await assert.rejects(
    readBody(request, options),
    (error) => error instanceof HttpError && error.status === 413,
  );
});
