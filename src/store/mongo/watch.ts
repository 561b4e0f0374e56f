/**
 * Change streams: every insert, update, replace and delete on the watched collections,
 * whoever wrote it (other instances of the service, other programs). Needs a replica set or
 * a sharded cluster. Documents come with `fullDocument: "updateLookup"`; the state before a
 * change only where the collection records pre-images (MongoDB 6+,
 * `changeStreamPreAndPostImages`), else it is unknown.
 *
 * The stream resumes after its last event when it fails; a stream that cannot resume (its
 * place fell out of the server's oplog, or it was invalidated) starts again from now and
 * reports `lost`, since changes were missed.
 */
import type {
  ChangeStream,
  ChangeStreamDocument,
  ChangeStreamOptions,
  Db,
  Document,
} from "mongodb";
import type { ChangeWatcher, StoreChange, WatchHandlers } from "../store.ts";

/** The operations reported (others, such as `drop`, are not document changes). */
const OPERATIONS = ["insert", "update", "replace", "delete"];
/** Server error: the resume point is no longer in the oplog. */
const HISTORY_LOST = 286;
/** Delays before reopening a failed stream, growing to the last one. */
const RETRY_MS = [500, 1000, 2000, 5000, 10_000];

/** A change stream event as a {@link StoreChange}; null for events that are not one. */
export function toStoreChange(event: Document): StoreChange | null {
  const op = event.operationType as StoreChange["op"];
  if (!OPERATIONS.includes(op)) return null;
  const collection = event.ns?.coll;
  const id = event.documentKey?._id;
  if (typeof collection !== "string" || id === undefined) return null;
  // Null when the deployment recorded no pre-image: then the state before is unknown.
  const recorded = event.fullDocumentBeforeChange ?? undefined;
  if (op === "insert") return { collection, op, id, doc: event.fullDocument ?? null, before: null };
  if (op === "delete") return { collection, op, id, doc: null, before: recorded };
  return { collection, op, id, doc: event.fullDocument ?? null, before: recorded };
}

/** Watches `collections` of `db`; `handlers` get every change until `close()`. */
export function watchCollections(
  db: Db,
  collections: string[],
  handlers: WatchHandlers,
): ChangeWatcher {
  const pipeline = [{
    $match: { "ns.coll": { $in: collections }, operationType: { $in: OPERATIONS } },
  }];
  let stream: ChangeStream | undefined;
  let resumeToken: unknown;
  let preImages = true;
  let failures = 0;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const open = () => {
    const options: ChangeStreamOptions = { fullDocument: "updateLookup" };
    if (preImages) options.fullDocumentBeforeChange = "whenAvailable";
    if (resumeToken) options.resumeAfter = resumeToken;
    const current = db.watch(pipeline, options);
    stream = current;
    current.on("change", (event: ChangeStreamDocument) => {
      failures = 0;
      resumeToken = event._id;
      if (event.operationType === "invalidate") {
        resumeToken = undefined;
        handlers.lost();
        return;
      }
      const change = toStoreChange(event as Document);
      if (change) handlers.change(change);
    });
    current.on("error", (error: unknown) => {
      if (closed || stream !== current) return;
      const { code, message } = error as { code?: number; message?: string };
      if (preImages && /fullDocumentBeforeChange/.test(message ?? "")) {
        // A server older than 6.0: no pre-images.
        preImages = false;
      } else {
        handlers.error(error);
        if (code === HISTORY_LOST) {
          resumeToken = undefined;
          handlers.lost();
        }
      }
      void current.close().catch(() => {});
      const delay = RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)];
      timer = setTimeout(() => {
        if (!closed) open();
      }, delay);
    });
  };
  open();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      await stream?.close().catch(() => {});
    },
  };
}
