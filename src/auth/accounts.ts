/**
 * Finds accounts by user name, token or HMAC user: in AUTH_USERS (bootstrap accounts from
 * the settings) first, then in the accounts resource. Successful verifications are cached
 * for AUTH_CACHE_SECONDS, keyed by a digest of the credentials; any write to the accounts
 * resource empties the cache.
 */
import type { Doc } from "../store/store.ts";
import { policyFilter } from "../services/policy.ts";
import { andFilters } from "../services/filters.ts";
import type { Runtime } from "../services/runtime.ts";
import { TtlCache } from "./cache.ts";
import type { AuthConfig, SettingsUser } from "./config.ts";
import { DUMMY_HASH, hashPassword, safeEqual, sha256Hex, verifyPassword } from "./secrets.ts";
import type { Account } from "./types.ts";

/** An account and the secrets its schemes check. */
interface Found {
  account: Account;
  password?: string;
  secret?: string;
}

const CACHE_MAX = 10_000;

/** Account look-ups and the verification cache. */
export class Accounts {
  #cache = new TtlCache<Found>(CACHE_MAX);
  /** Verified Basic and Token headers, by digest: repeat requests skip parsing too. */
  #headers = new TtlCache<Account>(CACHE_MAX);

  /** A hash of the cost the service writes, verified for unknown users. */
  #dummy: Promise<string>;

  constructor(readonly rt: Runtime, readonly config: AuthConfig) {
    const rounds = config.accounts?.rounds ?? 10;
    this.#dummy = rounds === 10
      ? Promise.resolve(DUMMY_HASH)
      : hashPassword(crypto.randomUUID(), rounds);
    const name = config.accounts?.resource;
    if (!name) return;
    const drop = () => this.forget();
    for (const event of ["inserted", "updated", "replaced", "deleted_item", "deleted_resource"]) {
      rt.events.on(`on_${event}_${name}`, drop);
    }
  }

  /** Empties the verification cache (an account changed). */
  forget(): void {
    this.#cache.clear();
    this.#headers.clear();
  }

  /** The account a verified `Authorization` header (Basic or opaque token) stands for. */
  byHeader(header: string): Account | undefined {
    return this.config.cacheMs > 0 ? this.#headers.get(sha256Hex(`header\0${header}`)) : undefined;
  }

  /** Remembers that `header` authenticated `account` (Basic and opaque tokens only). */
  rememberHeader(header: string, account: Account): void {
    if (this.config.cacheMs <= 0) return;
    this.#headers.set(sha256Hex(`header\0${header}`), account, Date.now() + this.config.cacheMs);
  }

  #cached(key: string): Found | undefined {
    return this.config.cacheMs > 0 ? this.#cache.get(key) : undefined;
  }

  #remember(key: string, found: Found) {
    if (this.config.cacheMs > 0) this.#cache.set(key, found, Date.now() + this.config.cacheMs);
  }

  /** Basic: the account whose user name and password match, else null (same time either way). */
  async byPassword(username: string, password: string): Promise<Account | null> {
    const key = sha256Hex(`basic\0${username}\0${password}`);
    const hit = this.#cached(key);
    if (hit) return hit.account;
    const found = await this.#find("username", username);
    const verified = await verifyPassword(password, found?.password, await this.#dummy);
    if (!verified || !found) return null;
    this.#remember(key, found);
    return found.account;
  }

  /** Token: the account holding `token`, else null. */
  async byToken(token: string): Promise<Account | null> {
    const key = sha256Hex(`token\0${token}`);
    const hit = this.#cached(key);
    if (hit) return hit.account;
    const found = await this.#find("token", token);
    if (!found) return null;
    this.#remember(key, found);
    return found.account;
  }

  /** HMAC: the account named `username` and its secret, else null. */
  async hmacUser(username: string): Promise<Found | null> {
    const key = sha256Hex(`hmac\0${username}`);
    const hit = this.#cached(key);
    if (hit) return hit;
    const found = await this.#find("secret", username);
    if (!found?.secret) return null;
    this.#remember(key, found);
    return found;
  }

  /** Looks in AUTH_USERS, then in the accounts resource. */
  async #find(by: "username" | "token" | "secret", value: string): Promise<Found | null> {
    let match: SettingsUser | undefined;
    // Every bootstrap account is compared, in constant time, whatever matches.
    for (const user of this.config.users) {
      const candidate = by === "token" ? user.token : user.username;
      if (candidate !== undefined && safeEqual(candidate, value) && !match) match = user;
    }
    if (match) {
      return {
        account: { id: match.id, roles: match.roles, username: match.username, scheme: "" },
        password: match.password,
        secret: match.secret,
      };
    }
    const config = this.config.accounts;
    if (!config) return null;
    const resource = this.rt.domain.get(config.resource)!;
    const field = by === "token" ? config.token : config.username;
    const doc = await this.rt.store.collection(resource.source).findOne(
      andFilters(policyFilter(this.rt, resource), { [field]: { $eq: value } }),
    );
    if (!doc) return null;
    return { account: toAccount(doc, resource.idField, config), ...secretsOf(doc, config) };
  }
}

function toAccount(
  doc: Doc,
  idField: string,
  config: NonNullable<AuthConfig["accounts"]>,
): Account {
  const roles = doc[config.roles];
  return {
    id: doc[idField],
    roles: Array.isArray(roles)
      ? roles.filter((r): r is string => typeof r === "string")
      : typeof roles === "string"
      ? [roles]
      : [],
    username: typeof doc[config.username] === "string" ? doc[config.username] as string : undefined,
    scheme: "",
  };
}

function secretsOf(doc: Doc, config: NonNullable<AuthConfig["accounts"]>) {
  const str = (v: unknown) => typeof v === "string" ? v : undefined;
  return { password: str(doc[config.password]), secret: str(doc[config.secret]) };
}
