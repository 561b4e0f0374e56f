/** The streaming multipart reader: order, budgets, file limits and failures mid-body. */
import assert from "node:assert/strict";
import {
  type FilePart,
  type MultipartOptions,
  readMultipart,
} from "../../src/http/body/multipart.ts";
import { HttpError } from "../../src/http/errors.ts";

const BOUNDARY = "unit-boundary-42";
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`;
const encoder = new TextEncoder();

type Part = { name: string; value: string | Uint8Array; filename?: string };

function body(parts: Part[], close = true): Uint8Array {
  const pieces: Uint8Array[] = [];
  for (const part of parts) {
    const file = part.filename ? `; filename="${part.filename}"` : "";
    pieces.push(encoder.encode(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"${file}\r\n` +
        (part.filename ? "Content-Type: application/octet-stream\r\n" : "") + "\r\n",
    ));
    pieces.push(typeof part.value === "string" ? encoder.encode(part.value) : part.value);
    pieces.push(encoder.encode("\r\n"));
  }
  if (close) pieces.push(encoder.encode(`--${BOUNDARY}--\r\n`));
  return new Uint8Array(pieces.flatMap((p) => [...p]));
}

/** A stream of `bytes` in pieces of `size`, then an error if `fail` is set. */
function stream(bytes: Uint8Array, size = 1000, fail = false): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) {
        return fail ? controller.error(new Error("connection reset")) : controller.close();
      }
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

/** A saver that keeps the bytes, slowly; records what it was given and what it finished. */
function keeper() {
  const saved: Array<{ part: FilePart; bytes: Uint8Array }> = [];
  const failed: unknown[] = [];
  const save = async (part: FilePart) => {
    const chunks: number[] = [];
    try {
      for await (const piece of part.bytes) {
        chunks.push(...piece);
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    } catch (error) {
      failed.push(error);
      throw error;
    }
    const bytes = new Uint8Array(chunks);
    saved.push({ part, bytes });
    return { file: part.filename, length: bytes.length };
  };
  return { saved, failed, save };
}

function options(extra: Partial<MultipartOptions> = {}): MultipartOptions {
  return {
    fieldBytes: 1000,
    fileBytes: 50_000,
    parts: 10,
    field: (_key, value) => value,
    wants: () => true,
    ...extra,
  };
}

const random = (n: number) => {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 2654435761) >>> 24;
  return out;
};

Deno.test("multipart: fields and files in order, files streamed whole", async () => {
  const data = random(30_000);
  const { saved, save } = keeper();
  const entries = await readMultipart(
    stream(
      body([
        { name: "a", value: "1" },
        { name: "f", value: data, filename: "f.bin" },
        { name: "a", value: "2" },
      ]),
      777,
    ),
    TYPE,
    options({ saveFile: save }),
  );
  assert.deepEqual(entries, [
    { key: "a", value: "1" },
    { key: "f", value: { file: "f.bin", length: 30_000 } },
    { key: "a", value: "2" },
  ]);
  assert.deepEqual(saved[0].bytes, data);
  assert.equal(saved[0].part.contentType, "application/octet-stream");
});

Deno.test("multipart: budgets are 413 naming their setting", async () => {
  const cases: Array<[Part[], Partial<MultipartOptions>, RegExp]> = [
    [
      Array.from({ length: 4 }, (_, i) => ({ name: `p${i}`, value: "v" })),
      { parts: 3 },
      /MAX_MULTIPART_PARTS/,
    ],
    [
      [{ name: "a", value: "x".repeat(600) }, { name: "b", value: "y".repeat(600) }],
      {},
      /MAX_BODY_SIZE/,
    ],
    [[{ name: "f", value: random(60_000), filename: "big" }], {}, /MAX_FILE_SIZE/],
  ];
  for (const [parts, extra, message] of cases) {
    const { save } = keeper();
    await assert.rejects(
      readMultipart(stream(body(parts)), TYPE, options({ saveFile: save, ...extra })),
      (error) => error instanceof HttpError && error.status === 413 && message.test(error.message),
    );
  }
});

Deno.test("multipart: a failure mid-file fails the save before the read rejects", async () => {
  const truncated = body([{ name: "f", value: random(20_000), filename: "f" }], false);
  for (const [source, status] of [[stream(truncated), 400], [stream(truncated, 1000, true), 400]]) {
    const { saved, failed, save } = keeper();
    await assert.rejects(
      readMultipart(source as ReadableStream<Uint8Array>, TYPE, options({ saveFile: save })),
      (error) => error instanceof HttpError && error.status === status,
    );
    assert.equal(saved.length, 0);
    assert.equal(failed.length, 1, "the saver saw its part fail");
  }
});

Deno.test("multipart: skipped files are not saved; no saver refuses files", async () => {
  const parts = [
    { name: "f", value: "one", filename: "1" },
    { name: "f", value: "two", filename: "2" },
  ];
  const { saved, save } = keeper();
  const seen = new Set<string>();
  const entries = await readMultipart(
    stream(body(parts)),
    TYPE,
    options({
      saveFile: save,
      wants: (key) => !seen.has(key) && !!seen.add(key),
    }),
  );
  assert.equal(entries.length, 1);
  assert.equal(saved.length, 1);
  await assert.rejects(
    readMultipart(stream(body(parts)), TYPE, options()),
    (error) => error instanceof HttpError && error.status === 400,
  );
  await assert.rejects(
    readMultipart(stream(body(parts)), "multipart/form-data", options()),
    (error) => error instanceof HttpError && /boundary/.test(error.message),
  );
});
