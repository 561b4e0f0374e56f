/**
 * The operation log (OPLOG): one entry per written document, stored in the OPLOG_NAME
 * collection together with the change itself (see `Alongside` in the store interface: one
 * transaction on the embedded store and on MongoDB deployments with transactions, right
 * after the change on a standalone MongoDB).
 *
 * An entry: `o` (POST, PATCH, PUT, DELETE), `r` (resource name), `i` (document id), `c`
 * (the changes, the whole document for DELETE; only for OPLOG_CHANGE_METHODS), `ip`
 * (OPLOG_AUDIT), `u` (the requester's account id; as in Eve, `"n/a"` without one), `extra`
 * (set by `on_oplog_push` callbacks), `_created`/`_updated` of the target document, and
 * the entry's own `_id` and `_etag` (an entry is never rewritten: its ETag is a fresh random
 * value, as unpredictable as a document's, see `freshToken` in etag.ts).
 *
 * `c` shows no more than a read of the resource the write went through: its `hidden`
 * fields and, for a view with an inclusive `datasource.projection`, every field outside
 * it are removed (the read paths' own helper, `showable`), so the log, the OPLOG_ENDPOINT
 * and what is derived from them never carry a field that resource keeps from its readers.
 */
import type { Method } from "../domain/types.ts";
import { ObjectId } from "../doc/bson.ts";
import type { Alongside, Doc } from "../store/store.ts";
import { now } from "./meta.ts";
import { freshToken } from "./etag.ts";
import type { RequestContext, Runtime } from "./runtime.ts";
import type { Resource } from "../domain/types.ts";
import { showable } from "./visible.ts";

/** A written method the oplog records. */
export type OplogMethod = Extract<Method, "POST" | "PATCH" | "PUT" | "DELETE">;

/** One written document: the stored result (or the removed original) and what changed. */
export interface OplogItem {
  /** The document as stored after the write; the original for a hard delete. */
  doc: Doc;
  /** What the write changed (the PATCH updates); defaults to the whole document. */
  changes?: Doc;
}

/** Whether writes by `method` are logged. */
export function oplogEnabled(rt: Runtime, method: OplogMethod): boolean {
  return rt.settings.OPLOG === true && rt.settings.OPLOG_METHODS.includes(method);
}

/**
 * The requester's account id. Authentication (when present) records the account on the
 * request context as `account`; without it there is no user and `u` is `"n/a"`, as in Eve.
 */
function requester(ctx: RequestContext): unknown {
  const account = (ctx as { account?: { id?: unknown } | null }).account;
  return account?.id ?? "n/a";
}

/**
 * Builds the entries for `items` written by `op`, raises `on_oplog_push(resource, entries)`
 * (callbacks may set `extra`, or change entries), stamps their ETags and returns them as
 * the inserts to store with the change. Undefined when the oplog does not record `op`.
 * Synchronous unless something listens to `on_oplog_push` (a write awaits it either way).
 */
export function oplogEntries(
  rt: Runtime,
  ctx: RequestContext,
  options: { op: OplogMethod; items: OplogItem[] },
): Alongside | undefined | Promise<Alongside | undefined> {
  const { op, items } = options;
  if (items.length === 0 || !oplogEnabled(rt, op)) return undefined;
  const settings = rt.settings;
  const { resource } = ctx;
  const withChanges = settings.OPLOG_CHANGE_METHODS.includes(op);
  const time = now();
  const user = requester(ctx);
  const entries = items.map(({ doc, changes }) => {
    const entry: Doc = {
      _id: new ObjectId(),
      o: op,
      r: resource.name,
      i: doc[resource.idField],
    };
    if (withChanges) entry.c = visibleChanges(rt, resource, { doc: changes ?? doc });
    if (settings.OPLOG_AUDIT && ctx.ip) entry.ip = ctx.ip;
    entry.u = user;
    // A hard delete leaves no document: the entry's time is the time of the removal.
    entry[settings.DATE_CREATED] = doc[settings.DATE_CREATED] ?? time;
    entry[settings.DATE_UPDATED] = op === "DELETE" && !resource.softDelete
      ? time
      : doc[settings.DATE_UPDATED] ?? time;
    return entry;
  });
  const alongside = { collection: settings.OPLOG_NAME, docs: entries };
  if (!rt.events.has("on_oplog_push")) return stamped(rt, alongside);
  return rt.events.emit("on_oplog_push", resource.name, entries)
    .then(() => stamped(rt, alongside));
}

/** `alongside` with an ETag on each entry, set after the callbacks (they may change entries). */
function stamped(rt: Runtime, alongside: Alongside): Alongside {
  for (const entry of alongside.docs) entry[rt.settings.ETAG] = freshToken();
  return alongside;
}

/**
 * A copy of `options.doc` without the ETag and links (the entry has its own) and without
 * what a read of `resource` may not show (password hashes and other secrets, fields its
 * projection leaves out).
 */
function visibleChanges(rt: Runtime, resource: Resource, options: { doc: Doc }): Doc {
  const { [rt.settings.ETAG]: _etag, [rt.settings.LINKS]: _links, ...rest } = options.doc;
  return showable(rt, resource, [rest])[0];
}
