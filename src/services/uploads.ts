/**
 * The files one request streams into the store (multipart file parts), and what becomes of
 * them once the request is done: a file no stored document took is removed, so a refused,
 * failed or partly read request leaves no file behind.
 */
import type { ObjectId } from "../doc/bson.ts";
import { deleteFiles, registerUpload, releaseUpload, type UploadedFile } from "./media.ts";
import { isReferenced } from "./media_access.ts";
import type { Runtime } from "./runtime.ts";

const SETTLED = Promise.resolve();

/** A file part as it arrives (what the multipart reader hands over). */
export interface IncomingFile {
  filename: string;
  contentType: string;
  bytes: AsyncIterable<Uint8Array>;
}

/** The uploads of one request. */
export class RequestUploads {
  readonly #rt: Runtime;
  readonly #ids: ObjectId[] = [];

  constructor(rt: Runtime) {
    this.#rt = rt;
  }

  /** Streams a file part into the store; the value its media field holds until written. */
  save = async (part: IncomingFile): Promise<UploadedFile> => {
    const stored = await this.#rt.store.files.putStream(part.bytes, {
      filename: part.filename,
      contentType: part.contentType,
    });
    registerUpload(stored.id);
    this.#ids.push(stored.id);
    return {
      filename: stored.filename,
      contentType: stored.contentType,
      id: stored.id,
      length: stored.length,
    };
  };

  /**
   * Ends the request's hold on its files: those no document took are removed; after a
   * failed request (`failed`), also those a document took that no stored document or
   * version references (the write did not happen).
   */
  settle(failed: boolean): Promise<void> {
    // Most writes stream no file: nothing to walk, no promise chain to build.
    return this.#ids.length === 0 ? SETTLED : this.#settle(failed);
  }

  async #settle(failed: boolean): Promise<void> {
    const gone: ObjectId[] = [];
    for (const id of this.#ids.splice(0)) {
      const claimed = releaseUpload(id);
      if (!claimed || (failed && !await this.#referenced(id))) gone.push(id);
    }
    await deleteFiles(this.#rt, gone);
  }

  /** isReferenced, keeping the file when the store cannot tell. */
  async #referenced(id: ObjectId): Promise<boolean> {
    try {
      return await isReferenced(this.#rt, id);
    } catch (error) {
      this.#rt.log.log("warn", "could not tell whether an uploaded file is referenced", {
        file: id.toHexString(),
        error: (error as Error).message,
      });
      return true;
    }
  }
}
