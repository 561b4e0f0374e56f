/**
 * JWT bearer tokens, verified with `jose`: the key comes from AUTH_JWT (an HMAC secret, a
 * PEM public key, or a JWKS file or URL); only the configured algorithms are accepted, so
 * `alg: none` and algorithm confusion are refused. `exp`, `nbf`, `iss` and `aud` are
 * enforced.
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  importSPKI,
  type JWTPayload,
  jwtVerify,
} from "jose";
import type { JwtConfig } from "./config.ts";
import type { Account } from "./types.ts";

type Key = Parameters<typeof jwtVerify>[1];

/** A verifier of JWT bearer tokens. */
export class JwtVerifier {
  private constructor(readonly config: JwtConfig, readonly key: Key) {}

  /** Loads the key named by `config` (reads the PEM or JWKS file). */
  static async create(config: JwtConfig): Promise<JwtVerifier> {
    let key: Key;
    if (config.secret) key = new TextEncoder().encode(config.secret);
    else if (config.publicKey) {
      const pem = config.publicKey.includes("-----BEGIN")
        ? config.publicKey
        : await Deno.readTextFile(config.publicKey);
      key = await importSPKI(pem, config.algorithms[0]);
    } else if (config.jwksFile) {
      key = createLocalJWKSet(JSON.parse(await Deno.readTextFile(config.jwksFile)));
    } else key = createRemoteJWKSet(new URL(config.jwksUrl!));
    return new JwtVerifier(config, key);
  }

  /** The account a token names, or null when the token is not valid. */
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
    } catch {
      return null;
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
