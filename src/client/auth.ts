/**
 * Credentials the client sends: Basic (RFC 7617), a bearer token or JWT, or the service's
 * HMAC signature. Uses only WebCrypto and `btoa`, so it runs in Deno, Node 20+ and browsers.
 *
 * HMAC (the service's scheme, README "HMAC"): the request carries
 *
 *     Authorization: HMAC <username>:<hex HMAC-SHA256(secret, string-to-sign)>
 *     X-Date: <HTTP date>
 *
 * where the string to sign is `METHOD \n PATH?QUERY \n DATE \n hex SHA-256(body)`. `X-Date`
 * is sent rather than `Date` because browsers may not set `Date`. The service refuses a
 * signature it has seen (replay), and an HTTP date has one-second resolution: two identical
 * requests in one second would sign alike, so the signer waits for the next second instead.
 */

/** How the client authenticates. A function form is called for each request. */
export type Credentials =
  | { basic: { username: string; password: string } }
  | { bearer: string | (() => string | Promise<string>) }
  | { hmac: { username: string; secret: string } };

/** What a request looks like when it is signed. */
export interface Outgoing {
  method: string;
  url: URL;
  headers: Headers;
  /** The exact body bytes, or null when there is no body. */
  body: Uint8Array<ArrayBuffer> | null;
}

const encoder = new TextEncoder();

/** Adds the credentials' headers to `request`. */
export async function authorize(
  credentials: Credentials | undefined,
  request: Outgoing,
  signer: HmacSigner,
): Promise<void> {
  if (!credentials) return;
  if ("basic" in credentials) {
    const { username, password } = credentials.basic;
    request.headers.set(
      "authorization",
      `Basic ${base64(encoder.encode(`${username}:${password}`))}`,
    );
  } else if ("bearer" in credentials) {
    const token = typeof credentials.bearer === "function"
      ? await credentials.bearer()
      : credentials.bearer;
    request.headers.set("authorization", `Bearer ${token}`);
  } else if ("hmac" in credentials) {
    await signer.sign(credentials.hmac, request);
  }
}

/** Signs requests with HMAC-SHA256, never the same signature twice within one date. */
export class HmacSigner {
  #date = "";
  #used = new Set<string>();
  #keys = new Map<string, Promise<CryptoKey>>();

  constructor(private readonly now: () => number = Date.now) {}

  async sign(account: { username: string; secret: string }, request: Outgoing): Promise<void> {
    const bodyHash = hex(await crypto.subtle.digest("SHA-256", request.body ?? new Uint8Array()));
    const key = await this.#key(account.secret);
    for (;;) {
      const time = this.now();
      const date = new Date(time).toUTCString();
      if (date !== this.#date) {
        this.#date = date;
        this.#used.clear();
      }
      const text = [
        request.method.toUpperCase(),
        request.url.pathname + request.url.search,
        date,
        bodyHash,
      ].join("\n");
      const signature = hex(await crypto.subtle.sign("HMAC", key, encoder.encode(text)));
      if (!this.#used.has(signature)) {
        this.#used.add(signature);
        request.headers.set("x-date", date);
        request.headers.set("authorization", `HMAC ${account.username}:${signature}`);
        return;
      }
      // The same request was signed this second: the service would refuse it as a replay.
      await new Promise((resolve) => setTimeout(resolve, 1000 - (time % 1000) + 5));
    }
  }

  #key(secret: string): Promise<CryptoKey> {
    let key = this.#keys.get(secret);
    if (!key) {
      key = crypto.subtle.importKey(
        "raw",
        encoder.encode(secret),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      this.#keys.set(secret, key);
    }
    return key;
  }
}

function hex(buffer: ArrayBuffer): string {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

function base64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}
