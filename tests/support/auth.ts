/** Helpers for authentication scenarios: credentials headers and HMAC signatures. */
import { createHash, createHmac } from "node:crypto";

/** bcrypt hash of "secret" (cost 10). */
export const SECRET_HASH = "$2b$10$2buBRUdzS.alJuRMgasZZebGDZieCV7PQ8K7hFiJtU/QYDIZxIWqa";

/** `Authorization: Basic ...` for `user` and `password`. */
export function basic(user: string, password: string): Record<string, string> {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  return { authorization: `Basic ${btoa(String.fromCharCode(...bytes))}` };
}

/** `Authorization: Bearer ...`. */
export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** The headers of an HMAC-signed request, as the README documents them. */
export function hmacHeaders(options: {
  user: string;
  secret: string;
  method: string;
  path: string;
  body?: string;
  date?: Date;
}): Record<string, string> {
  const date = (options.date ?? new Date()).toUTCString();
  const bodyHash = createHash("sha256").update(options.body ?? "").digest("hex");
  const text = [options.method, options.path, date, bodyHash].join("\n");
  const signature = createHmac("sha256", options.secret).update(text).digest("hex");
  return { authorization: `HMAC ${options.user}:${signature}`, date };
}
