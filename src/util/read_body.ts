/**
 * A request body read before the body parser runs, kept for it.
 *
 * HMAC authentication signs the body, so it reads the body before any route does. A
 * request's body can be read once: the bytes it read are kept here, under the request, and
 * the body parser (`http/body/`) takes them instead of reading the stream again. (Reading a
 * clone instead would copy the request's signal too, which Deno.serve then ties to the
 * answer: "request.signal aborts on successful responses".)
 *
 * ```ts
 * keepBody(request, bytes); // the reader that went first
 * const bytes = keptBody(request) ?? await readTheStream(request); // the parser
 * ```
 */

const kept = new WeakMap<Request, Uint8Array<ArrayBuffer>>();

/** Keeps `bytes`, the whole body of `request`, read before the body parser ran. */
export function keepBody(request: Request, bytes: Uint8Array<ArrayBuffer>): void {
  kept.set(request, bytes);
}

/** The body of `request` read before the body parser ran, if it was. */
export function keptBody(request: Request): Uint8Array<ArrayBuffer> | undefined {
  return kept.get(request);
}
