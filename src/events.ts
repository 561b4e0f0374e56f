/**
 * The event bus: in-process callbacks registered by an embedding application.
 *
 * For events with a resource-specific form both forms are raised: the generic one first
 * (`on_insert(resource, items)`), then `on_insert_<resource>(items)`. Callbacks run in
 * registration order and may be sync or async; a callback that throws aborts the
 * operation (throw an HttpError to choose the status).
 */

// deno-lint-ignore no-explicit-any
export type Callback = (...args: any[]) => unknown;

export class Events {
  #callbacks = new Map<string, Callback[]>();

  /** Registers `callback` for `event`; several callbacks may share one event. */
  on(event: string, callback: Callback): this {
    const list = this.#callbacks.get(event);
    if (list) list.push(callback);
    else this.#callbacks.set(event, [callback]);
    return this;
  }

  /** Removes one registration of `callback`. */
  off(event: string, callback: Callback): this {
    const list = this.#callbacks.get(event);
    const at = list?.indexOf(callback) ?? -1;
    if (at >= 0) list!.splice(at, 1);
    return this;
  }

  /** True when anything listens to `event` or its `_<resource>` form. */
  has(event: string, resource?: string): boolean {
    return !!(this.#callbacks.get(event)?.length ||
      (resource && this.#callbacks.get(`${event}_${resource}`)?.length));
  }

  /** Raises `event` alone, with `args`. */
  async emit(event: string, ...args: unknown[]): Promise<void> {
    const list = this.#callbacks.get(event);
    if (!list) return;
    for (const callback of [...list]) await callback(...args);
  }

  /** Raises the generic form with the resource name first, then the `_<resource>` form. */
  async emitFor(event: string, resource: string, ...args: unknown[]): Promise<void> {
    await this.emit(event, resource, ...args);
    await this.emit(`${event}_${resource}`, ...args);
  }
}
