/**
 * Shared shapes of authentication: the account a request acts as, and the integration
 * point an embedding app may pass to `createService` (Eve's `check_auth`).
 */

import type { Account } from "../services/runtime.ts";

export type { Account } from "../services/runtime.ts";

/** The authentication schemes a setting may name. */
export const SCHEMES = ["basic", "token", "hmac", "jwt", "custom"] as const;
export type Scheme = typeof SCHEMES[number];

/**
 * How an `authenticate` hook refuses a request naming its own challenge: the 401 carries
 * `WWW-Authenticate: <scheme> realm="<realm>"` (the realm defaults to AUTH_REALM).
 */
export interface Refusal {
  challenge: { scheme: string; realm?: string };
}

/** What an `authenticate` hook answers: the account, null to refuse, or a {@link Refusal}. */
export type AuthenticateResult = { id: unknown; roles?: string[] } | Refusal | null;

/**
 * Eve's `check_auth`: the embedding app authenticates `request` for `method` on `resource`
 * (null for the home and schema endpoints) and answers the account, or refuses: null (the
 * 401 challenges `Basic realm="<AUTH_REALM>"`, as Eve's auth classes do) or a
 * {@link Refusal} naming the scheme and realm to challenge with.
 */
export type AuthenticateFn = (
  request: Request,
  resource: string | null,
  method: string,
) => Promise<AuthenticateResult> | AuthenticateResult;

/** The WeakMap behind {@link accountOf}: the account of each authenticated request. */
const accounts = new WeakMap<Request, Account>();

/** The account `request` was authenticated as (for hooks: `accountOf(request)`), or null. */
export function accountOf(request: Request): Account | null {
  return accounts.get(request) ?? null;
}

/** Records the account of `request`. */
export function setAccount(request: Request, account: Account): void {
  accounts.set(request, account);
}
