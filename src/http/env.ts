/** The Hono environment of the app: the variables middlewares set for later ones. */
import type { Hit } from "../ratelimit/mod.ts";
import type { Account } from "../services/runtime.ts";
import type { Target } from "./target.ts";
import type { LateFields } from "./answer_fields.ts";

export type AppEnv = {
  Variables: {
    /** Set by the resolving middleware, first: what the request addresses. */
    target: Target;
    method: string;
    /** Set by the rate-limit middleware: the counted hit, or null when not counted. */
    rateLimit: Hit | null | undefined;
    /** Set by the authentication middleware: the authenticated account. */
    account?: Account;
    /** Fields middlewares add to the answer, given before it is made (answer_fields.ts). */
    lateFields?: LateFields;
  };
};
