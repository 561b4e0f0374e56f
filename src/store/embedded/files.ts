/**
 * File storage of the embedded store: one SQLite row per file for its description, and its
 * bytes in fixed-size chunks (`file_chunks`), so reading a range touches only the chunks
 * it covers. Files stored before chunking keep their bytes in `files.data` and are read
 * from there.
 */
import type { Doc, FileStore, StoredFile } from "../store.ts";
import { ObjectId } from "../bson.ts";
import { decodeDoc, encodeDoc } from "./codec.ts";
import type { Database } from "./sqlite.ts";
import type { StatementSync } from "node:sqlite";

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
  }

  put(
    data: Uint8Array,
    info: { filename: string; contentType: string; metadata?: Doc },
  ): Promise<StoredFile> {
    this.#db.assertOpen();
    const file: StoredFile = {
      id: new ObjectId(),
      filename: info.filename,
      contentType: info.contentType,
      length: data.byteLength,
      // Millisecond precision, as stored.
      uploadDate: new Date(Date.now()),
    };
    if (info.metadata) file.metadata = decodeDoc(encodeDoc(info.metadata));
    this.#db.transaction(() => {
      const key = file.id.toHexString();
      this.#insert.run(
        key,
        file.filename,
        file.contentType,
        file.length,
        file.uploadDate.getTime(),
        info.metadata ? encodeDoc(info.metadata) : null,
        EMPTY,
      );
      for (let n = 0; n * CHUNK < data.byteLength; n++) {
        this.#insertChunk.run(key, n, data.subarray(n * CHUNK, (n + 1) * CHUNK));
      }
    });
    return Promise.resolve(file);
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
    if (row.metadata !== null) file.metadata = decodeDoc(row.metadata);
    return Promise.resolve(file);
  }

  read(id: ObjectId, range?: { start: number; end: number }): Promise<Uint8Array | null> {
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
