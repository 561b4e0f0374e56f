/**
 * `FileStore` on GridFS (the default `fs` bucket): uploads through the driver's upload
 * stream (its chunks are written as they fill, the files document last; a failed upload is
 * aborted, which removes its chunks). Downloads read the chunks of the asked range in
 * small batches, so one download holds a few chunks at a time: the driver's download
 * stream has no batch size, and its cursor's first batch is the server's default of 101
 * chunks (about 25 MiB).
 */
import { Buffer } from "node:buffer";
import { Binary, type Db, GridFSBucket, type GridFSFile, MongoRuntimeError } from "mongodb";
import { ObjectId } from "../../doc/bson.ts";
import type { ByteRange, Doc, FileInfo, FileStore, StoredFile } from "../store.ts";
import { translateError } from "./errors.ts";
import { noteTransferred } from "../../util/transfer.ts";

function toStoredFile(f: GridFSFile): StoredFile {
  const file: StoredFile = {
    id: f._id as ObjectId,
    filename: f.filename,
    contentType: (f.contentType as string | undefined) ?? "application/octet-stream",
    length: Number(f.length),
    uploadDate: f.uploadDate,
  };
  if (f.metadata) file.metadata = f.metadata as Doc;
  return file;
}

/** Chunks fetched per round trip of a download. */
const CHUNKS_PER_BATCH = 4;

/** GridFS-backed file storage. */
export class GridFsFileStore implements FileStore {
  private readonly bucket: GridFSBucket;
  private readonly db: Db;

  constructor(db: Db, private readonly secret?: string) {
    this.db = db;
    this.bucket = new GridFSBucket(db, { bucketName: "fs" });
  }

  put(data: Uint8Array, info: FileInfo): Promise<StoredFile> {
    return this.putStream(
      (async function* () {
        yield data;
      })(),
      info,
    );
  }

  async putStream(source: AsyncIterable<Uint8Array>, info: FileInfo): Promise<StoredFile> {
    const id = new ObjectId();
    // contentType at the top level of the files document is the classic GridFS layout
    // (what Eve and the mongofiles tools read), hence the deprecated option.
    const upload = this.bucket.openUploadStreamWithId(id, info.filename, {
      contentType: info.contentType,
      metadata: info.metadata,
    });
    // A write settles once its bytes are buffered, or stored when they filled a chunk.
    const write = (bytes: Uint8Array) =>
      new Promise<void>((resolve, reject) => {
        upload.write(
          Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          (error) => error ? reject(error) : resolve(),
        );
      });
    let sourceError: { error: unknown } | undefined;
    try {
      const pieces = source[Symbol.asyncIterator]();
      for (;;) {
        let step: IteratorResult<Uint8Array>;
        try {
          step = await pieces.next();
        } catch (error) {
          sourceError = { error };
          throw error;
        }
        if (step.done) break;
        if (step.value.byteLength > 0) await write(step.value);
      }
      await new Promise<void>((resolve, reject) => {
        upload.once("error", reject);
        upload.end(() => resolve());
      });
    } catch (error) {
      try {
        await upload.abort();
      } catch { /* already ended or aborted: nothing left to remove */ }
      if (sourceError) throw sourceError.error;
      throw translateError(error, this.secret);
    }
    if (upload.gridFSFile) return toStoredFile(upload.gridFSFile);
    const stored = await this.stat(id);
    if (!stored) throw translateError(new MongoRuntimeError("file vanished after upload"));
    return stored;
  }

  async stat(id: ObjectId): Promise<StoredFile | null> {
    try {
      const files = await this.bucket.find({ _id: id }, { limit: 1 }).toArray();
      return files.length > 0 ? toStoredFile(files[0]) : null;
    } catch (err) {
      throw translateError(err, this.secret);
    }
  }

  /**
   * Reads the file, or the inclusive range `[start, end]` (clamped to the file; an empty
   * range gives an empty array). The driver's `end` is exclusive.
   */
  async read(id: ObjectId, range?: ByteRange): Promise<Uint8Array | null> {
    const file = await this.stat(id);
    if (!file) return null;
    let start = 0;
    let end = file.length; // exclusive
    if (range) {
      start = Math.max(0, Math.floor(range.start));
      end = Math.min(file.length, Math.floor(range.end) + 1);
    }
    if (start >= end) return new Uint8Array(0);
    try {
      const options = range ? { start, end } : undefined;
      const stream = this.bucket.openDownloadStream(id, options);
      const chunks: Uint8Array[] = [];
      let total = 0;
      for await (const chunk of stream) {
        chunks.push(chunk as Uint8Array);
        total += (chunk as Uint8Array).byteLength;
      }
      if (chunks.length === 1) return new Uint8Array(chunks[0]);
      const out = new Uint8Array(total);
      let offset = 0;
      for (const chunk of chunks) {
        out.set(chunk, offset);
        offset += chunk.byteLength;
      }
      return out;
    } catch (err) {
      throw translateError(err, this.secret);
    }
  }

  async stream(id: ObjectId, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null> {
    let files: GridFSFile[];
    try {
      files = await this.bucket.find({ _id: id }, { limit: 1 }).toArray();
    } catch (err) {
      throw translateError(err, this.secret);
    }
    if (files.length === 0) return null;
    const length = Number(files[0].length);
    const chunkSize = files[0].chunkSize;
    const start = Math.max(0, Math.floor(range?.start ?? 0));
    const end = Math.min(length, Math.floor(range?.end ?? length - 1) + 1); // exclusive
    if (start >= end) return new ReadableStream({ start: (controller) => controller.close() });
    const last = Math.floor((end - 1) / chunkSize);
    let n = Math.floor(start / chunkSize);
    const cursor = this.db.collection("fs.chunks").find(
      { files_id: id, n: { $gte: n, $lte: last } },
      { sort: { n: 1 }, batchSize: CHUNKS_PER_BATCH },
    );
    const missing = () => new MongoRuntimeError(`file ${id.toHexString()} lacks chunk ${n}`);
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const chunk = await cursor.next();
          if (!chunk) {
            if (n <= last) throw missing();
            await cursor.close();
            return controller.close();
          }
          if (chunk.n !== n || !(chunk.data instanceof Binary)) throw missing();
          const data = chunk.data.buffer;
          const offset = n * chunkSize;
          n++;
          const from = Math.max(start, offset) - offset;
          const to = Math.min(end, offset + data.byteLength) - offset;
          controller.enqueue(data.subarray(from, Math.max(from, to)));
          noteTransferred(data.byteLength);
          if (n > last) {
            await cursor.close();
            controller.close();
          }
        } catch (err) {
          await cursor.close().catch(() => {});
          controller.error(translateError(err, this.secret));
        }
      },
      cancel: async () => {
        await cursor.close().catch(() => {});
      },
    });
  }

  async count(): Promise<number> {
    try {
      return await this.db.collection("fs.files").countDocuments({});
    } catch (err) {
      throw translateError(err, this.secret);
    }
  }

  /** Deletes the file; deleting a missing file is not an error. */
  async delete(id: ObjectId): Promise<void> {
    try {
      await this.bucket.delete(id);
    } catch (err) {
      if (err instanceof MongoRuntimeError && /file not found/i.test(err.message)) return;
      throw translateError(err, this.secret);
    }
  }
}
