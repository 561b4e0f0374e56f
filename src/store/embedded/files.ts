/** File storage of the embedded store: one SQLite row per file, bytes in a BLOB. */
import type { Doc, FileStore, StoredFile } from "../store.ts";
import { ObjectId } from "../bson.ts";
import { decodeDoc, encodeDoc } from "./codec.ts";
import type { Database } from "./sqlite.ts";
import type { StatementSync } from "node:sqlite";

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
  readonly #readAll: StatementSync;
  readonly #readRange: StatementSync;
  readonly #delete: StatementSync;

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
    this.#readAll = p("SELECT data FROM files WHERE id = ?");
    // substr() on a BLOB counts bytes, 1-based.
    this.#readRange = p("SELECT substr(data, ?, ?) AS data FROM files WHERE id = ?");
    this.#delete = p("DELETE FROM files WHERE id = ?");
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
    this.#db.transaction(() =>
      this.#insert.run(
        file.id.toHexString(),
        file.filename,
        file.contentType,
        file.length,
        file.uploadDate.getTime(),
        info.metadata ? encodeDoc(info.metadata) : null,
        data,
      )
    );
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
    let row: { data: Uint8Array | null } | undefined;
    if (range) {
      const start = Math.max(0, Math.floor(range.start));
      const length = Math.floor(range.end) - start + 1;
      row = this.#readRange.get(start + 1, Math.max(0, length), key) as typeof row;
    } else {
      row = this.#readAll.get(key) as typeof row;
    }
    if (!row) return Promise.resolve(null);
    return Promise.resolve(row.data ?? new Uint8Array(0));
  }

  delete(id: ObjectId): Promise<void> {
    this.#db.assertOpen();
    this.#db.transaction(() => this.#delete.run(id.toHexString()));
    return Promise.resolve();
  }
}
