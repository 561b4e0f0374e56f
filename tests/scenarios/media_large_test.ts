/**
 * Large uploads come back byte-exact: the service reads bodies into one reused buffer and
 * copies file data out before reading on, so several multi-MiB files with boundary-like
 * data, sent in uneven pieces, are downloaded from the media endpoint unchanged.
 */
import assert from "node:assert/strict";
import { scenario } from "../support/harness.ts";
import { fileCount, rawMultipart, type RawPart, sha256, trickyBytes } from "../support/media.ts";

const BOUNDARY = "large-upload-5e21";
const SETTINGS = {
  RETURN_MEDIA_AS_URL: true,
  MAX_FILE_SIZE: 16 * 1024 * 1024,
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: {
    files: {
      schema: {
        name: { type: "string" },
        a: { type: "media" },
        b: { type: "media" },
        c: { type: "media" },
      },
    },
  },
};

/** `bytes` as a request body stream in pieces whose sizes cycle through `sizes`. */
function pieces(bytes: Uint8Array, sizes: number[]): ReadableStream<Uint8Array> {
  let at = 0;
  let turn = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      const size = sizes[turn++ % sizes.length];
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

scenario("several large files in one body come back byte-exact", SETTINGS, async (api, running) => {
  const parts: RawPart[] = [
    { name: "a", value: trickyBytes(3 * 1024 * 1024 + 7, BOUNDARY, 1), filename: "a.bin" },
    { name: "name", value: `almost\r\n--${BOUNDARY.slice(0, 9)}` },
    { name: "b", value: trickyBytes(1024 * 1024 - 1, BOUNDARY, 2), filename: "b.bin" },
    { name: "c", value: trickyBytes(65_537, BOUNDARY, 3), filename: "c.bin" },
  ];
  const res = await api.request("POST", "files", {
    raw: pieces(rawMultipart(parts, { boundary: BOUNDARY }), [65_536, 1, 1021, 40_000, 17]),
    headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
  });
  assert.equal(res.status, 201, res.text);
  const item = await api.get(`files/${res.body._id}`);
  assert.equal(item.body.name, parts[1].value);
  for (const part of parts.filter((p) => p.filename)) {
    const download = await fetch(new URL(item.body[part.name].replace(/^\//, ""), running.url));
    assert.equal(download.status, 200);
    const bytes = new Uint8Array(await download.arrayBuffer());
    assert.equal(bytes.byteLength, (part.value as Uint8Array).byteLength, part.name);
    assert.equal(await sha256(bytes), await sha256(part.value as Uint8Array), part.name);
  }
  assert.equal(await fileCount(running), 3);
});
