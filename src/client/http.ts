/**
 * The client's one way to the network: builds the URL, encodes the body (JSON, or
 * multipart when it holds files), authorizes (re-signing every attempt), retries 429 and
 * 503 as the service's `Retry-After` asks (bounded), and turns every failure into the
 * client's error classes. `fetch` only: no runtime-specific API.
 */
import { authorize, type Credentials, HmacSigner, type Outgoing } from "./auth.ts";
import {
  AbortedError,
  AuthError,
  type ErrorBody,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ResponseError,
  UnavailableError,
  ValidationError,
} from "./errors.ts";

/** The most of an error body the client reads (the rest is dropped). */
const MAX_ERROR_BODY = 1024 * 1024;

/** How many times and how long the client retries 429 and 503 answers. */
export interface RetryOptions {
  /** Retries after the first attempt; default 3 (0 turns retries off). */
  retries?: number;
  /** The longest wait the client accepts; a longer `Retry-After` is not waited for. Default 30 s. */
  maxDelayMs?: number;
  /** The wait when the service names none; doubled each retry. Default 500 ms. */
  baseDelayMs?: number;
}

export interface TransportOptions {
  /** The API entry point, e.g. `https://api.example.org/api/v1/`. */
  baseUrl: string | URL;
  auth?: Credentials;
  /** Headers sent with every request. */
  headers?: HeadersInit;
  retry?: RetryOptions;
  /** The status of validation errors (`VALIDATION_ERROR_STATUS`); default 422. */
  validationStatus?: number;
  /**
   * Multipart bodies: send non-file fields as JSON (for `MULTIPART_FORM_FIELDS_AS_JSON`);
   * default false (strings as they are, other values as JSON).
   */
  multipartJson?: boolean;
  /** A fetch to use instead of the global one (tests, instrumentation). */
  fetch?: typeof fetch;
  /**
   * Origins besides the entry point's that may receive the credentials and `headers`
   * (a `MEDIA_BASE_URL` on another host). Requests to any other origin, such as a media URL
   * a document names, go without them.
   */
  trustedOrigins?: string[];
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  /** A JSON value, or an object some of whose values are Blobs (sent as multipart). */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The wire client: one method, `send`, used by every typed call. */
export class Transport {
  readonly baseUrl: URL;
  #signer = new HmacSigner();
  #fetch: typeof fetch;

  constructor(readonly options: TransportOptions) {
    const base = new URL(String(options.baseUrl));
    if (!base.pathname.endsWith("/")) base.pathname += "/";
    this.baseUrl = base;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** `path` resolved against the entry point (an absolute URL is kept). */
  url(path: string, query?: RequestOptions["query"]): URL {
    const url = new URL(path, this.baseUrl);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  /**
   * Sends a request and answers its 2xx (or 304) response; an error status becomes a
   * ResponseError (its subclass by status), a network failure a NetworkError, an abort an
   * AbortedError.
   */
  async send(method: string, path: string | URL, options: RequestOptions = {}): Promise<Response> {
    const url = typeof path === "string" ? this.url(path, options.query) : path;
    const retry = this.options.retry ?? {};
    const retries = retry.retries ?? 3;
    const encoded = options.body === undefined ? null : await this.#encode(options.body);
    const trusted = url.origin === this.baseUrl.origin ||
      (this.options.trustedOrigins ?? []).some((o) => new URL(o).origin === url.origin);
    for (let attempt = 0;; attempt++) {
      const headers = new Headers(trusted ? this.options.headers : undefined);
      for (const [key, value] of Object.entries(options.headers ?? {})) headers.set(key, value);
      if (encoded) headers.set("content-type", encoded.type);
      if (!headers.has("accept")) headers.set("accept", "application/json");
      const outgoing: Outgoing = { method, url, headers, body: encoded?.bytes ?? null };
      // Credentials never leave for an origin the client was not pointed at.
      if (trusted) await authorize(this.options.auth, outgoing, this.#signer);
      let response: Response;
      try {
        options.signal?.throwIfAborted();
        response = await this.#fetch(url, {
          method,
          headers,
          body: encoded?.bytes as BodyInit | undefined,
          signal: options.signal,
        });
      } catch (error) {
        if (options.signal?.aborted) {
          throw new AbortedError(method, url.href, options.signal.reason);
        }
        throw new NetworkError(method, url.href, error);
      }
      if (response.ok || response.status === 304) return response;
      const status = response.status;
      if ((status === 429 || status === 503) && this.#mayRetry(method, response)) {
        const wait = retryDelay(response.headers, attempt, retry);
        if (attempt < retries && wait <= (retry.maxDelayMs ?? 30_000)) {
          await response.body?.cancel().catch(() => {});
          await sleep(wait, options.signal, method, url.href);
          continue;
        }
        const error = await this.error(method, url, response);
        if (error instanceof RateLimitError || error instanceof UnavailableError) {
          error.retryAfterMs = retryAfter(response.headers);
        }
        throw error;
      }
      throw await this.error(method, url, response);
    }
  }

  /** Reads a JSON answer; a body that breaks off is a NetworkError. */
  async json<T>(method: string, url: URL | string, response: Response): Promise<T> {
    try {
      return await response.json() as T;
    } catch (error) {
      throw new NetworkError(method, String(url), error);
    }
  }

  /** The error an error `response` stands for (its body read and parsed when JSON). */
  async error(method: string, url: URL, response: Response): Promise<ResponseError> {
    let body: ErrorBody | undefined;
    try {
      const text = await readText(response, MAX_ERROR_BODY);
      const parsed = text ? JSON.parse(text) : undefined;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed;
    } catch {
      body = undefined; // not JSON, or cut off: the status still says what happened
    }
    const args = [method, url.href, response.status, response.headers, body] as const;
    const status = response.status;
    const validation = this.options.validationStatus ?? 422;
    if (body && (status === validation || status === 422) && (body._issues || body._items)) {
      return new ValidationError(method, url.href, status, response.headers, body);
    }
    if (status === 404) return new NotFoundError(...args);
    if (status === 401 || status === 403) return new AuthError(...args);
    if (status === 429) return new RateLimitError(...args);
    if (status === 503) return new UnavailableError(...args);
    return new ResponseError(...args);
  }

  /**
   * 429 is always safe to repeat (nothing was done). A 503 is repeated for reads, and for
   * writes only when the service named a `Retry-After` (it does so for refusals that did
   * nothing: too many feeds, rate limiting unavailable).
   */
  #mayRetry(method: string, response: Response): boolean {
    if (response.status === 429) return true;
    return method === "GET" || method === "HEAD" || response.headers.has("retry-after");
  }

  /** The body bytes and content type of `body`. */
  async #encode(body: unknown): Promise<{ bytes: Uint8Array<ArrayBuffer>; type: string }> {
    if (hasFiles(body)) {
      const form = new FormData();
      for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
        if (value === undefined) continue;
        for (const member of Array.isArray(value) && value.some(isBlob) ? value : [value]) {
          if (isBlob(member)) {
            form.append(key, member, (member as File).name || key);
          } else if (typeof member === "string" && !this.options.multipartJson) {
            form.append(key, member);
          } else form.append(key, JSON.stringify(member));
        }
      }
      // Serialised once, so the bytes can be signed (HMAC) and sent again on a retry.
      const encoded = new Response(form);
      const type = encoded.headers.get("content-type")!;
      return { bytes: new Uint8Array(await encoded.arrayBuffer()), type };
    }
    return { bytes: new TextEncoder().encode(JSON.stringify(body)), type: "application/json" };
  }
}

/** The body of `response` as text, at most `limit` bytes of it (the rest is cancelled). */
async function readText(response: Response, limit: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - offset);
    bytes.set(part, offset);
    offset += part.length;
  }
  return new TextDecoder().decode(bytes);
}

/** Whether a body holds a Blob at its top level (a media field, or a list of them). */
export function hasFiles(body: unknown): boolean {
  if (!body || typeof body !== "object" || Array.isArray(body)) return false;
  return Object.values(body).some((v) => isBlob(v) || (Array.isArray(v) && v.some(isBlob)));
}

function isBlob(value: unknown): value is Blob {
  return typeof Blob !== "undefined" && value instanceof Blob;
}

/** `Retry-After` in ms (seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfter(headers: Headers): number | null {
  const value = headers.get("retry-after")?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : Math.max(0, time - Date.now());
}

function retryDelay(headers: Headers, attempt: number, retry: RetryOptions): number {
  return retryAfter(headers) ?? (retry.baseDelayMs ?? 500) * 2 ** attempt;
}

/** Waits `ms`, or throws AbortedError as soon as `signal` fires. */
export function sleep(ms: number, signal: AbortSignal | undefined, method: string, url: string) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError(method, url, signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError(method, url, signal!.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
