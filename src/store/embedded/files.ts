/**
 * File storage of the embedded store: one SQLite row per file for its description, and its
 * bytes in fixed-size chunks (`file_chunks`), so reading a range touches only the chunks
 * it covers. Files stored before chunking keep their bytes in `files.data` and are read
 * from there.
 *
 * A streamed upload writes each chunk as it fills (group commits, like document writes)
 * and its `files` row last, in one more write: until then the chunks belong to no file and
 * nothing reads them. A failed upload removes its chunks; chunks a crash left without a
 * `files` row are removed when the store opens.
 */
import type { ByteRange, FileInfo, FileStore, StoredFile } from "../store.ts";
import { ObjectId } from "../../doc/bson.ts";
import { decodeDoc, encodeDoc } from "./codec.ts";
import type { Database } from "./sqlite.ts";
import type { StatementSync } from "node:sqlite";
import { noteTransferred } from "../../util/transfer.ts";

/** Bytes per stored chunk (as GridFS's default). */
const CHUNK = 255 * 1024;
const EMPTY = new Uint8Array(0);

interface FileRow {
  id: string;
  filename: string;
  content_type: string;
  length: number;
  upload_date: number;
  metadata: string | null;
}

/** The embedded implementation of {@link FileStore}. */
export class EmbeddedFileStore implements FileStore {
  readonly #db: Database;
  readonly #insert: StatementSync;
  readonly #stat: StatementSync;
  readonly #readRange: StatementSync;
  readonly #delete: StatementSync;
  readonly #insertChunk: StatementSync;
  readonly #readChunks: StatementSync;
  readonly #deleteChunks: StatementSync;
  readonly #count: StatementSync;

  constructor(db: Database) {
    this.#db = db;
    const p = (sql: string) => db.db.prepare(sql);
    this.#insert = p(
      "INSERT INTO files (id, filename, content_type, length, upload_date, metadata, data) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    this.#stat = p(
      "SELECT id, filename, content_type, length, upload_date, metadata FROM files WHERE id = ?",
    );
    // substr() on a BLOB counts bytes, 1-based.
    this.#readRange = p("SELECT substr(data, ?, ?) AS data FROM files WHERE id = ?");
    this.#delete = p("DELETE FROM files WHERE id = ?");
    this.#insertChunk = p("INSERT INTO file_chunks (file_id, n, data) VALUES (?, ?, ?)");
    this.#readChunks = p(
      "SELECT n, data FROM file_chunks WHERE file_id = ? AND n BETWEEN ? AND ? ORDER BY n",
    );
    this.#deleteChunks = p("DELETE FROM file_chunks WHERE file_id = ?");
    this.#count = p("SELECT count(*) AS n FROM files");
    // Chunks of uploads a crash interrupted (no `files` row was written for them).
    db.db.exec("DELETE FROM file_chunks WHERE file_id NOT IN (SELECT id FROM files)");
  }

  put(data: Uint8Array, info: FileInfo): Promise<StoredFile> {
    this.#db.assertOpen();
    const file = describe(info, { length: data.byteLength, exactLongs: this.#db.exactLongs });
    this.#db.transaction(() => {
      const key = file.id.toHexString();
      this.#insertRow(file, info);
      for (let n = 0; n * CHUNK < data.byteLength; n++) {
        this.#insertChunk.run(key, n, data.subarray(n * CHUNK, (n + 1) * CHUNK));
      }
    });
    return Promise.resolve(file);
  }

  async putStream(source: AsyncIterable<Uint8Array>, info: FileInfo): Promise<StoredFile> {
    this.#db.assertOpen();
    const id = new ObjectId();
    const key = id.toHexString();
    const buffer = new Uint8Array(CHUNK);
    let filled = 0;
    let n = 0;
    let length = 0;
    // Each write waits for its group commit: the upload goes no faster than the disk.
    const flush = () =>
      this.#db.grouped(() => this.#insertChunk.run(key, n++, buffer.subarray(0, filled)));
    try {
      for await (const piece of source) {
        length += piece.byteLength;
        let at = 0;
        while (at < piece.byteLength) {
          const take = Math.min(CHUNK - filled, piece.byteLength - at);
          buffer.set(piece.subarray(at, at + take), filled);
          filled += take;
          at += take;
          if (filled === CHUNK) {
            await flush();
            filled = 0;
          }
        }
      }
      if (filled > 0) await flush();
      const file = describe(info, { length, id, exactLongs: this.#db.exactLongs });
      await this.#db.grouped(() => this.#insertRow(file, info));
      return file;
    } catch (error) {
      try {
        if (!this.#db.closed) await this.#db.grouped(() => this.#deleteChunks.run(key));
      } catch { /* the store is failing: the next open removes the chunks */ }
      throw error;
    }
  }

  #insertRow(file: StoredFile, info: FileInfo): void {
    this.#insert.run(
      file.id.toHexString(),
      file.filename,
      file.contentType,
      file.length,
      file.uploadDate.getTime(),
      info.metadata ? encodeDoc(info.metadata) : null,
      EMPTY,
    );
  }

  stat(id: ObjectId): Promise<StoredFile | null> {
    this.#db.assertOpen();
    const row = this.#stat.get(id.toHexString()) as FileRow | undefined;
    if (!row) return Promise.resolve(null);
    const file: StoredFile = {
      id: ObjectId.createFromHexString(row.id),
      filename: row.filename,
      contentType: row.content_type,
      length: row.length,
      uploadDate: new Date(row.upload_date),
    };
    if (row.metadata !== null) {
      file.metadata = decodeDoc(row.metadata, { exactLongs: this.#db.exactLongs });
    }
    return Promise.resolve(file);
  }

  read(id: ObjectId, range?: ByteRange): Promise<Uint8Array | null> {
    this.#db.assertOpen();
    const key = id.toHexString();
    const row = this.#stat.get(key) as FileRow | undefined;
    if (!row) return Promise.resolve(null);
    const start = Math.max(0, Math.floor(range?.start ?? 0));
    const end = Math.min(row.length - 1, Math.floor(range?.end ?? row.length - 1));
    if (end < start) return Promise.resolve(new Uint8Array(0));
    const chunks = this.#readChunks.all(
      key,
      Math.floor(start / CHUNK),
      Math.floor(end / CHUNK),
    ) as Array<{ n: number; data: Uint8Array }>;
    if (chunks.length === 0) return Promise.resolve(this.#readLegacy(key, start, end));
    const out = new Uint8Array(end - start + 1);
    for (const chunk of chunks) {
      const offset = chunk.n * CHUNK;
      const from = Math.max(start, offset) - offset;
      const to = Math.min(end + 1, offset + chunk.data.byteLength) - offset;
      if (to > from) out.set(chunk.data.subarray(from, to), offset + from - start);
    }
    return Promise.resolve(out);
  }

  /** Bytes of a file stored before chunking (all in `files.data`). */
  #readLegacy(key: string, start: number, end: number): Uint8Array {
    const row = this.#readRange.get(start + 1, end - start + 1, key) as
      | { data: Uint8Array | null }
      | undefined;
    return row?.data ?? new Uint8Array(0);
  }

  async stream(id: ObjectId, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null> {
    const file = await this.stat(id);
    if (!file) return null;
    let next = Math.max(0, Math.floor(range?.start ?? 0));
    const end = Math.min(file.length - 1, Math.floor(range?.end ?? file.length - 1));
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (next > end) return controller.close();
        // Up to the end of the stored chunk `next` falls in: one row per pull.
        const last = Math.min(end, (Math.floor(next / CHUNK) + 1) * CHUNK - 1);
        const bytes = await this.read(id, { start: next, end: last });
        if (!bytes || bytes.byteLength === 0) {
          return controller.error(new Error(`file ${id.toHexString()} was deleted while read`));
        }
        next += bytes.byteLength;
        controller.enqueue(bytes);
        noteTransferred(bytes.byteLength);
      },
    });
  }

  count(): Promise<number> {
    this.#db.assertOpen();
    return Promise.resolve(Number((this.#count.get() as { n: number }).n));
  }

  delete(id: ObjectId): Promise<void> {
    this.#db.assertOpen();
    const key = id.toHexString();
    this.#db.transaction(() => {
      this.#delete.run(key);
      this.#deleteChunks.run(key);
    });
    return Promise.resolve();
  }
}

/**
 * The description of a new file of `length` bytes, its metadata as it will read back from
 * the database (`exactLongs`: the database's reading of 64-bit integers).
 */
function describe(
  info: FileInfo,
  { length, id = new ObjectId(), exactLongs }: {
    length: number;
    id?: ObjectId;
    exactLongs: boolean;
  },
): StoredFile {
  const file: StoredFile = {
    id,
    filename: info.filename,
    contentType: info.contentType,
    length,
    // Millisecond precision, as stored.
    uploadDate: new Date(Date.now()),
  };
  if (info.metadata) file.metadata = decodeDoc(encodeDoc(info.metadata), { exactLongs });
  return file;
}
