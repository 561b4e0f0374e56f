/**
 * Header fields the middlewares add to every answer of a request (the CORS fields, the echoed
 * `X-Request-Id`), handed over before the answer is made, so that an answer rendered by
 * `toResponse` is made whole at once, and what a rendered answer leaves the middlewares to do.
 *
 * Why: every change to a `Response`'s headers after it is made goes through the `Headers`
 * object (name and value checks, a list scan per field) and throws away the copy Deno made for
 * sending it; reading them back costs the same checks. A middleware that would decorate the
 * answer afterwards instead puts its fields here before calling `next()`; `toResponse` writes
 * them into the answer it makes and marks it {@link isWhole}, and the middleware's after-part
 * then has nothing left to do. Answers made elsewhere (media, the API description, answers a
 * hook returns, an answer Hono re-wraps) are not marked: the middlewares decorate those
 * afterwards, as before.
 *
 * ```ts
 * app.use("*", async (c, next) => {
 *   lateFields(c).headers["x-example"] = "1"; // before: rendered answers are made with it
 *   await next();
 *   if (!isWhole(c.res)) c.res.headers.set("x-example", "1"); // any other answer
 * });
 * ```
 */
import type { Context } from "hono";
import type { AppEnv, LateFields } from "./env.ts";

export type { LateFields } from "./env.ts";

/** The request's late fields, made on first use. */
export function lateFields(c: Context<AppEnv>): LateFields {
  let fields = c.get("lateFields");
  if (!fields) {
    fields = { headers: {}, vary: [] };
    c.set("lateFields", fields);
  }
  return fields;
}

/**
 * The mark of an answer made with its request's late fields: 1, or 2 when its encoding is
 * also settled (the compression middleware has nothing to do for it: no body, too short to
 * compress, or the client accepts no encoding and `Vary` says so). A property of the answer
 * itself: a WeakSet entry per answer cost more than making the answer (measured: 1.6-2.8 us
 * against 0.15 us for the `Response`).
 */
const MARK: unique symbol = Symbol("answer fields");

type Marked = Response & { [MARK]?: 1 | 2 };

/** Whether `response` was made with its request's late fields in it. */
export function isWhole(response: Response): boolean {
  return (response as Marked)[MARK] !== undefined;
}

/** Whether the compression middleware may leave `response` as it is. */
export function isSettled(response: Response): boolean {
  return (response as Marked)[MARK] === 2;
}

/** Marks `response` as made whole and, when `encodingSettled`, as needing no compression. */
export function markAnswer(response: Response, encodingSettled: boolean): Response {
  (response as Marked)[MARK] = encodingSettled ? 2 : 1;
  return response;
}

/**
 * Writes `fields` into `headers` (lowercase names): fields replace, `Vary` tokens are appended
 * (see {@link withToken}).
 */
export function applyLateFields(headers: Record<string, string>, fields: LateFields): void {
  for (const name in fields.headers) headers[name] = fields.headers[name];
  for (const token of fields.vary) headers.vary = withToken(headers.vary, token);
}

/**
 * The comma-separated field value `current` with `token` added, unless it holds it already
 * (compared without case) or holds `*`.
 */
export function withToken(current: string | null | undefined, token: string): string {
  if (!current) return token;
  const tokens = current.split(",").map((t) => t.trim().toLowerCase());
  return tokens.includes(token.toLowerCase()) || tokens.includes("*")
    ? current
    : `${current}, ${token}`;
}
