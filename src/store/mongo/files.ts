/**
 * `FileStore` on GridFS (the default `fs` bucket).
 */
import { Buffer } from "node:buffer";
import { type Db, GridFSBucket, type GridFSFile, MongoRuntimeError } from "mongodb";
import { ObjectId } from "../bson.ts";
import type { Doc, FileStore, StoredFile } from "../store.ts";
import { translateError } from "./errors.ts";

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

/** GridFS-backed file storage. */
export class GridFsFileStore implements FileStore {
  private readonly bucket: GridFSBucket;

  constructor(db: Db, private readonly secret?: string) {
    this.bucket = new GridFSBucket(db, { bucketName: "fs" });
  }

  async put(
    data: Uint8Array,
    info: { filename: string; contentType: string; metadata?: Doc },
  ): Promise<StoredFile> {
    const id = new ObjectId();
    try {
      // contentType at the top level of the files document is the classic GridFS layout
      // (what Eve and the mongofiles tools read), hence the deprecated option.
      const upload = this.bucket.openUploadStreamWithId(id, info.filename, {
        contentType: info.contentType,
        metadata: info.metadata,
      });
      await new Promise<void>((resolve, reject) => {
        upload.once("finish", () => resolve());
        upload.once("error", reject);
        upload.end(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      });
      if (upload.gridFSFile) return toStoredFile(upload.gridFSFile);
    } catch (err) {
      throw translateError(err, this.secret);
    }
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
  async read(id: ObjectId, range?: { start: number; end: number }): Promise<Uint8Array | null> {
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
