/**
 * `$function` for the engine's own use only. mingo's `$setWindowFields` computes every window
 * through a `$function` whose body is a JavaScript function it made itself, and mingo's own
 * `$function` ran only with server-side JavaScript on: every `$setWindowFields` failed. Here a
 * body that is a function runs; a body written in a pipeline (settings and clients give JSON,
 * which holds no functions) is refused, so server-side JavaScript stays off.
 *
 * @example
 * ```ts
 * import { Aggregator } from "mingo/aggregator";
 * import { engineOptions } from "./engine.ts";
 *
 * new Aggregator([{ $setWindowFields: { sortBy: { v: 1 }, output: { r: { $rank: {} } } } }],
 *   engineOptions()).run([{ v: 2 }, { v: 1 }]); // ranks 1 and 2
 * ```
 * @module
 */
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";
import { isPlainObject } from "../../util/plain.ts";
import type { Doc } from "../types.ts";

// deno-lint-ignore no-explicit-any -- mingo's operator signatures
type AnyFn = (...args: any[]) => any;

/** `$function: {body, args}` with a function for its body (see the module doc). */
function $function(obj: Doc, expr: unknown, options: Options): unknown {
  if (!isPlainObject(expr) || typeof expr.body !== "function") {
    throw new Error("$function is server-side JavaScript, which this service does not run");
  }
  const args = Array.isArray(expr.args)
    ? expr.args.map((arg) => evalExpr(obj as never, arg as never, options))
    : [];
  return (expr.body as AnyFn).apply(null, args);
}

/** The operators of this module, by name. */
export const functionExpressions: Record<string, AnyFn> = { $function };
