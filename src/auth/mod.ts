/**
 * Authentication and authorisation, configured from settings (docs/authentication.md):
 * who a request acts as (Basic, Token, HMAC, JWT bearer or the embedding app's
 * `authenticate`), whether that account may use the endpoint (Eve's public methods and
 * allowed roles), and which documents it may touch (AUTH_FIELD).
 */
import { ServiceError } from "../services/errors.ts";
import type { Resource } from "../domain/types.ts";
import { ruleMethod } from "../domain/methods.ts";
import type { Doc, Filter } from "../store/store.ts";
import type { AccessControl, RequestContext, Runtime } from "../services/runtime.ts";
import { Accounts } from "./accounts.ts";
import type { AuthConfig, ResourceRules } from "./config.ts";
import { MAX_HEADER, parseAuthorization } from "./credentials.ts";
import { HmacVerifier, stringToSign } from "./hmac.ts";
import { JwtVerifier } from "./jwt.ts";
import { hashPassword } from "./secrets.ts";
import type { Account, Refusal, Scheme } from "./types.ts";
import { type RequestFields, withLogContext } from "../log.ts";
import { type BodyRate, RateWatch } from "../util/body_rate.ts";
import { keepBody } from "../util/read_body.ts";

/** Whether `value` is an id object (an ObjectId or the like: it prints as its value). */
function isIdLike(value: object): boolean {
  return typeof (value as { toHexString?: unknown }).toHexString === "function";
}

/** Whether an `authenticate` hook's answer is a refusal naming its challenge. */
function isRefusal(answer: object): answer is Refusal {
  const challenge = (answer as { challenge?: unknown }).challenge;
  return typeof challenge === "object" && challenge !== null &&
    typeof (challenge as { scheme?: unknown }).scheme === "string";
}

export type { Account, AuthenticateFn, AuthenticateResult, Refusal } from "./types.ts";
export { accountOf } from "./types.ts";

/** What a request addresses, as far as authorisation goes. */
export interface AuthTarget {
  kind: "collection" | "item" | "lookup" | "home" | "schema" | "media";
  resource: Resource | null;
  /** Effective method (after method override). */
  method: string;
}

const READ = new Set(["GET", "HEAD", "OPTIONS"]);
const CHALLENGE: Record<string, string> = {
  basic: "Basic",
  token: "Bearer",
  jwt: "Bearer",
  hmac: "HMAC",
};

/** The service's authentication, built once at start-up. */
export class Auth implements AccessControl {
  readonly accounts: Accounts;
  readonly hmac: HmacVerifier;

  private constructor(
    readonly rt: Runtime,
    readonly config: AuthConfig,
    readonly jwt: JwtVerifier | undefined,
  ) {
    this.accounts = new Accounts(rt, config);
    this.hmac = new HmacVerifier(config.skewMs);
  }

  /** Builds the authentication of `rt` (loads JWT keys). */
  static async create(rt: Runtime, config: AuthConfig): Promise<Auth> {
    const jwt = config.jwt ? await JwtVerifier.create(config.jwt, rt.log) : undefined;
    return new Auth(rt, config, jwt);
  }

  rules(resource: Resource): ResourceRules | undefined {
    return this.config.resources.get(resource.name);
  }

  /**
   * The roles `target` needs: null when it is public, an empty list when any account will
   * do. Eve's rules: OPTIONS is always public; HEAD is public when GET is.
   */
  required(target: AuthTarget): string[] | null {
    const method = ruleMethod(target.method);
    if (method === "OPTIONS") return null;
    const read = READ.has(method);
    const c = this.config;
    if (!target.resource) {
      if (c.publicMethods.has(method)) return null;
      return [...c.allowedRoles, ...(read ? c.allowedReadRoles : c.allowedWriteRoles)];
    }
    const rules = this.rules(target.resource);
    if (!rules || rules.schemes === false) return null;
    if (target.kind === "collection") {
      if (rules.publicMethods.has(method)) return null;
      return [...rules.allowedRoles, ...(read ? rules.allowedReadRoles : rules.allowedWriteRoles)];
    }
    if (rules.publicItemMethods.has(method)) return null;
    return [
      ...rules.allowedItemRoles,
      ...(read ? rules.allowedItemReadRoles : rules.allowedItemWriteRoles),
    ];
  }

  /** Whether `account` (null: anonymous) may read `resource` (the schema endpoint asks). */
  canRead(account: Account | null, resource: Resource): boolean {
    if (resource.internal) return false;
    const roles = this.required({ kind: "collection", resource, method: "GET" });
    if (roles === null) return true;
    return account !== null && hasRole(account, roles);
  }

  /** 403 unless `account` holds one of `roles` (an empty list lets every account in). */
  authorize(account: Account, roles: string[]): void {
    if (!hasRole(account, roles)) {
      throw new ServiceError("forbidden", "You are not allowed to access this resource.");
    }
  }

  /**
   * The 401 answer, with a challenge per scheme accepted at `target` (`options.refusal`: the
   * one an `authenticate` hook named for the custom scheme). A script's request
   * (`X-Requested-With: XMLHttpRequest`, as the docs page sends) gets no Basic challenge:
   * browsers answer that one with their own login dialog, and the page has its own form.
   */
  unauthorized(
    target: AuthTarget,
    message = "Please provide proper credentials.",
    options: { refusal?: Refusal; request?: Request } = {},
  ): ServiceError {
    const { refusal, request } = options;
    const quoted = (text: string) => text.replace(/["\\\r\n]/g, "");
    const realm = quoted(this.config.realm);
    const token = (name: string) => /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(name);
    const custom = refusal && token(refusal.challenge.scheme)
      ? `${refusal.challenge.scheme} realm="${quoted(refusal.challenge.realm ?? realm)}"`
      : undefined;
    const scripted = request?.headers.get("x-requested-with")?.toLowerCase() === "xmlhttprequest";
    const challenges = [...new Set([...this.#schemesFor(target)].map((s) => CHALLENGE[s]))]
      .filter((name) => name && !(scripted && name === "Basic"))
      .map((name) => `${name} realm="${realm}"`);
    if (custom) challenges.unshift(custom);
    else if (challenges.length === 0 && !scripted) challenges.push(`Basic realm="${realm}"`);
    const headers: Record<string, string> = challenges.length
      ? { "www-authenticate": challenges.join(", ") }
      : {};
    return new ServiceError("unauthorized", message, { headers });
  }

  #schemesFor(target: AuthTarget): Set<Scheme> {
    const rules = target.resource ? this.rules(target.resource) : undefined;
    return rules?.schemes || this.config.schemes;
  }

  /**
   * Authenticates `request` for `target`: the account, or a 401 (400 for an oversized
   * header). Failures are logged with the request's fields (`fields`), never with the
   * credentials. Credentials already checked answer at once; anything else (the
   * `authenticate` hook, an account lookup) runs in the request's log context.
   */
  authenticate(request: Request, target: AuthTarget, fields: RequestFields): Promise<Account> {
    const schemes = this.#schemesFor(target);
    const header = request.headers.get("authorization");
    if (header !== null && header.length > MAX_HEADER) {
      return Promise.reject(
        new ServiceError("bad-request", "The Authorization header is too large."),
      );
    }
    if (header !== null && !(schemes.has("custom") && this.config.custom)) {
      const known = this.accounts.byHeader(header);
      if (known && schemes.has(known.scheme as Scheme)) return Promise.resolve(known);
    }
    const read = { schemes, header, fields };
    return withLogContext(fields, () => this.#authenticate(request, target, read));
  }

  async #authenticate(
    request: Request,
    target: AuthTarget,
    { schemes, header, fields }: {
      schemes: Set<Scheme>;
      header: string | null;
      fields: RequestFields;
    },
  ): Promise<Account> {
    let refusal: Refusal | undefined;
    const fail = (reason: string, scheme = "none"): never => {
      this.rt.log.log("warn", "authentication failed", { ...fields, scheme, reason });
      throw this.unauthorized(target, undefined, { refusal, request });
    };
    if (schemes.has("custom") && this.config.custom) {
      const found = await this.config.custom(request, target.resource?.name ?? null, target.method);
      if (found && isRefusal(found)) refusal = found;
      else if (found) return { id: found.id, roles: found.roles ?? [], scheme: "custom" };
      if (schemes.size === 1) return fail("refused by the application", "custom");
    }
    if (header !== null) {
      const known = this.accounts.byHeader(header);
      if (known && schemes.has(known.scheme as Scheme)) return known;
    }
    const credentials = parseAuthorization(header);
    if (credentials === null) return fail("no credentials");
    if (credentials === "malformed") return fail("malformed Authorization header");
    let account: Account | null = null;
    let scheme: Scheme;
    if (credentials.kind === "basic") {
      if (credentials.password === "" && schemes.has("token")) {
        scheme = "token";
        account = await this.accounts.byToken(credentials.username);
      } else {
        scheme = "basic";
        if (!schemes.has("basic")) return fail("scheme not accepted", scheme);
        account = await this.accounts.byPassword(credentials.username, credentials.password);
      }
    } else if (credentials.kind === "bearer") {
      const isJwt = credentials.token.split(".").length === 3;
      scheme = isJwt && schemes.has("jwt") ? "jwt" : "token";
      if (!schemes.has(scheme)) return fail("scheme not accepted", scheme);
      account = scheme === "jwt"
        ? await this.jwt!.verify(credentials.token)
        : await this.accounts.byToken(credentials.token);
    } else {
      scheme = "hmac";
      if (!schemes.has("hmac")) return fail("scheme not accepted", scheme);
      account = await this.#hmac(request, credentials, fail);
    }
    if (!account) return fail("bad credentials", scheme);
    const result = { ...account, scheme };
    if (scheme === "basic" || scheme === "token") this.accounts.rememberHeader(header!, result);
    return result;
  }

  async #hmac(
    request: Request,
    credentials: { username: string; signature: string },
    fail: (reason: string, scheme?: string) => never,
  ): Promise<Account | null> {
    const date = request.headers.get("date") ?? request.headers.get("x-date");
    const problem = this.hmac.checkDate(date);
    if (problem) return fail(problem, "hmac");
    const { MIN_REQUEST_BODY_RATE: bytesPerSecond, MIN_REQUEST_BODY_RATE_GRACE_MS: graceMs } =
      this.rt.settings;
    const body = await readLimited(
      request,
      this.rt.settings.MAX_BODY_SIZE,
      bytesPerSecond > 0 ? { bytesPerSecond, graceMs } : null,
    );
    const found = await this.accounts.hmacUser(credentials.username);
    const text = stringToSign(request, body, date!);
    // An unknown user is checked against a throw-away secret: same work, same answer.
    const secret = found?.secret ?? crypto.randomUUID();
    if (!this.hmac.verify(secret, text, credentials.signature) || !found) return null;
    if (!this.hmac.remember(credentials.signature, date!)) return fail("replayed", "hmac");
    return found.account;
  }

  /** The condition restricting `resource`'s documents to `account`'s (AUTH_FIELD). */
  ownerField(resource: Resource): string | null {
    return this.rules(resource)?.authField ?? null;
  }

  ownerFilter(resource: Resource, account: Account | null | undefined): Filter | undefined {
    const field = this.rules(resource)?.authField;
    if (!field || !account) return undefined;
    return { [field]: account.id };
  }

  assertOwnRequest(ctx: RequestContext, filters: Array<Filter | undefined>): void {
    const field = this.rules(ctx.resource)?.authField;
    const account = ctx.account;
    if (!field || !account || ctx.internal) return;
    for (const filter of filters) {
      if (!filter || !Object.hasOwn(filter, field)) continue;
      const value = filter[field];
      // Conditions with operators ({"$in": ...}) are left to the owner filter, as in Eve.
      if (typeof value === "object" && value !== null && !isIdLike(value)) continue;
      if (String(value) !== String(account.id)) {
        throw this.unauthorized(
          { kind: "collection", resource: ctx.resource, method: ctx.method },
          "Incompatible User-Restricted Resource request.",
        );
      }
    }
  }

  /**
   * Prepares documents about to be written: hashes the accounts' passwords, and stamps
   * (or checks) the owner field. `original` is the stored document of a PUT; `patch` marks
   * PATCH changes.
   */
  async prepareWrite(
    ctx: RequestContext,
    docs: Doc[],
    options: { original?: Doc; patch?: boolean } = {},
  ): Promise<void> {
    const accounts = this.config.accounts;
    if (accounts && ctx.resource.name === accounts.resource) {
      for (const doc of docs) {
        const password = doc[accounts.password];
        if (typeof password === "string") {
          doc[accounts.password] = await hashPassword(password, accounts.rounds);
        }
      }
    }
    const field = this.rules(ctx.resource)?.authField;
    const account = ctx.account;
    if (!field || !account || ctx.internal) return;
    const mine = (value: unknown) => String(value) === String(account.id);
    for (const doc of docs) {
      const value = doc[field];
      if (value === undefined) {
        if (options.patch) continue;
        const kept = options.original?.[field];
        doc[field] = kept !== undefined ? kept : account.id;
      } else if (Array.isArray(value)) {
        if (!value.some(mine)) throw ownerRefused(field);
      } else if (mine(value)) doc[field] = account.id;
      else throw ownerRefused(field);
    }
  }
}

function ownerRefused(field: string): ServiceError {
  return new ServiceError("forbidden", `"${field}" must name the requesting account.`);
}

function hasRole(account: Account, roles: string[]): boolean {
  return roles.length === 0 || account.roles.some((role) => roles.includes(role));
}

/**
 * The body of `request`, at most `limit` bytes (413 beyond), at the minimum data rate `rate`
 * (SlowBodyError under it). The request's own body is read (no clone: a clone would copy
 * the request's signal too), and the bytes are kept for the body parser (`keepBody`), which
 * then reads them instead of the stream.
 */
async function readLimited(
  request: Request,
  limit: number,
  rate: BodyRate | null,
): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const watch = new RateWatch(rate);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (true) {
      const { done, value } = await watch.read(reader.read(), (s) => s.value?.length ?? 0);
      if (done) break;
      size += value.length;
      if (size > limit) throw new ServiceError("too-large", "The request body is too large.");
      chunks.push(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw error;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  keepBody(request, out);
  return out;
}
