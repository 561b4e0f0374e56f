/**
 * mingo's options of a computation, which mingo does not export: its class is found once, as
 * the class of the options mingo hands an operator. Prepared options keep mingo from copying
 * its operator tables per query ({@link computation}), and an operator that evaluates an
 * expression per document sets that document as the root ({@link Computation.update}), as
 * mingo's own `$push` and `$lookup` do.
 *
 * @example
 * ```ts
 * const at = computation(options);
 * for (const doc of docs) evalExpr(doc, "$v", at.update({ root: doc }));
 * ```
 * @module
 */
import { Context } from "mingo";
import { evalExpr } from "mingo/core";
import type { Options } from "mingo/types";

/** Prepared options: a copy of the given ones, with locals (the root, variables) to set. */
export interface Computation extends Options {
  /** Sets `locals` (variables merged with those set before) and returns these options. */
  update(locals: { root?: unknown; variables?: unknown }): Computation;
}

let Prepared: { init(options: Partial<Options>): Computation } | undefined;

/** `options` prepared by mingo: a new computation of them (their locals copied, if any). */
export function computation(options: Partial<Options>): Computation {
  if (Prepared === undefined) {
    let seen: object | undefined;
    const probe = Context.init({
      expression: { $probe: (_obj: unknown, _expr: unknown, given: object) => (seen = given) },
    });
    evalExpr({}, { $probe: 1 }, { context: probe } as unknown as Options);
    Prepared = (seen as { constructor: typeof Prepared }).constructor;
  }
  return Prepared!.init(options);
}
