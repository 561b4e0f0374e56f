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
 * Eve's `check_auth`: the embedding app authenticates `request` for `method` on `resource`
 * (null for the home and schema endpoints) and answers the account, or null to refuse.
 */
export type AuthenticateFn = (
  request: Request,
  resource: string | null,
  method: string,
) => Promise<{ id: unknown; roles?: string[] } | null> | { id: unknown; roles?: string[] } | null;

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
