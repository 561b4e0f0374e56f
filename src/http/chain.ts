/**
 * The app's middleware steps run as one Hono handler: Hono calls a lone handler directly,
 * where it runs several through `compose`, which makes each step an async function (a frame,
 * a promise and an await per step and request, and one more around the whole chain). Here a
 * step's promise gets a reaction instead, and a step that answers at once costs no promise.
 *
 * What a step sees is what `compose` gives it: `next()` runs the following steps and returns
 * a promise of the context; an error a step throws (or its promise rejects with) is answered
 * by the error handler at that step, so the steps around it go on as after any answer; an
 * answer a step returns becomes `c.res` unless an answer is set already; past the last step
 * the answer is the not-found handler's, unless one is set; `next()` called twice rejects.
 *
 * ```ts
 * app.onError(onError);
 * app.all("*", chain([requestLog(log), cors(config), route], onError, notFound));
 * ```
 */
import type { Context, ErrorHandler, MiddlewareHandler, NotFoundHandler } from "hono";
import type { AppEnv } from "./env.ts";

type Step = MiddlewareHandler<AppEnv>;

/** The steps as one handler (see the module comment). */
export function chain(
  steps: Step[],
  onError: ErrorHandler<AppEnv>,
  onNotFound: NotFoundHandler<AppEnv>,
): Step {
  return (c) => {
    let index = -1;
    /** The step `i` (and those after it), its outcome set on `c`. */
    const dispatch = (i: number): Promise<Context<AppEnv>> => {
      if (i <= index) return Promise.reject(new Error("next() called multiple times"));
      index = i;
      const step = steps[i];
      const settle = (res: unknown, failed: boolean): Context<AppEnv> => {
        if (res && (c.finalized === false || failed)) c.res = res as Response;
        return c;
      };
      const fail = (error: unknown): Promise<Context<AppEnv>> | Context<AppEnv> => {
        if (!(error instanceof Error)) throw error;
        c.error = error;
        const answer = onError(error, c);
        return answer instanceof Promise
          ? answer.then((res) => settle(res, true))
          : settle(answer, true);
      };
      let res: unknown;
      try {
        res = step === undefined
          ? (c.finalized === false ? onNotFound(c) : undefined)
          : step(c, () => dispatch(i + 1) as Promise<unknown> as Promise<void>);
      } catch (error) {
        if (step === undefined) return Promise.reject(error);
        try {
          return Promise.resolve(fail(error));
        } catch (again) {
          return Promise.reject(again);
        }
      }
      if (res instanceof Promise) {
        return res.then(
          (value) => settle(value, false),
          step === undefined ? undefined : fail,
        );
      }
      return Promise.resolve(settle(res, false));
    };
    return dispatch(0).then((context) => {
      if (!context.finalized) {
        throw new Error(
          "Context is not finalized. Did you forget to return a Response object or `await next()`?",
        );
      }
      return context.res;
    });
  };
}
