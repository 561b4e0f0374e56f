/**
 * Media fields: files uploaded with multipart/form-data are streamed into the store's file
 * storage as they arrive (see uploads.ts) and the field holds the file id; reads turn the
 * id back into what the settings ask for (by default the file as a Base64 string).
 */
import { Buffer } from "node:buffer";
import type { Resource } from "../domain/types.ts";
import { ObjectId } from "../doc/bson.ts";
import type { Doc } from "../store/store.ts";
import { isPlainObject } from "../util/plain.ts";
import type { Runtime } from "./runtime.ts";
import { ServiceError } from "./errors.ts";

/**
 * A file sent for a media field: either its bytes (in-process writes), or the stored file
 * a multipart part was streamed into (`id`, registered by {@link registerUpload}).
 */
export interface UploadedFile {
  filename: string;
  contentType: string;
  data?: Uint8Array;
  id?: ObjectId;
  length?: number;
}

/** Files streamed in by requests still running: whether a validated document took each. */
const streamed = new Map<string, { claimed: boolean }>();

/** Records a file a request streamed into the store, so a document of it may take it. */
export function registerUpload(id: ObjectId): void {
  streamed.set(id.toHexString(), { claimed: false });
}

/**
 * Forgets a streamed file once its request is done.
 * @returns whether a document took it.
 */
export function releaseUpload(id: ObjectId): boolean {
  const key = id.toHexString();
  const claimed = streamed.get(key)?.claimed ?? false;
  streamed.delete(key);
  return claimed;
}

/** What {@link eachValue} does with each value; the same object all the way down. */
interface ValueVisitor {
  /** Called with the holder and key of each value; may return a promise. */
  visit(holder: Record<string | number, unknown>, key: string | number): void | Promise<void>;
}

/**
 * Calls `options.visit` with the holder and key of every value at `path` in `node`; returns
 * what the calls returned, as promises.
 */
function eachValue(
  node: unknown,
  path: readonly string[],
  options: ValueVisitor,
): Promise<void>[] {
  if (node === null || typeof node !== "object") return [];
  const [head, ...rest] = path;
  const holder = node as Record<string | number, unknown>;
  const keys: Array<string | number> = head === "[]"
    ? (Array.isArray(node) ? node.map((_, i) => i) : [])
    : (Object.hasOwn(holder, head) ? [head] : []);
  const out: Promise<void>[] = [];
  for (const key of keys) {
    if (rest.length === 0) out.push(Promise.resolve(options.visit(holder, key)));
    else out.push(...eachValue(holder[key], rest, options));
  }
  return out;
}

function isUpload(v: unknown): v is UploadedFile {
  return isPlainObject(v) && typeof v.filename === "string" &&
    typeof v.contentType === "string" &&
    (v.data instanceof Uint8Array || v.id instanceof ObjectId);
}

/** File ids held by the media fields of `doc`. */
export function mediaIds(resource: Resource, doc: Doc): ObjectId[] {
  const ids: ObjectId[] = [];
  const collect: ValueVisitor = {
    visit(holder, key) {
      if (holder[key] instanceof ObjectId) ids.push(holder[key] as ObjectId);
    },
  };
  for (const path of resource.schemaModel.mediaPaths) eachValue(doc, path, collect);
  return ids;
}

/**
 * AUTO_CREATE_LISTS: a single file sent for a list-of-media field becomes a one-member list.
 * Runs on the request body (`options.body`, one document), before validation.
 */
export function wrapSingleUploads(
  rt: Runtime,
  resource: Resource,
  options: { body: unknown },
): void {
  const { body } = options;
  if (!rt.settings.AUTO_CREATE_LISTS || !isPlainObject(body)) return;
  for (const path of resource.schemaModel.mediaPaths) {
    if (path.length !== 2 || path[1] !== "[]") continue;
    if (isUpload(body[path[0]])) body[path[0]] = [body[path[0]]];
  }
}

/**
 * Puts the uploaded files of validated documents (`options.docs`) in their media fields,
 * replacing each by its file id, in place: a streamed file is taken as it is, bytes are
 * saved first. Returns the ids (to remove them if the write fails).
 */
export async function storeMedia(
  rt: Runtime,
  resource: Resource,
  options: { docs: Doc[] },
): Promise<ObjectId[]> {
  const saved: ObjectId[] = [];
  const paths = resource.schemaModel.mediaPaths;
  if (paths.length === 0) return saved;
  const save: ValueVisitor = {
    async visit(holder, key) {
      const file = holder[key];
      if (!isUpload(file)) return;
      if (file.id) {
        const upload = streamed.get(file.id.toHexString());
        if (!upload || upload.claimed) {
          throw new ServiceError(
            "bad-request",
            "a media value names a file this request did not send",
          );
        }
        upload.claimed = true;
        saved.push(file.id);
        holder[key] = file.id;
        return;
      }
      const stored = await rt.store.files.put(file.data!, {
        filename: file.filename,
        contentType: file.contentType,
      });
      saved.push(stored.id);
      holder[key] = stored.id;
    },
  };
  try {
    for (const doc of options.docs) {
      for (const path of paths) await Promise.all(eachValue(doc, path, save));
    }
  } catch (error) {
    await deleteFiles(rt, saved);
    throw error;
  }
  return saved;
}

const NONE = Promise.resolve();

/** Removes files, ignoring ones already gone. */
export function deleteFiles(rt: Runtime, ids: ObjectId[]): Promise<void> {
  return ids.length === 0 ? NONE : deleteEach(rt, ids);
}

async function deleteEach(rt: Runtime, ids: ObjectId[]): Promise<void> {
  for (const id of ids) {
    try {
      await rt.store.files.delete(id);
    } catch (error) {
      rt.log.log("warn", "could not delete a media file", {
        file: id.toHexString(),
        error: (error as Error).message,
      });
    }
  }
}

/**
 * Removes the files `options.original` references that `options.doc`, its replacement, no
 * longer does (every one of them without a replacement).
 */
export function deleteReplacedMedia(
  rt: Runtime,
  resource: Resource,
  options: { original: Doc; doc?: Doc },
): Promise<void> {
  const { original, doc } = options;
  // A resource without media fields references no file.
  if (resource.schemaModel.mediaPaths.length === 0) return NONE;
  const kept = new Set(doc ? mediaIds(resource, doc).map((id) => id.toHexString()) : []);
  const gone = mediaIds(resource, original).filter((id) => !kept.has(id.toHexString()));
  return deleteFiles(rt, gone);
}

/** Driver metadata names of EXTENDED_MEDIA_INFO and where a stored file keeps them. */
const MEDIA_INFO: Record<string, (f: { filename: string; contentType: string }) => unknown> = {
  content_type: (f) => f.contentType,
  contentType: (f) => f.contentType,
  name: (f) => f.filename,
  filename: (f) => f.filename,
  length: (f) => (f as { length?: number }).length,
  upload_date: (f) => (f as { uploadDate?: Date }).uploadDate,
  uploadDate: (f) => (f as { uploadDate?: Date }).uploadDate,
};

/**
 * Replaces the file ids in the media fields of `options.docs` (in place) as the settings
 * ask: the Base64 content (default), a URL (RETURN_MEDIA_AS_URL), or null when the content
 * is omitted (RETURN_MEDIA_AS_BASE64_STRING false); with EXTENDED_MEDIA_INFO an object
 * `{file, <info>...}`. A missing file becomes null.
 */
export async function expandMedia(
  rt: Runtime,
  resource: Resource,
  options: { docs: Doc[] },
): Promise<void> {
  const paths = resource.schemaModel.mediaPaths;
  if (paths.length === 0) return;
  const settings = rt.settings;
  const info = settings.EXTENDED_MEDIA_INFO;
  const expand = async (id: ObjectId): Promise<unknown> => {
    const meta = info.length ? await rt.store.files.stat(id) : null;
    let file: unknown = null;
    if (settings.RETURN_MEDIA_AS_URL) file = rt.urls.media(id.toHexString());
    else if (settings.RETURN_MEDIA_AS_BASE64_STRING) {
      file = await base64Of(rt, id);
      if (file === null) return null;
    }
    if (!info.length) return file;
    if (!meta) return null;
    const out: Doc = { file };
    for (const name of info) out[name] = MEDIA_INFO[name]?.(meta) ?? meta.metadata?.[name] ?? null;
    return out;
  };
  const slots: Array<[Record<string | number, unknown>, string | number, ObjectId]> = [];
  const collect: ValueVisitor = {
    visit(holder, key) {
      const id = holder[key];
      if (id instanceof ObjectId) slots.push([holder, key, id]);
    },
  };
  for (const doc of options.docs) {
    for (const path of paths) eachValue(doc, path, collect);
  }
  if (!settings.RETURN_MEDIA_AS_URL && settings.RETURN_MEDIA_AS_BASE64_STRING) {
    await checkInlineBudget(rt, slots.map(([, , id]) => id));
  }
  await Promise.all(slots.map(async ([holder, key, id]) => {
    holder[key] = await expand(id);
  }));
}

/**
 * A file's content as Base64, encoded chunk by chunk as the store streams it (never the
 * bytes and their encoding whole at once); null when the file is gone.
 */
async function base64Of(rt: Runtime, id: ObjectId): Promise<string | null> {
  const stream = await rt.store.files.stream(id);
  if (!stream) return null;
  const parts: string[] = [];
  let carry = new Uint8Array(0);
  for await (const chunk of stream) {
    let bytes = chunk;
    if (carry.byteLength > 0) {
      bytes = new Uint8Array(carry.byteLength + chunk.byteLength);
      bytes.set(carry);
      bytes.set(chunk, carry.byteLength);
    }
    // Whole 3-byte groups encode without padding, so the pieces join into one encoding.
    const whole = bytes.byteLength - (bytes.byteLength % 3);
    parts.push(Buffer.from(bytes.buffer, bytes.byteOffset, whole).toString("base64"));
    carry = bytes.slice(whole);
  }
  if (carry.byteLength > 0) parts.push(Buffer.from(carry).toString("base64"));
  return parts.join("");
}

/**
 * The response-size budget of inline media: the Base64 content of every file a response
 * would carry, summed from the stored lengths before any file is read.
 * @throws ServiceError (bad-request) past MAX_RESPONSE_MEDIA_BYTES, naming RETURN_MEDIA_AS_URL.
 */
async function checkInlineBudget(rt: Runtime, ids: ObjectId[]): Promise<void> {
  const limit = rt.settings.MAX_RESPONSE_MEDIA_BYTES;
  const stats = await Promise.all(ids.map((id) => rt.store.files.stat(id)));
  let total = 0;
  for (const stat of stats) total += stat ? Math.ceil(stat.length / 3) * 4 : 0;
  if (total > limit) {
    throw new ServiceError(
      "bad-request",
      `the response would carry ${total} bytes of inline media, more than ` +
        `MAX_RESPONSE_MEDIA_BYTES (${limit}): ask for fewer items (max_results), ` +
        `or have the service return media as URLs (RETURN_MEDIA_AS_URL)`,
    );
  }
}
