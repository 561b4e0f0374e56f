/**
 * Reads the authentication settings once at start-up into a checked configuration; every
 * mistake is a start-up problem naming its setting.
 */
import type { Settings } from "../settings/check.ts";
import { optionReader, type ResourceOptions } from "../settings/keys.ts";
import { isPlainObject } from "../util/plain.ts";
import type { Doc } from "../store/store.ts";
import { type AuthenticateFn, type Scheme, SCHEMES } from "./types.ts";

/** Where accounts live in the domain, and the names of their fields. */
export interface AccountsConfig {
  resource: string;
  username: string;
  password: string;
  roles: string;
  token: string;
  secret: string;
  /** bcrypt cost of hashes written by the service. */
  rounds: number;
}

/** An account from AUTH_USERS (bootstrap administrators). */
export interface SettingsUser {
  id: unknown;
  username: string;
  /** bcrypt hash. */
  password?: string;
  roles: string[];
  token?: string;
  secret?: string;
}

export interface JwtConfig {
  secret?: string;
  publicKey?: string;
  jwksFile?: string;
  jwksUrl?: string;
  algorithms: string[];
  issuer?: string | string[];
  audience?: string | string[];
  userClaim: string;
  rolesClaim: string;
  requiredClaims: string[];
  clockTolerance: number;
}

/** Per-resource rules: Eve's names, resolved against the globals. */
export interface ResourceRules {
  /** false: public; otherwise the schemes accepted (all configured ones by default). */
  schemes: Set<Scheme> | false;
  publicMethods: Set<string>;
  publicItemMethods: Set<string>;
  allowedRoles: string[];
  allowedReadRoles: string[];
  allowedWriteRoles: string[];
  allowedItemRoles: string[];
  allowedItemReadRoles: string[];
  allowedItemWriteRoles: string[];
  authField: string | null;
}

export interface AuthConfig {
  schemes: Set<Scheme>;
  realm: string;
  accounts?: AccountsConfig;
  users: SettingsUser[];
  jwt?: JwtConfig;
  cacheMs: number;
  skewMs: number;
  custom?: AuthenticateFn;
  resources: Map<string, ResourceRules>;
  publicMethods: Set<string>;
  allowedRoles: string[];
  allowedReadRoles: string[];
  allowedWriteRoles: string[];
}

const BCRYPT = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/;
const upper = (list: unknown) => new Set((list as string[]).map((m) => m.toUpperCase()));

/**
 * The authentication configuration, or null when the API has none (no AUTH_SCHEMES and no
 * `authenticate` option). Problems are appended to `problems`.
 */
export function authConfig(
  settings: Settings,
  options: { custom?: AuthenticateFn; problems: string[] },
): AuthConfig | null {
  const { problems } = options;
  const schemes = new Set<Scheme>();
  for (const name of settings.AUTH_SCHEMES) {
    const scheme = name.toLowerCase() as Scheme;
    if (!SCHEMES.includes(scheme) || scheme === "custom") {
      problems.push(`AUTH_SCHEMES: unknown scheme "${name}" (known: basic, token, hmac, jwt)`);
    } else schemes.add(scheme);
  }
  if (options.custom) schemes.add("custom");
  const domain = settings.DOMAIN as Record<string, Doc>;
  if (schemes.size === 0) {
    refuseUnprotected(settings, problems);
    return null;
  }
  const accounts = accountsConfig(settings, domain, problems);
  const users = settingsUsers(settings.AUTH_USERS, problems);
  if ((schemes.has("basic") || schemes.has("token") || schemes.has("hmac")) && !accounts) {
    if (users.length === 0) {
      problems.push("AUTH_SCHEMES: basic, token and hmac need AUTH_ACCOUNTS or AUTH_USERS");
    }
  }
  const jwt = schemes.has("jwt") ? jwtConfig(settings.AUTH_JWT, problems) : undefined;
  if (!schemes.has("jwt") && settings.AUTH_JWT) {
    problems.push('AUTH_JWT: given but AUTH_SCHEMES does not name "jwt"');
  }
  if (settings.AUTH_CACHE_SECONDS < 0) {
    problems.push("AUTH_CACHE_SECONDS: must be 0 or more");
  }
  if (settings.AUTH_HMAC_MAX_SKEW < 1) {
    problems.push("AUTH_HMAC_MAX_SKEW: must be at least 1");
  }
  const resources = new Map<string, ResourceRules>();
  for (const [name, raw] of Object.entries(domain)) {
    resources.set(name, resourceRules(settings, { name, raw, schemes, problems }));
  }
  return {
    schemes,
    realm: settings.AUTH_REALM,
    accounts,
    users,
    jwt,
    cacheMs: settings.AUTH_CACHE_SECONDS * 1000,
    skewMs: settings.AUTH_HMAC_MAX_SKEW * 1000,
    custom: options.custom,
    resources,
    publicMethods: upper(settings.PUBLIC_METHODS),
    allowedRoles: settings.ALLOWED_ROLES,
    allowedReadRoles: settings.ALLOWED_READ_ROLES,
    allowedWriteRoles: settings.ALLOWED_WRITE_ROLES,
  };
}

/** Roles or user restriction without any scheme would serve unprotected: refused. */
function refuseUnprotected(settings: Settings, problems: string[]) {
  const keys: Array<keyof Settings & `ALLOWED_${string}`> = [
    "ALLOWED_ROLES",
    "ALLOWED_READ_ROLES",
    "ALLOWED_WRITE_ROLES",
    "ALLOWED_ITEM_ROLES",
    "ALLOWED_ITEM_READ_ROLES",
    "ALLOWED_ITEM_WRITE_ROLES",
  ];
  const set: string[] = keys.filter((k) => settings[k].length > 0);
  if (settings.AUTH_FIELD) set.push("AUTH_FIELD");
  for (const [name, raw] of Object.entries(settings.DOMAIN as Record<string, Doc>)) {
    for (const key of [...keys.map((k) => k.toLowerCase()), "auth_field"]) {
      if (raw[key] !== undefined && raw[key] !== null && (raw[key] as unknown[]).length !== 0) {
        set.push(`DOMAIN.${name}.${key}`);
      }
    }
    if (raw.authentication !== undefined && raw.authentication !== false) {
      set.push(`DOMAIN.${name}.authentication`);
    }
  }
  for (const key of set) {
    problems.push(
      `${key}: needs AUTH_SCHEMES (or an authenticate option); refusing to start unprotected`,
    );
  }
}

function accountsConfig(
  settings: Settings,
  domain: Record<string, Doc>,
  problems: string[],
): AccountsConfig | undefined {
  const raw = settings.AUTH_ACCOUNTS;
  if (!raw) return undefined;
  const known = ["resource", "username", "password", "roles", "token", "secret", "rounds"];
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) {
      problems.push(`AUTH_ACCOUNTS.${key}: unknown key (known: ${known.join(", ")})`);
    }
  }
  const str = (key: string, fallback: string) => {
    const value = raw[key] ?? fallback;
    if (typeof value !== "string" || !value) {
      problems.push(`AUTH_ACCOUNTS.${key}: must be a field name`);
      return fallback;
    }
    return value;
  };
  const config: AccountsConfig = {
    resource: str("resource", "accounts"),
    username: str("username", "username"),
    password: str("password", "password"),
    roles: str("roles", "roles"),
    token: str("token", "token"),
    secret: str("secret", "secret"),
    rounds: typeof raw.rounds === "number" ? raw.rounds : 10,
  };
  if (!Number.isInteger(config.rounds) || config.rounds < 4 || config.rounds > 15) {
    problems.push("AUTH_ACCOUNTS.rounds: must be an integer from 4 to 15");
  }
  if (!Object.hasOwn(domain, config.resource)) {
    problems.push(`AUTH_ACCOUNTS.resource: "${config.resource}" is not a resource of DOMAIN`);
  }
  return config;
}

function settingsUsers(raw: unknown, problems: string[]): SettingsUser[] {
  if (!Array.isArray(raw)) {
    problems.push("AUTH_USERS: must be a list of accounts");
    return [];
  }
  const users: SettingsUser[] = [];
  raw.forEach((user, i) => {
    const path = `AUTH_USERS[${i}]`;
    if (!isPlainObject(user) || typeof user.username !== "string" || !user.username) {
      problems.push(`${path}: must be an object with a "username"`);
      return;
    }
    if (user.password !== undefined && !BCRYPT.test(String(user.password))) {
      problems.push(
        `${path}.password: must be a bcrypt hash ("deno task hash-password" makes one), ` +
          "never the password itself",
      );
    }
    const roles = user.roles ?? [];
    if (!Array.isArray(roles) || !roles.every((r) => typeof r === "string")) {
      problems.push(`${path}.roles: must be a list of strings`);
    }
    for (const key of ["token", "secret"]) {
      if (user[key] !== undefined && (typeof user[key] !== "string" || user[key].length < 16)) {
        problems.push(`${path}.${key}: must be a string of at least 16 characters`);
      }
    }
    users.push({
      id: user.id ?? user.username,
      username: user.username,
      password: user.password as string | undefined,
      roles: Array.isArray(roles) ? roles as string[] : [],
      token: user.token as string | undefined,
      secret: user.secret as string | undefined,
    });
  });
  return users;
}

const HS = ["HS256", "HS384", "HS512"];
const ASYMMETRIC = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
];

function jwtConfig(raw: Doc | null, problems: string[]): JwtConfig | undefined {
  if (!raw) {
    problems.push('AUTH_JWT: needed when AUTH_SCHEMES names "jwt"');
    return undefined;
  }
  const known = [
    "secret",
    "public_key",
    "jwks_file",
    "jwks_url",
    "algorithms",
    "issuer",
    "audience",
    "user_claim",
    "roles_claim",
    "required_claims",
    "clock_tolerance",
  ];
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) problems.push(`AUTH_JWT.${key}: unknown key`);
  }
  const sources = ["secret", "public_key", "jwks_file", "jwks_url"].filter((k) => raw[k]);
  if (sources.length !== 1) {
    problems.push("AUTH_JWT: give exactly one of secret, public_key, jwks_file, jwks_url");
    return undefined;
  }
  const symmetric = sources[0] === "secret";
  if (symmetric && (typeof raw.secret !== "string" || raw.secret.length < 32)) {
    problems.push("AUTH_JWT.secret: must be a string of at least 32 characters");
  }
  const algorithms = (raw.algorithms ?? (symmetric ? ["HS256"] : ["RS256", "ES256"])) as string[];
  // Algorithm confusion: a public key is never used as an HMAC secret, nor a secret as a key.
  const allowed = symmetric ? HS : ASYMMETRIC;
  if (!Array.isArray(algorithms) || algorithms.length === 0) {
    problems.push("AUTH_JWT.algorithms: must be a non-empty list");
  } else {
    for (const alg of algorithms) {
      if (!allowed.includes(alg)) {
        problems.push(
          `AUTH_JWT.algorithms: "${alg}" can't be used with ${sources[0]} ` +
            `(allowed: ${allowed.join(", ")})`,
        );
      }
    }
  }
  if (sources[0] === "public_key" && algorithms.length > 1) {
    const families = new Set(algorithms.map((a) => a.slice(0, 2)));
    if (families.size > 1) {
      problems.push("AUTH_JWT.algorithms: a public_key serves one key type (RS/PS or ES)");
    }
  }
  return {
    secret: raw.secret as string | undefined,
    publicKey: raw.public_key as string | undefined,
    jwksFile: raw.jwks_file as string | undefined,
    jwksUrl: raw.jwks_url as string | undefined,
    algorithms,
    issuer: raw.issuer as string | undefined,
    audience: raw.audience as string | undefined,
    userClaim: (raw.user_claim as string | undefined) ?? "sub",
    rolesClaim: (raw.roles_claim as string | undefined) ?? "roles",
    requiredClaims: (raw.required_claims as string[] | undefined) ?? ["exp"],
    clockTolerance: (raw.clock_tolerance as number | undefined) ?? 0,
  };
}

function resourceRules(
  settings: Settings,
  options: { name: string; raw: Doc; schemes: Set<Scheme>; problems: string[] },
): ResourceRules {
  const { name, raw, schemes, problems } = options;
  // The checked DOMAIN entry (checkSettings typed each key by its kind).
  const get = optionReader(settings, raw as ResourceOptions);
  let own: Set<Scheme> | false = schemes;
  const auth = raw.authentication;
  if (auth === false) own = false;
  else if (auth !== undefined && auth !== true) {
    const names = typeof auth === "string" ? [auth] : auth;
    if (!Array.isArray(names) || !names.every((n) => typeof n === "string")) {
      problems.push(`DOMAIN.${name}.authentication: must be true, false or scheme name(s)`);
    } else {
      own = new Set();
      for (const n of names) {
        const scheme = n.toLowerCase() as Scheme;
        if (!schemes.has(scheme)) {
          problems.push(`DOMAIN.${name}.authentication: "${n}" is not in AUTH_SCHEMES`);
        } else own.add(scheme);
      }
    }
  }
  return {
    schemes: own,
    publicMethods: upper(get("public_methods")),
    publicItemMethods: upper(get("public_item_methods")),
    allowedRoles: get("allowed_roles"),
    allowedReadRoles: get("allowed_read_roles"),
    allowedWriteRoles: get("allowed_write_roles"),
    allowedItemRoles: get("allowed_item_roles"),
    allowedItemReadRoles: get("allowed_item_read_roles"),
    allowedItemWriteRoles: get("allowed_item_write_roles"),
    // The operation log names the account of each entry in `u`: users see their own entries.
    authField: name === settings.OPLOG_NAME && !("auth_field" in raw) && settings.AUTH_FIELD
      ? "u"
      : get("auth_field") ?? null,
  };
}

/**
 * Hides the accounts' secrets (password hash, token, HMAC secret) from every read, by adding
 * them to the `hidden_fields` of the accounts resource, and of every other resource on the same
 * collection, before the domain is built.
 */
export function hideSecrets(settings: Settings): void {
  const raw = settings.AUTH_ACCOUNTS;
  if (!raw || settings.AUTH_SCHEMES.length === 0) return;
  const name = (raw.resource as string | undefined) ?? "accounts";
  const domain = settings.DOMAIN as Record<string, Doc>;
  if (!Object.hasOwn(domain, name)) return;
  const fields = ["password", "token", "secret"].map((k) => (raw[k] as string | undefined) ?? k);
  const sourceOf = (r: Doc) => ((r.datasource as Doc | undefined)?.source as string) ?? undefined;
  const source = sourceOf(domain[name]) ?? name;
  // Every endpoint on the accounts' collection: views of it hide the secrets too.
  for (const [other, resource] of Object.entries(domain)) {
    if ((sourceOf(resource) ?? other) !== source) continue;
    const hidden = (resource.hidden_fields as string[] | undefined) ?? [];
    resource.hidden_fields = [...new Set([...hidden, ...fields])];
  }
}
