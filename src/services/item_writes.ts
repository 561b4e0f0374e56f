/**
 * Writes to one document from this process run one after another, in arrival order.
 *
 * An item write reads the document, works out the new one and stores it only if nobody
 * changed it meanwhile (an ETag compare-and-swap: `swap` in methods/common.ts). Requests
 * arriving together would otherwise read the same version and all but one would fail with
 * 412, although none of their clients asked for a version (no `If-Match`). Queued, each reads
 * what the previous one stored. The compare-and-swap stays the guard against writers this
 * queue cannot see (other service instances on one MongoDB).
 */
import type { RequestContext, Runtime } from "./runtime.ts";
import { idToString } from "../doc/bson.ts";

/** By service (`Runtime.instance`): the tail of each item's queue. */
const queues = new WeakMap<object, Map<string, Promise<void>>>();
const settled = () => {};

/** Runs `work` (a write to the item `ctx` looks up) after earlier writes to that item. */
export function oneWriteAtATime<T>(
  rt: Runtime,
  ctx: RequestContext,
  work: () => Promise<T>,
): Promise<T> {
  let tails = queues.get(rt.instance);
  if (!tails) queues.set(rt.instance, tails = new Map());
  const key = itemKey(ctx);
  const before = tails.get(key);
  const result = before ? before.then(work) : work();
  const tail = result.then(settled, settled);
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return result;
}

/**
 * The item's key: its collection and lookup values. Two keys for one document (an id and an
 * additional lookup) only lose the queueing, never correctness: the swap still guards.
 */
function itemKey(ctx: RequestContext): string {
  let key = ctx.resource.source;
  for (const field in ctx.lookup) key += `\0${field}\0${idToString(ctx.lookup[field])}`;
  return key;
}
