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
