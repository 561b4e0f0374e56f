/**
 * Authorisation questions other features ask (the schema endpoint, the operation log).
 */
import type { Resource } from "../domain/types.ts";
import type { Runtime } from "../services/runtime.ts";
import type { Account } from "./types.ts";

/**
 * Whether `account` (null: anonymous) may read `resource`: never an internal resource;
 * always without authentication; otherwise by its public methods and read roles.
 */
export function canRead(rt: Runtime, account: Account | null, resource: Resource): boolean {
  if (resource.internal) return false;
  return rt.auth ? rt.auth.canRead(account, resource) : true;
}
