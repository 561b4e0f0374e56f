/**
 * The `Request`s the server hands its handler, built only as far as they are used. Most
 * requests are answered from their method, URL and fields alone; those come from the parsed
 * head. A full `Request` (its constructor alone costs about as much as parsing the head) is
 * made on the first use of anything else: the body, `clone()`, `signal`, or Deno's own
 * functions taking a `Request` (`new Request(request)`, `fetch(request)`), which read it
 * through the internal properties every `Request` carries.
 *
 * Whether that delegation holds for the running Deno is checked once at load
 * ({@link LAZY_REQUESTS}); if not, every request is a plain `Request` from the start.
 */

/** What a request is made of, as the server read it. */
export interface RequestParts {
  method: string;
  /** The absolute URL, as `Request#url` gives it (`requestUrl` in http1.ts makes it). */
  url: string;
  /** Header fields in order: names lowercased, names and values valid (the parser checked). */
  fields: [string, string][];
  /** The body (none for GET and HEAD). */
  body: ReadableStream<Uint8Array> | null;
}

/**
 * Makes instances of `lazy` pass for instances of `real`: `instanceof`, every member of
 * `real.prototype` that `lazy` does not answer itself, and the internal (symbol-keyed)
 * properties Deno's own code reads, all taken from the full object `full` makes on first
 * need.
 */
function imitate<T extends object>(
  lazy: { prototype: T; name: string },
  real: { prototype: object; name: string },
  options: { sample: object; full: (lazy: T) => object },
): void {
  const prototype = lazy.prototype as Record<PropertyKey, unknown>;
  const full = options.full as (lazy: unknown) => Record<PropertyKey, unknown>;
  for (const name of Object.getOwnPropertyNames(real.prototype)) {
    if (name === "constructor" || Object.hasOwn(prototype, name)) continue;
    const member = Object.getOwnPropertyDescriptor(real.prototype, name)!;
    Object.defineProperty(
      prototype,
      name,
      typeof member.value === "function"
        ? {
          value: function (this: unknown, ...args: unknown[]) {
            const target = full(this);
            return (target[name] as (...a: unknown[]) => unknown).apply(target, args);
          },
          writable: true,
          configurable: true,
        }
        : { get: accessor(full, name).get, configurable: true },
    );
  }
  for (const key of Object.getOwnPropertySymbols(options.sample)) {
    Object.defineProperty(prototype, key, { ...accessor(full, key), configurable: true });
  }
  Object.setPrototypeOf(prototype, real.prototype);
  Object.defineProperty(lazy, "name", { value: real.name }); // as inspected
}

function accessor(full: (lazy: unknown) => Record<PropertyKey, unknown>, key: PropertyKey) {
  return {
    get(this: unknown) {
      return full(this)[key];
    },
    set(this: unknown, value: unknown) {
      full(this)[key] = value;
    },
  };
}

/** Header names read without a full `Headers` (others, invalid ones included, take one). */
const PLAIN_NAME = /^[A-Za-z0-9-]+$/;
/** Plain names asked lately, lowercased (names are nearly always constants in code). */
const lowerNames = new Map<string, string>();
const MAX_NAMES = 512;

function plainLower(name: unknown): string | null {
  if (typeof name !== "string") return null;
  let lower = lowerNames.get(name);
  if (lower !== undefined) return lower;
  if (!PLAIN_NAME.test(name)) return null;
  lower = name.toLowerCase();
  if (lowerNames.size < MAX_NAMES) lowerNames.set(name, lower);
  return lower;
}

/**
 * A request's `Headers`: `get` and `has` answer from the fields as sent; anything else
 * (changes, iteration) from a full `Headers`, which becomes the request's own once the
 * request is made in full.
 */
class LazyHeaders {
  #fields: [string, string][];
  #full: Headers | null = null;

  constructor(fields: [string, string][]) {
    this.#fields = fields;
  }

  get(name: string): string | null {
    const lower = this.#full ? null : plainLower(name);
    if (lower === null) return LazyHeaders.full(this).get(name);
    let value: string | null = null;
    for (const [field, v] of this.#fields) {
      if (field === lower) value = value === null ? v : `${value}, ${v}`;
    }
    return value;
  }

  has(name: string): boolean {
    const lower = this.#full ? null : plainLower(name);
    if (lower === null) return LazyHeaders.full(this).has(name);
    for (const [field] of this.#fields) if (field === lower) return true;
    return false;
  }

  /** What a full `Request` is given: the fields, or the `Headers` they became. */
  static init(lazy: LazyHeaders): HeadersInit {
    return lazy.#full ?? lazy.#fields;
  }

  /** From now on `lazy` is a view of `headers` (the full request's). */
  static adopt(lazy: LazyHeaders, headers: Headers): void {
    lazy.#full = headers;
  }

  static full(lazy: LazyHeaders): Headers {
    return lazy.#full ??= new Headers(lazy.#fields);
  }
}

imitate(LazyHeaders, Headers, { sample: new Headers(), full: LazyHeaders.full });

/** A request whose full `Request` is made on first need; see the module comment. */
class LazyRequest {
  #parts: RequestParts;
  #headers: LazyHeaders | null = null;
  #full: Request | null = null;

  constructor(parts: RequestParts) {
    this.#parts = parts;
  }

  get method(): string {
    return this.#parts.method;
  }

  get url(): string {
    return this.#parts.url;
  }

  get headers(): Headers {
    return (this.#headers ??= new LazyHeaders(this.#parts.fields)) as unknown as Headers;
  }

  /** The full `Request`, made once; changes made through `headers` meanwhile are kept. */
  static full(lazy: LazyRequest): Request {
    if (lazy.#full) return lazy.#full;
    const { method, url, fields, body } = lazy.#parts;
    const headers = lazy.#headers ??= new LazyHeaders(fields);
    lazy.#full = new Request(url, { method, headers: LazyHeaders.init(headers), body });
    LazyHeaders.adopt(headers, lazy.#full.headers);
    return lazy.#full;
  }
}

imitate(LazyRequest, Request, { sample: new Request("http://localhost/"), full: LazyRequest.full });

/** Methods `Request` refuses (fetch's forbidden methods); the server answers them 400. */
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

/**
 * Whether a lazy request is indistinguishable from a `Request` made from the same parts, for
 * this Deno: its members, and Deno's own functions reading it.
 */
function delegationHolds(): boolean {
  try {
    const parts: RequestParts = {
      method: "POST",
      url: "http://localhost/probe?x=1",
      fields: [["x-probe", "1"], ["content-type", "text/plain"]],
      body: new Blob(["probe"]).stream(),
    };
    const lazy = new LazyRequest(parts) as unknown as Request;
    const headers = lazy.headers;
    if (!(lazy instanceof Request) || !(headers instanceof Headers)) return false;
    if (headers.get("x-probe") !== "1" || [...new Headers(headers)].length !== 2) return false;
    headers.set("x-changed", "2");
    const copy = new Request(lazy); // reads the internal properties
    const get = new Request(new LazyRequest({ ...parts, method: "GET", body: null }) as never);
    return copy.url === parts.url && copy.method === "POST" && copy.body !== null &&
      copy.headers.get("x-changed") === "2" && lazy.bodyUsed && lazy.headers === headers &&
      get.headers.get("content-type") === "text/plain";
  } catch {
    return false;
  }
}

/** Whether requests are made lazily on this Deno (see the module comment). */
export const LAZY_REQUESTS: boolean = delegationHolds();

/**
 * The `Request` for `parts`, lazy when that holds for this Deno ({@link LAZY_REQUESTS}, or
 * `options.lazy` to choose). Throws a `TypeError` where `new Request` would: a forbidden
 * method.
 */
export function toRequest(parts: RequestParts, options: { lazy?: boolean } = {}): Request {
  const { method, url, fields, body } = parts;
  if (FORBIDDEN_METHODS.has(method)) throw new TypeError(`forbidden method ${method}`);
  if (options.lazy ?? LAZY_REQUESTS) return new LazyRequest(parts) as unknown as Request;
  const request = method === "GET" ? new Request(url) : new Request(url, { method, body });
  const headers = request.headers;
  for (const [name, value] of fields) headers.append(name, value);
  return request;
}
