/** The Hono environment of the app: the variables middlewares set for later ones. */
import type { Hit } from "../ratelimit/mod.ts";
import type { Account } from "../services/runtime.ts";
import type { Target } from "./target.ts";
import type { RequestFields } from "../log.ts";

/** The fields of one request's answer that middlewares give in advance (answer_fields.ts). */
export interface LateFields {
  /** Fields set on the answer (lowercase names), replacing any the answer has. */
  headers: Record<string, string>;
  /** Tokens appended to the answer's `Vary`, each unless it names it already (or `*`). */
  vary: string[];
}

export type AppEnv = {
  Variables: {
    /** Set by the resolving middleware, first: what the request addresses. */
    target: Target;
    method: string;
    /**
     * Set by the request log: the fields every log record about the request carries (the
     * method override updates `method`).
     */
    logFields: RequestFields;
    /** Set by the rate-limit middleware: the counted hit, or null when not counted. */
    rateLimit: Hit | null | undefined;
    /** Set by the authentication middleware: the authenticated account. */
    account?: Account;
    /** Fields middlewares add to the answer, given before it is made (answer_fields.ts). */
    lateFields?: LateFields;
  };
};
