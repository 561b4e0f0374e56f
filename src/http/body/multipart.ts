/**
 * Reads a multipart/form-data body as a stream (`@fastify/busboy`): non-file fields are
 * collected within their budgets, and each file part is handed to a saver as its bytes
 * arrive, so a file of any size is never held whole. A body that fails (malformed, over a
 * budget, a file past its size limit, a client that went away) stops being read at once,
 * every file part still streaming is failed, and every save has settled before the error
 * is thrown: the caller then removes whatever was saved.
 *
 * The body is read into one reused buffer where it can be (`body_chunks.ts`): the parser
 * gets the next chunk only once every file part has copied its data out of the previous one
 * (`file_pipe.ts`), which is also the backpressure: the body is read no faster than the
 * savers take the parts' data.
 */
import { Buffer } from "node:buffer";
import type { Readable } from "node:stream";
import { Busboy, type BusboyFileStream, type BusboyInstance } from "@fastify/busboy";
import { ClientAbortError, HttpError } from "../errors.ts";
import { bodyChunks } from "./body_chunks.ts";
import { type BodyRate, SlowBodyError } from "../../util/body_rate.ts";
import { drained, FilePipe } from "./file_pipe.ts";

/** A file part as it arrives. */
export interface FilePart {
  /** The form field name. */
  field: string;
  filename: string;
  contentType: string;
  /** The part's bytes, as they arrive; throws when the body fails mid-part. */
  bytes: AsyncIterable<Uint8Array>;
}

/** Saves a file part; resolves to the value its form field holds. */
export type FileSaver = (part: FilePart) => Promise<unknown>;

/** The limits and choices of one multipart read. */
export interface MultipartOptions {
  /** Bytes of all non-file field values together (MAX_BODY_SIZE). */
  fieldBytes: number;
  /** Bytes of one file (MAX_FILE_SIZE, else MAX_BODY_SIZE). */
  fileBytes: number;
  /** Parts of the body (MAX_MULTIPART_PARTS). */
  parts: number;
  /** Turns a non-file value into the field's value (MULTIPART_FORM_FIELDS_AS_JSON). */
  field(key: string, value: string): unknown;
  /** Whether a file for `key` is kept (a repeated key may be dropped); others are skipped. */
  wants(key: string): boolean;
  /** Where kept file parts go; without it files are refused. */
  saveFile?: FileSaver;
  /** The minimum data rate of the body (MIN_REQUEST_BODY_RATE); null: not watched. */
  rate?: BodyRate | null;
}

/** One field of the body, in order; a file's value settles once it is saved. */
export interface Entry {
  key: string;
  value: unknown;
}

/** Header pairs per part (content-disposition, content-type and a few more are enough). */
const HEADER_PAIRS = 32;

/**
 * Reads `body` (the multipart body of `contentType`) into its fields in order, files saved
 * through `options.saveFile`.
 * @throws HttpError 400 (malformed, aborted), 413 (a budget or the file size limit);
 * SlowBodyError under the minimum data rate.
 */
export async function readMultipart(
  body: ReadableStream<Uint8Array>,
  contentType: string,
  options: MultipartOptions,
): Promise<Entry[]> {
  let parser: BusboyInstance;
  try {
    parser = Busboy({
      headers: { "content-type": contentType },
      // As the Fetch API's FormData: a part is a file when it names a file.
      isPartAFile: (_field, _type, filename) => filename !== undefined,
      limits: {
        parts: options.parts,
        fieldSize: options.fieldBytes + 1,
        fileSize: options.fileBytes,
        headerPairs: HEADER_PAIRS,
      },
    });
  } catch {
    throw new HttpError(400, "the multipart body has no boundary");
  }
  const read = new MultipartRead(parser, options);
  await read.pump(body);
  return await read.entries();
}

/** The state of one multipart read. */
class MultipartRead {
  #entries: Entry[] = [];
  #saves: Promise<unknown>[] = [];
  /** File parts still streaming, failed together when the body fails. */
  #streaming = new Set<Readable>();
  /** Every file part not yet closed (saved or skipped): each may hold views of a chunk. */
  #open = new Set<Readable>();
  #fieldBytes = 0;
  #failure: { error: unknown } | null = null;
  /** Ends the current wait of the pump early (set while it waits). */
  #wake: (() => void) | null = null;
  #finished: Promise<void>;

  constructor(readonly parser: BusboyInstance, readonly options: MultipartOptions) {
    this.#finished = new Promise((resolve) => parser.once("finish", resolve));
    parser.on(
      "field",
      (key, value, _keyTruncated, truncated) => this.#field(key, value, truncated),
    );
    parser.on("file", (key, stream, filename, _encoding, type) => {
      this.#file({ key, stream, filename, type });
    });
    parser.on("partsLimit", () => {
      this.fail(
        new HttpError(
          413,
          `the request body has more than ${options.parts} parts (MAX_MULTIPART_PARTS)`,
        ),
      );
    });
    parser.on("error", () => this.fail(new HttpError(400, "the multipart body is malformed")));
  }

  /** Records the first failure and fails every file part still streaming. */
  fail(error: unknown): void {
    if (this.#failure) return;
    this.#failure = { error };
    for (const stream of this.#streaming) stream.destroy(error as Error);
    this.#wake?.();
  }

  /**
   * Waits for `step`, or until the read fails (then null). Not a race against one
   * long-lived promise: each such race would leave it a reaction holding its result (here
   * a chunk of the body), so a large body would stay in memory.
   */
  #until<T>(step: Promise<T>): Promise<T | null> {
    if (this.#failure) return Promise.resolve(null);
    return new Promise<T | null>((resolve, reject) => {
      this.#wake = () => resolve(null);
      step.then(resolve, reject);
    }).finally(() => this.#wake = null);
  }

  #field(key: string, value: string, truncated: boolean) {
    if (this.#failure) return;
    this.#fieldBytes += Buffer.byteLength(value);
    if (truncated || this.#fieldBytes > this.options.fieldBytes) {
      return this.fail(
        new HttpError(
          413,
          `the fields of the multipart body exceed ${this.options.fieldBytes} bytes (MAX_BODY_SIZE)`,
        ),
      );
    }
    try {
      this.#entries.push({ key, value: this.options.field(key, value) });
    } catch (error) {
      this.fail(error);
    }
  }

  #file(part: { key: string; stream: BusboyFileStream; filename: string; type: string }) {
    const { key, stream } = part;
    // A failed part with nobody reading it must not raise an unhandled 'error'.
    stream.on("error", () => {});
    this.#open.add(stream);
    stream.once("close", () => this.#open.delete(stream));
    const { saveFile } = this.options;
    if (this.#failure || !this.options.wants(key)) return void stream.resume();
    if (!saveFile) {
      this.fail(new HttpError(400, "files are not accepted here"));
      return void stream.resume();
    }
    const limit = this.options.fileBytes;
    stream.once("limit", () => {
      this.fail(
        new HttpError(413, `the file "${key}" is larger than ${limit} bytes (MAX_FILE_SIZE)`),
      );
    });
    this.#streaming.add(stream);
    stream.once("close", () => this.#streaming.delete(stream));
    const saving = saveFile({
      field: key,
      filename: part.filename,
      contentType: part.type || "application/octet-stream",
      bytes: new FilePipe(stream),
    });
    saving.catch((error) => this.fail(error));
    this.#saves.push(saving);
    this.#entries.push({ key, value: saving });
  }

  /** Feeds the body to the parser, one chunk at a time, until it ends or the read fails. */
  async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const chunks = bodyChunks(body, { rate: this.options.rate });
    try {
      while (!this.#failure) {
        let chunk: Uint8Array | null;
        try {
          chunk = await this.#until(chunks.read());
        } catch (error) {
          // Under the minimum rate, or the stream failed: the client went away mid-body.
          this.fail(error instanceof SlowBodyError ? error : new ClientAbortError());
          break;
        }
        if (chunk === null) break;
        // The parser acknowledges a chunk once the file part reading it is not full.
        await this.#until(
          new Promise<void>((resolve) => {
            this.parser.write(
              Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
              () => resolve(),
            );
          }),
        );
        // No view of the chunk is left in a part once each has been drained (copied out);
        // only then may the next read overwrite it.
        await this.#until(Promise.all([...this.#open].map(drained)));
      }
      if (!this.#failure) {
        this.parser.end();
        await this.#until(this.#finished);
      }
    } finally {
      chunks.close({ cancel: this.#failure !== null });
    }
  }

  /** The fields in order once every save has settled; the first failure otherwise. */
  async entries(): Promise<Entry[]> {
    await Promise.allSettled(this.#saves);
    if (this.#failure) throw this.#failure.error;
    const out: Entry[] = [];
    for (const entry of this.#entries) out.push({ key: entry.key, value: await entry.value });
    return out;
  }
}
