/** JWT bearer tokens: keys from settings, claims enforced, alg none and confusion refused. */
import assert from "node:assert/strict";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from "jose";
import { scenario } from "../support/harness.ts";
import { bearer } from "../support/auth.ts";

const SECRET = "a-long-shared-secret-of-32-chars-or-more!";
const key = new TextEncoder().encode(SECRET);

const DOMAIN = {
  people: {
    allowed_write_roles: ["editor"],
    schema: { name: { type: "string" } },
  },
};

const SETTINGS = {
  AUTH_SCHEMES: ["jwt"],
  AUTH_JWT: { secret: SECRET, issuer: "https://id.example", audience: "api" },
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN,
};

function token(
  claims: Record<string, unknown> = {},
  options: { exp?: string; iss?: string; aud?: string } = {},
) {
  return new SignJWT({ roles: ["editor"], ...claims })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("user-1")
    .setIssuer(options.iss ?? "https://id.example")
    .setAudience(options.aud ?? "api")
    .setIssuedAt()
    .setExpirationTime(options.exp ?? "10m")
    .sign(key);
}

const b64 = (value: unknown) =>
  btoa(JSON.stringify(value)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");

scenario("JWT HS256: valid tokens pass; roles come from the claim", SETTINGS, async (api) => {
  assert.equal((await api.get("people", bearer(await token()))).status, 200);
  assert.equal((await api.post("people", { name: "a" }, bearer(await token()))).status, 201);
  const reader = await token({ roles: ["reader"] });
  assert.equal((await api.get("people", bearer(reader))).status, 200);
  assert.equal((await api.post("people", { name: "a" }, bearer(reader))).status, 403);
});

scenario(
  "JWT: expired, not yet valid, wrong issuer or audience, forged: 401",
  SETTINGS,
  async (api) => {
    const bad = [
      await token({}, { exp: "-1m" }),
      await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u").setIssuer(
        "https://id.example",
      ).setAudience("api").setExpirationTime("10m").setNotBefore("5m").sign(key),
      await token({}, { iss: "https://evil.example" }),
      await token({}, { aud: "other" }),
      // No exp at all.
      await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u").setIssuer(
        "https://id.example",
      ).setAudience("api").sign(key),
      // Signed with another secret.
      await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("u").setIssuer(
        "https://id.example",
      ).setAudience("api").setExpirationTime("10m").sign(
        new TextEncoder().encode("another-secret-of-32-chars-or-more!!!!"),
      ),
    ];
    // alg: none.
    const payload = {
      sub: "u",
      iss: "https://id.example",
      aud: "api",
      exp: Date.now() / 1000 + 600,
    };
    bad.push(`${b64({ alg: "none", typ: "JWT" })}.${b64(payload)}.`);
    bad.push(`${b64({ alg: "none", typ: "JWT" })}.${b64(payload)}.x`);
    // Tampered payload with the original signature.
    const good = await token({ roles: ["reader"] });
    const [h, , s] = good.split(".");
    bad.push(`${h}.${b64({ ...payload, roles: ["editor"] })}.${s}`);
    bad.push("not.a.jwt");
    for (const jwt of bad) {
      const res = await api.get("people", bearer(jwt));
      assert.equal(res.status, 401, jwt);
      assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer realm="api"/);
    }
  },
);

const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
const PEM = await exportSPKI(publicKey);

scenario(
  "JWT ES256 with a PEM key: HS256 signed with the public key is refused",
  { ...SETTINGS, AUTH_JWT: { public_key: PEM, algorithms: ["ES256"], audience: "api" } },
  async (api) => {
    const es = await new SignJWT({ roles: ["editor"] }).setProtectedHeader({ alg: "ES256" })
      .setSubject("u").setAudience("api").setExpirationTime("10m").sign(privateKey);
    assert.equal((await api.post("people", { name: "x" }, bearer(es))).status, 201);
    const confused = await new SignJWT({ roles: ["editor"] }).setProtectedHeader({ alg: "HS256" })
      .setSubject("u").setAudience("api").setExpirationTime("10m").sign(
        new TextEncoder().encode(PEM),
      );
    assert.equal((await api.get("people", bearer(confused))).status, 401);
  },
);

const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" };
const JWKS_FILE = await Deno.makeTempFile({ suffix: ".json" });
await Deno.writeTextFile(JWKS_FILE, JSON.stringify({ keys: [jwk] }));

scenario(
  "JWT with a JWKS file; custom user and roles claims",
  {
    ...SETTINGS,
    AUTH_JWT: {
      jwks_file: JWKS_FILE,
      algorithms: ["ES256"],
      user_claim: "email",
      roles_claim: "realm_access.roles",
    },
  },
  async (api) => {
    const jwt = await new SignJWT({ email: "a@x", realm_access: { roles: ["editor"] } })
      .setProtectedHeader({ alg: "ES256", kid: "k1" }).setExpirationTime("10m").sign(privateKey);
    assert.equal((await api.post("people", { name: "x" }, bearer(jwt))).status, 201);
    const noUser = await new SignJWT({ realm_access: { roles: ["editor"] } })
      .setProtectedHeader({ alg: "ES256", kid: "k1" }).setExpirationTime("10m").sign(privateKey);
    assert.equal((await api.get("people", bearer(noUser))).status, 401);
  },
);

/** A loopback port nothing listens on (a listener opened, then closed). */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

const jwksRecords: Record<string, unknown>[] = [];
scenario(
  "JWT with a JWKS URL that cannot be fetched: 503 with Retry-After, logged once, not a 401",
  {
    ...SETTINGS,
    AUTH_JWT: { jwks_url: `http://127.0.0.1:${closedPort()}/jwks.json`, algorithms: ["ES256"] },
  },
  async (api) => {
    jwksRecords.length = 0;
    const jwt = await new SignJWT({ sub: "u", roles: ["editor"] })
      .setProtectedHeader({ alg: "ES256", kid: "k1" }).setExpirationTime("10m").sign(privateKey);
    for (let i = 0; i < 2; i++) {
      const res = await api.get("people", bearer(jwt));
      assert.equal(res.status, 503);
      assert.match(res.headers.get("retry-after") ?? "", /^[1-9][0-9]*$/);
      assert.match(res.text, /keys that verify tokens cannot be fetched/);
      assert.doesNotMatch(res.text, /127\.0\.0\.1|refused|ECONNREFUSED/i);
    }
    const errors = jwksRecords.filter((r) => r.level === "error");
    assert.equal(errors.length, 1, JSON.stringify(jwksRecords));
    assert.match(String(errors[0].msg ?? errors[0].message), /JWKS cannot be fetched/);
    // A token that is not a JWT at all is still the client's mistake.
    assert.equal((await api.get("people", bearer("not.a.jwt"))).status, 401);
    // The key set is needed to verify, never to refuse: no token at all is still a 401.
    assert.equal((await api.get("people")).status, 401);
  },
  {
    logger: { log: (level, message, extra) => jwksRecords.push({ level, msg: message, ...extra }) },
  },
);
