/**
 * The multipart reader reuses one body buffer (BYOB) and copies file data out before each
 * next read: files must come out byte-exact whatever the chunking (boundaries and
 * boundary-like data across chunk edges), with several files per body, and with savers and
 * stores that are slow to take each piece.
 */
import assert from "node:assert/strict";
import { bodyChunks } from "../../src/http/body/body_chunks.ts";
import {
  type FilePart,
  type MultipartOptions,
  readMultipart,
} from "../../src/http/body/multipart.ts";
import { openEmbeddedStore } from "../../src/store/embedded/mod.ts";
import type { FileStore } from "../../src/store/store.ts";
import { byteStream, rawMultipart, type RawPart, sha256, trickyBytes } from "../support/media.ts";

const BOUNDARY = "reuse-boundary-9f3c";
const TYPE = `multipart/form-data; boundary=${BOUNDARY}`;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function options(extra: Partial<MultipartOptions> = {}): MultipartOptions {
  return {
    fieldBytes: 10_000,
    fileBytes: 8 * 1024 * 1024,
    parts: 20,
    field: (_key, value) => value,
    wants: () => true,
    ...extra,
  };
}

/** A saver that holds each piece across a timer before copying it (allowed: it has not asked for the next). */
function slowKeeper(ms: number) {
  const saved = new Map<string, Uint8Array>();
  const save = async (part: FilePart) => {
    const pieces: Uint8Array[] = [];
    for await (const piece of part.bytes) {
      await delay(ms);
      pieces.push(piece.slice());
    }
    const bytes = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
    let at = 0;
    for (const piece of pieces) {
      bytes.set(piece, at);
      at += piece.byteLength;
    }
    saved.set(part.field, bytes);
    return bytes.byteLength;
  };
  return { saved, save };
}

function files(sizes: number[]): RawPart[] {
  const parts: RawPart[] = [{ name: "title", value: "several files" }];
  sizes.forEach((size, i) => {
    parts.push({ name: `f${i}`, value: trickyBytes(size, BOUNDARY, i + 7), filename: `f${i}.bin` });
    parts.push({ name: `after${i}`, value: `\r\n--${BOUNDARY.slice(0, 6)}` });
  });
  return parts;
}

async function roundTrip(parts: RawPart[], sizes: number[], ms = 0) {
  const { saved, save } = slowKeeper(ms);
  const entries = await readMultipart(
    byteStream(rawMultipart(parts, { boundary: BOUNDARY }), sizes),
    TYPE,
    options({ saveFile: save }),
  );
  for (const part of parts) {
    const entry = entries.find((e) => e.key === part.name);
    assert.ok(entry, `${part.name} read`);
    if (!part.filename) assert.equal(entry.value, part.value);
    else {
      const value = part.value as Uint8Array;
      assert.equal(entry.value, value.byteLength);
      assert.equal(await sha256(saved.get(part.name)!), await sha256(value), `${part.name} exact`);
    }
  }
}

Deno.test("body chunks: a byte stream is read into one reused buffer, others as given", async () => {
  const bytes = trickyBytes(200_000, BOUNDARY);
  const reused = bodyChunks(byteStream(bytes, [70_000, 3]), { bufferBytes: 4096 });
  assert.equal(reused.reused, true);
  const plain = bodyChunks(
    new ReadableStream({
      start(controller) {
        controller.enqueue(bytes.slice(0, 1000));
        controller.enqueue(bytes.slice(1000));
        controller.close();
      },
    }),
  );
  assert.equal(plain.reused, false);
  for (const chunks of [reused, plain]) {
    const copies: Uint8Array[] = [];
    for (let chunk = await chunks.read(); chunk; chunk = await chunks.read()) {
      copies.push(chunk.slice());
    }
    chunks.close({ cancel: false });
    assert.equal(await sha256(new Uint8Array(copies.flatMap((c) => [...c]))), await sha256(bytes));
  }
});

Deno.test("multipart reuse: boundaries across every chunk edge, byte-exact", async () => {
  const parts = files([0, 1, 97, 1500]);
  // Every piece size up to past the boundary's length puts each boundary across edges.
  for (let size = 1; size <= BOUNDARY.length + 8; size++) await roundTrip(parts, [size]);
  await roundTrip(parts, [5, 1, 64, 3, 4096], 1);
});

Deno.test("multipart reuse: several large files, uneven chunks, a slow saver", async () => {
  await roundTrip(
    files([700_000, 1024 * 1024 + 13, 77, 300_001]),
    [65_536, 1, 4093, 17, 30_000],
    1,
  );
});

/** A file store whose writes are slow: each piece waits before reaching the store. */
function delayed(inner: FileStore, ms: number): FileStore {
  return {
    put: (data, info) => inner.put(data, info),
    stat: (id) => inner.stat(id),
    read: (id, range) => inner.read(id, range),
    stream: (id, range) => inner.stream(id, range),
    delete: (id) => inner.delete(id),
    count: () => inner.count(),
    putStream(source, info) {
      return inner.putStream(
        (async function* () {
          for await (const piece of source) {
            await delay(ms);
            yield piece;
          }
        })(),
        info,
      );
    },
  };
}

Deno.test("multipart reuse: a slow store stores every file byte-exact", async () => {
  const dir = await Deno.makeTempDir({ prefix: "multipart_reuse_" });
  const store = await openEmbeddedStore(dir);
  try {
    const files = delayed(store.files, 2);
    const parts = [
      { name: "a", value: trickyBytes(900_000, BOUNDARY, 3), filename: "a.bin" },
      { name: "b", value: trickyBytes(333_333, BOUNDARY, 4), filename: "b.bin" },
    ];
    const entries = await readMultipart(
      byteStream(rawMultipart(parts, { boundary: BOUNDARY }), [65_536, 777]),
      TYPE,
      options({
        saveFile: (part) =>
          files.putStream(part.bytes, { filename: part.filename, contentType: "x/y" }),
      }),
    );
    assert.equal(entries.length, 2);
    for (const [i, entry] of entries.entries()) {
      const stored = entry.value as { id: Parameters<FileStore["read"]>[0]; length: number };
      const bytes = await files.read(stored.id);
      assert.ok(bytes);
      assert.equal(await sha256(bytes), await sha256(parts[i].value), `${parts[i].name} exact`);
    }
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
