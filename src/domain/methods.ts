/**
 * HEAD, in one place: it is GET without a body. Authorisation, rate limits and request
 * events treat it as GET; the HTTP layer (`http/respond.ts`) drops the body.
 */

/** The method a request counts as for rules and events: GET for HEAD, else itself. */
export function ruleMethod(method: string): string {
  return method === "HEAD" ? "GET" : method;
}

/** Whether `method` reads (GET or HEAD). */
export function isRead(method: string): boolean {
  return ruleMethod(method) === "GET";
}

/** The `Allow` of every read-only endpoint (home, schema, media, change feeds, API docs). */
export const READ_ONLY_ALLOW = "GET, HEAD, OPTIONS";
