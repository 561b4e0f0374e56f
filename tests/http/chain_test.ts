/**
 * The middleware steps run as one handler (src/http/chain.ts) behave as Hono's own chain of
 * the same steps: each case is run both ways and must give the same answer and the same
 * order of events.
 */
import assert from "node:assert/strict";
import { type ErrorHandler, Hono, type MiddlewareHandler, type NotFoundHandler } from "hono";
import { chain } from "../../src/http/chain.ts";
import type { AppEnv } from "../../src/http/env.ts";

type Step = MiddlewareHandler<AppEnv>;

/** A step that may answer at once (the app's steps do: `return next()`, a route's answer). */
const sync = (fn: (...args: Parameters<Step>) => unknown) => fn as unknown as Step;

/** The steps of a case, given the list its events go to. */
type Case = (events: string[]) => Step[];

const CASES: Record<string, Case> = {
  "steps around an answer, sync and async": (events) => [
    async (_c, next) => {
      events.push("outer in");
      await next();
      events.push("outer out");
    },
    sync((_c, next) => {
      events.push("sync");
      return next();
    }),
    sync((c) => {
      events.push("route");
      return c.text("ok", 201);
    }),
  ],
  "an error thrown at a step is answered there; the steps around go on": (events) => [
    async (c, next) => {
      await next();
      events.push(`outer sees ${c.res.status}`);
    },
    sync(() => {
      throw new Error("boom");
    }),
  ],
  "a rejection at an async step is answered there": (events) => [
    async (c, next) => {
      await next();
      events.push(`outer sees ${c.res.status}`);
      c.res.headers.set("x-outer", "1");
    },
    async () => {
      await Promise.resolve();
      throw new Error("late boom");
    },
  ],
  "an error in an outer step's after-part": (events) => [
    async (c, next) => {
      await next();
      events.push(`outer sees ${c.res.status}`);
    },
    async (_c, next) => {
      await next();
      throw new Error("after");
    },
    sync((c) => c.text("fine")),
  ],
  "a step that answers without next": (events) => [
    sync((c) => {
      events.push("first");
      return c.text("early", 202);
    }),
    sync((c) => {
      events.push("never");
      return c.text("late");
    }),
  ],
  "next past the last step": (events) => [
    async (_c, next) => {
      await next();
      events.push("after the end");
    },
  ],
  "a step that sets the answer and returns another": () => [
    async (c, next) => {
      await next();
      return c.text("ignored", 500);
    },
    sync((c) => {
      c.res = new Response("set", { status: 203 });
      return Promise.resolve();
    }),
  ],
  "a step that never answers": () => [
    async () => {},
  ],
  "next called twice": (events) => [
    async (_c, next) => {
      await next();
      try {
        await next();
      } catch (error) {
        events.push((error as Error).message);
      }
    },
    sync((c) => c.text("once")),
  ],
  "a thrown value that is not an Error": () => [
    sync(() => {
      throw "text";
    }),
  ],
};

const onError: ErrorHandler<AppEnv> = (error, c) => c.text(`error: ${error.message}`, 500);
const notFound: NotFoundHandler<AppEnv> = (c) => c.text("404 Not Found", 404);

/** The answer of `steps` and its events, through Hono's chain or as one handler. */
async function run(steps: Case, alone: boolean) {
  const events: string[] = [];
  const app = new Hono<AppEnv>();
  app.onError(onError);
  app.notFound(notFound);
  // A first step that passes on: Hono runs a lone handler otherwise than a chain, and the
  // app always has several steps.
  const list = [sync((_c, next) => next()), ...steps(events)];
  if (alone) app.all("*", chain(list, onError, notFound));
  else for (const step of list) app.use("*", step);
  let answer: { status: number; text: string; outer: string | null } | string;
  try {
    const res = await app.fetch(new Request("http://localhost/x"));
    answer = { status: res.status, text: await res.text(), outer: res.headers.get("x-outer") };
  } catch (error) {
    answer = `thrown: ${String(error)}`;
  }
  return { answer, events };
}

for (const [name, steps] of Object.entries(CASES)) {
  Deno.test(`chain: ${name}, as Hono's own chain`, async () => {
    const hono = await run(steps, false);
    const alone = await run(steps, true);
    assert.deepEqual(alone, hono);
  });
}
