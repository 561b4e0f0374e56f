/**
 * HMAC request signing. The client sends
 *
 *     Authorization: HMAC <username>:<hex HMAC-SHA256(secret, string-to-sign)>
 *     Date: <HTTP date, within AUTH_HMAC_MAX_SKEW seconds of the server's clock>
 *
 * (Eve's form `Authorization: <username>:<signature>` is accepted too; `X-Date` may stand
 * in for `Date`, which browsers can't set), where the string to sign is four lines joined
 * by "\n", without a trailing newline:
 *
 *     METHOD            the request method as sent, upper case (GET, POST ...)
 *     PATH?QUERY        the URL path and query exactly as sent (e.g. /people?page=2)
 *     DATE              the Date (or X-Date) header value, as sent
 *     SHA256(BODY)      lowercase hex SHA-256 of the body bytes (of "" when none)
 *
 * A signature is accepted once: a replay within the window is refused.
 */
import { TtlCache } from "./cache.ts";
import { hmacHex, safeEqual, sha256Hex } from "./secrets.ts";

/** The string a client signs for `request` with `body`. */
export function stringToSign(request: Request, body: Uint8Array, date: string): string {
  const url = new URL(request.url);
  return [request.method.toUpperCase(), url.pathname + url.search, date, sha256Hex(body)].join(
    "\n",
  );
}

/** Why a signed request is refused, or null when its signature is good and new. */
export class HmacVerifier {
  #seen = new TtlCache<true>(100_000);
  /** Requests dated at or before this (ms) are refused: their signatures may be forgotten. */
  #floor = 0;

  constructor(readonly skewMs: number) {}

  /** Checks the date window; null when fine. */
  checkDate(date: string | null, now = Date.now()): string | null {
    if (!date) return "the Date header is missing";
    const time = Date.parse(date);
    if (Number.isNaN(time)) return "the Date header is not a date";
    if (Math.abs(now - time) > this.skewMs) return "the Date header is too far from now";
    if (time <= this.#floor) return "the request is too old";
    return null;
  }

  /** Whether `signature` is right for `text` under `secret`. */
  verify(secret: string, text: string, signature: string): boolean {
    return safeEqual(hmacHex(secret, text), signature.toLowerCase());
  }

  /** Records a verified signature; false when it was seen already (a replay). */
  remember(signature: string, date: string): boolean {
    const key = signature.toLowerCase();
    if (this.#seen.has(key)) return false;
    const expires = Date.parse(date) + this.skewMs + 1000;
    const evicted = this.#seen.set(key, true, expires);
    if (evicted !== undefined) this.#floor = Math.max(this.#floor, evicted - this.skewMs - 1000);
    return true;
  }
}
