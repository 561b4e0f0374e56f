/**
 * Stubs one operation of one collection as the service's every request sees it: the store's
 * collections come from the store behind the logged store, so the stub goes on the class of
 * that store's collections (for the collection named, the others run as usual).
 */
import type { Collection, Store } from "../../src/store/store.ts";

type Operation = "find" | "findOne" | "count";

/**
 * Replaces `operation` of the collection `name` of `store` (a service's logged store) with
 * `stub`, which receives the original operation too; returns the function undoing it.
 */
export function stubOperation(
  store: Store,
  name: string,
  operation: Operation,
  stub: (original: (...args: unknown[]) => Promise<unknown>, args: unknown[]) => Promise<unknown>,
): () => void {
  const inner = (store.collection(name) as Collection & { inner?: Collection }).inner;
  if (!inner) throw new Error("not a logged store's collection");
  const proto = Object.getPrototypeOf(inner) as Record<Operation, (...a: unknown[]) => unknown>;
  const original = proto[operation];
  proto[operation] = function (this: Collection, ...args: unknown[]) {
    const call = (...a: unknown[]) => original.apply(this, a) as Promise<unknown>;
    return this.name === name ? stub(call, args) : call(...args);
  };
  return () => {
    proto[operation] = original;
  };
}
