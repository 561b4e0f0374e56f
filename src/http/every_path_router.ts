/**
 * The Hono router of this service. Every handler is mounted on `*` (paths are resolved later,
 * by the routes layer, against the domain), so matching is only a choice by method: the
 * answer for each method is built once and returned as is. Hono's general routers run a
 * regular expression over every path for the same result.
 */
import { type Result, type Router, UnsupportedPathError } from "hono/router";

const NO_PARAMS: Record<string, string> = Object.freeze(Object.create(null));

/** A router for handlers that all match every path (`*` or `/*`), by method or `ALL`. */
export class EveryPathRouter<T> implements Router<T> {
  name = "EveryPathRouter";
  #routes: { method: string; handler: T }[] = [];
  #byMethod = new Map<string, Result<T>>();
  #other: Result<T> | null = null;

  add(method: string, path: string, handler: T): void {
    if (path !== "*" && path !== "/*") throw new UnsupportedPathError(path);
    if (this.#other) throw new Error("EveryPathRouter: routes are added before the first match");
    this.#routes.push({ method, handler });
  }

  match(method: string, _path: string): Result<T> {
    const known = this.#byMethod.get(method);
    if (known) return known;
    if (!this.#other) {
      for (const { method: m } of this.#routes) {
        if (m !== "ALL" && !this.#byMethod.has(m)) this.#byMethod.set(m, this.#handlers(m));
      }
      this.#other = this.#handlers("ALL");
      return this.match(method, _path);
    }
    // Any other method (custom ones included) gets the `ALL` handlers, shared.
    return this.#other;
  }

  #handlers(method: string): Result<T> {
    const list = this.#routes.filter((r) => r.method === "ALL" || r.method === method);
    return [list.map((r) => [r.handler, NO_PARAMS])];
  }
}
