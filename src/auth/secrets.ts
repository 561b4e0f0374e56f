/**
 * Small cryptographic helpers: constant-time comparison, digests, and bcrypt through
 * `bcryptjs` (pure JavaScript).
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import bcrypt from "bcryptjs";

/** Whether two strings are equal, in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  // Comparing digests keeps the time independent of the lengths too.
  const da = createHash("sha256").update(a).digest();
  const db = createHash("sha256").update(b).digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}

/** Hex SHA-256 of `data`. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Hex HMAC-SHA256 of `data` with `secret`. */
export function hmacHex(secret: string, data: string): string {
  return createHmac("sha256", secret).update(data).digest("hex");
}

/**
 * A bcrypt hash of a password nobody has: verified for unknown users, so that an unknown
 * user and a wrong password take the same time.
 */
export const DUMMY_HASH = "$2b$10$Xm.zP4yYi5WWyunBf4ifyOdM7V.TMSqpZMZjo4MkTOKXEZDavWCQq";

/**
 * Whether `password` matches the bcrypt `hash`; without one, `dummy` (a hash of the cost the
 * real ones have) is verified, for the same time, and the answer is false.
 */
export async function verifyPassword(
  password: string,
  hash: string | undefined,
  dummy = DUMMY_HASH,
): Promise<boolean> {
  const real = typeof hash === "string" && hash.startsWith("$2");
  try {
    const ok = await bcrypt.compare(password, real ? hash : dummy);
    return ok && real;
  } catch {
    return false;
  }
}

/** A bcrypt hash of `password`. */
export function hashPassword(password: string, rounds: number): Promise<string> {
  return bcrypt.hash(password, rounds);
}
