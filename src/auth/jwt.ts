/**
 * JWT bearer tokens, verified with `jose`: the key comes from AUTH_JWT (an HMAC secret, a
 * PEM public key, or a JWKS file or URL); only the configured algorithms are accepted, so
 * `alg: none` and algorithm confusion are refused. `exp`, `nbf`, `iss` and `aud` are
 * enforced.
 *
 * A JWKS URL that cannot be fetched (unreachable, not a 200, not a key set) is the identity
 * provider's failure, not the client's: it is logged once per outage and answered 503 with
 * `Retry-After`, never 401.
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  importSPKI,
  type JWTPayload,
  jwtVerify,
} from "jose";
import { describeError, type Logger } from "../log.ts";
import { ServiceError } from "../services/errors.ts";
import type { JwtConfig } from "./config.ts";
import type { Account } from "./types.ts";

type Key = Parameters<typeof jwtVerify>[1];
type KeySet = ReturnType<typeof createRemoteJWKSet>;

/**
 * Seconds a client is asked to wait when the JWKS cannot be fetched: the next request
 * fetches it again (at most one fetch at a time, each bounded by jose's own timeout).
 */
const JWKS_RETRY_AFTER_S = 5;

/** The key set at a JWKS URL could not be had; `cause` says why. */
class JwksUnavailable extends Error {
  constructor(cause: unknown) {
    super("the JWKS could not be fetched", { cause });
    this.name = "JwksUnavailable";
  }
}

/**
 * Failures of a key set that fetched fine: the token names no key of it, several, or an
 * algorithm it has no key for. These are the token's fault.
 */
function tokensFault(error: unknown): boolean {
  return error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys || error instanceof errors.JOSENotSupported;
}

/**
 * The remote key set, its fetch failures told apart from the token's: they reject with
 * {@link JwksUnavailable}. The first failure of an outage is logged as an error, the first
 * success after it at info.
 */
function remoteKeySet(url: URL, log: Logger | undefined): KeySet {
  const remote = createRemoteJWKSet(url);
  let down = false;
  const keySet = async (...args: Parameters<KeySet>) => {
    try {
      const found = await remote(...args);
      if (down) log?.log("info", "JWT: the JWKS is reachable again", { url: url.href });
      down = false;
      return found;
    } catch (error) {
      if (tokensFault(error)) throw error;
      if (!down) {
        log?.log("error", "JWT: the JWKS cannot be fetched", {
          url: url.href,
          error: describeError(error),
        });
      }
      down = true;
      throw new JwksUnavailable(error);
    }
  };
  return Object.assign(keySet, remote) as KeySet;
}

/** A verifier of JWT bearer tokens. */
export class JwtVerifier {
  private constructor(readonly config: JwtConfig, readonly key: Key) {}

  /**
   * Loads the key named by `config` (reads the PEM or JWKS file); `log` records the outages
   * of a JWKS URL.
   */
  static async create(config: JwtConfig, log?: Logger): Promise<JwtVerifier> {
    let key: Key;
    if (config.secret) key = new TextEncoder().encode(config.secret);
    else if (config.publicKey) {
      const pem = config.publicKey.includes("-----BEGIN")
        ? config.publicKey
        : await Deno.readTextFile(config.publicKey);
      key = await importSPKI(pem, config.algorithms[0]);
    } else if (config.jwksFile) {
      key = createLocalJWKSet(JSON.parse(await Deno.readTextFile(config.jwksFile)));
    } else key = remoteKeySet(new URL(config.jwksUrl!), log);
    return new JwtVerifier(config, key);
  }

  /**
   * The account a token names, or null when the token is not valid. Throws an "unavailable"
   * {@link ServiceError} (503) when the JWKS URL cannot be fetched.
   */
  async verify(token: string): Promise<Account | null> {
    const c = this.config;
    let payload: JWTPayload;
    try {
      const options = {
        algorithms: c.algorithms,
        issuer: c.issuer,
        audience: c.audience,
        requiredClaims: c.requiredClaims,
        clockTolerance: c.clockTolerance,
      };
      // jwtVerify's two overloads: a key set (a function) or one key.
      const key = this.key;
      ({ payload } = typeof key === "function"
        ? await jwtVerify(token, key, options)
        : await jwtVerify(token, key, options));
    } catch (error) {
      if (!(error instanceof JwksUnavailable)) return null;
      throw new ServiceError(
        "unavailable",
        "The keys that verify tokens cannot be fetched now; try again later.",
        { cause: error, headers: { "retry-after": String(JWKS_RETRY_AFTER_S) } },
      );
    }
    const id = claim(payload, c.userClaim);
    if (typeof id !== "string" && typeof id !== "number") return null;
    const raw = claim(payload, c.rolesClaim);
    const roles = Array.isArray(raw)
      ? raw.filter((r): r is string => typeof r === "string")
      : typeof raw === "string"
      ? raw.split(" ").filter(Boolean)
      : [];
    return { id, roles, scheme: "jwt" };
  }
}

/** A claim by dotted path (`realm_access.roles`). */
function claim(payload: JWTPayload, path: string): unknown {
  let node: unknown = payload;
  for (const key of path.split(".")) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
