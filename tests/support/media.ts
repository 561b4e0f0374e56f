/** Media helpers for scenarios: multipart bodies and the store's file count. */
import { Buffer } from "node:buffer";
import type { Answer, Client } from "./client.ts";
import type { Running } from "./harness.ts";

/** A file part: its name, content and type (text/plain by default). */
export interface FilePart {
  name: string;
  content: string | Uint8Array;
  type?: string;
}

/** A multipart form of string fields and file parts (a list repeats the key). */
export function multipart(
  fields: Record<string, string>,
  files: Record<string, FilePart | FilePart[]> = {},
): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  for (const [key, parts] of Object.entries(files)) {
    for (const part of [parts].flat()) {
      const blob = new Blob([part.content as BlobPart], { type: part.type ?? "text/plain" });
      form.append(key, blob, part.name);
    }
  }
  return form;
}

/** Sends `form` with `method` to `path`. */
export function sendForm(
  api: Client,
  request: { method: string; path: string; form: FormData; headers?: Record<string, string> },
): Promise<Answer> {
  return api.request(request.method, request.path, { raw: request.form, headers: request.headers });
}

/** How many files the service's store holds (through the store interface). */
export function fileCount(running: Running): Promise<number> {
  return running.service.store.files.count();
}

/** Base64 of a text, as media fields carry it. */
export function base64(text: string): string {
  return Buffer.from(text).toString("base64");
}

/** A part of a raw multipart body: a field, or a file when it has a filename. */
export interface RawPart {
  name: string;
  value: string | Uint8Array;
  filename?: string;
}

/** The bytes of a multipart body with `boundary` (left open when `close` is false). */
export function rawMultipart(
  parts: RawPart[],
  options: { boundary: string; close?: boolean },
): Uint8Array {
  const encoder = new TextEncoder();
  const pieces: Uint8Array[] = [];
  for (const part of parts) {
    const file = part.filename ? `; filename="${part.filename}"` : "";
    pieces.push(encoder.encode(
      `--${options.boundary}\r\nContent-Disposition: form-data; name="${part.name}"${file}\r\n` +
        (part.filename ? "Content-Type: application/octet-stream\r\n" : "") + "\r\n",
    ));
    pieces.push(typeof part.value === "string" ? encoder.encode(part.value) : part.value);
    pieces.push(encoder.encode("\r\n"));
  }
  if (options.close !== false) pieces.push(encoder.encode(`--${options.boundary}--\r\n`));
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.byteLength;
  }
  return out;
}

/**
 * `size` bytes that look like multipart framing at many places (CR LF, dashes and the
 * start of `boundary` sprinkled among pseudo-random bytes), to trip a parser that
 * mishandles data resembling a boundary.
 */
export function trickyBytes(size: number, boundary: string, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  const near = new TextEncoder().encode(`\r\n--${boundary.slice(0, -1)}`);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    if (x % 997 === 0 && i + near.length < size) {
      // At most the boundary less its last byte, then a zero byte: never a real boundary.
      out.set(near.subarray(0, 1 + (x % near.length)), i);
      i += 1 + (x % near.length);
      out[i] = 0;
    } else out[i] = x & 0xff;
  }
  return out;
}

/**
 * A byte stream (readable with a BYOB reader, as a server's request body) of `bytes`,
 * given in pieces whose sizes cycle through `sizes`.
 */
export function byteStream(bytes: Uint8Array, sizes: number[]): ReadableStream<Uint8Array> {
  let at = 0;
  let turn = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      if (at >= bytes.length) {
        controller.close();
        controller.byobRequest?.respond(0);
        return;
      }
      const want = Math.min(sizes[turn++ % sizes.length], bytes.length - at);
      const request = controller.byobRequest;
      if (request?.view) {
        const view = new Uint8Array(
          request.view.buffer,
          request.view.byteOffset,
          request.view.byteLength,
        );
        const n = Math.min(want, view.byteLength);
        view.set(bytes.subarray(at, at + n));
        at += n;
        request.respond(n);
      } else {
        controller.enqueue(bytes.slice(at, at + want));
        at += want;
      }
    },
  });
}

/** Hex SHA-256 of `bytes`. */
export async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
