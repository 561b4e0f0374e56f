/**
 * Parses the `Authorization` header into the credentials of one scheme. Malformed input is
 * reported as such, never thrown as anything but a refusal.
 */

/** Longest Authorization header accepted. */
export const MAX_HEADER = 8192;

const UTF8 = new TextDecoder("utf-8", { fatal: true });

export type Credentials =
  | { kind: "basic"; username: string; password: string }
  | { kind: "bearer"; token: string }
  | { kind: "hmac"; username: string; signature: string };

/** Parsed credentials, "malformed", or null when the header is absent. */
export function parseAuthorization(header: string | null): Credentials | "malformed" | null {
  if (header === null) return null;
  const text = header.trim();
  const space = text.indexOf(" ");
  const scheme = space > 0 ? text.slice(0, space).toLowerCase() : "";
  const value = space > 0 ? text.slice(space + 1).trim() : text;
  if (scheme === "basic") {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || value.length % 4 !== 0) return "malformed";
    let decoded: string;
    try {
      const binary = atob(value);
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      decoded = UTF8.decode(bytes);
    } catch {
      return "malformed";
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) return "malformed";
    return { kind: "basic", username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  if (scheme === "bearer") {
    if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(value)) return "malformed";
    return { kind: "bearer", token: value };
  }
  if (scheme === "hmac" || space < 0) {
    const match = /^([^:\s]+):([A-Fa-f0-9]{64})$/.exec(value);
    if (!match) return "malformed";
    return { kind: "hmac", username: match[1], signature: match[2] };
  }
  return "malformed";
}

/** Query parameters that look like credentials: refused, as URLs end up in logs. */
export const CREDENTIAL_PARAMS = [
  "access_token",
  "token",
  "api_key",
  "apikey",
  "password",
  "authorization",
  "auth",
];
