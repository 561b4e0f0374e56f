/**
 * The typed client: `createClient<Api>()` gives one `ResourceClient` per resource, whose
 * calls are typed by the resource's shape (generated from the service's settings, see
 * docs/client.md), and the media download. Item writes send `If-Match` with the last ETag
 * the client saw for the document.
 */
import type { Credentials } from "./auth.ts";
import { AbortedError, ConflictError, NetworkError, ResponseError } from "./errors.ts";
import { type RequestOptions, type RetryOptions, sleep, Transport } from "./http.ts";
import { readEvents } from "./sse.ts";
import type {
  AnyApi,
  ChangeEvent,
  Embedded,
  Page,
  Projection,
  ResourceShape,
  Sort,
  Where,
  Written,
} from "./types.ts";

export interface ClientOptions {
  /** The API entry point, e.g. `http://localhost:5000/` or `https://example.org/api/v1/`. */
  baseUrl: string | URL;
  /** Basic, bearer (token or JWT) or HMAC credentials. */
  auth?: Credentials;
  /** Headers sent with every request. */
  headers?: HeadersInit;
  /** Retries of 429 and 503 answers (bounded; `Retry-After` honoured). */
  retry?: RetryOptions;
  /**
   * URL of each resource relative to the entry point, when it is not the resource name;
   * sub-resource variables in braces (`people/{owner}/works`). Generated types export it
   * as `paths`.
   */
  paths?: Readonly<Record<string, string>>;
  /** `ID_FIELD` and `ETAG` of the service; default `_id` and `_etag`. */
  idField?: string;
  etagField?: string;
  /** `MEDIA_ENDPOINT` (for downloads by file id); default `media`. */
  mediaEndpoint?: string;
  /** `CHANGES_ENDPOINT`; default `_changes`. */
  changesEndpoint?: string;
  /** `VALIDATION_ERROR_STATUS`; default 422. */
  validationStatus?: number;
  /** Send multipart non-file fields as JSON (`MULTIPART_FORM_FIELDS_AS_JSON`). */
  multipartJson?: boolean;
  /** How many ETags the client remembers (least recently seen forgotten first); default 10,000. */
  etagCacheSize?: number;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /**
   * Origins besides `baseUrl`'s that may receive the credentials and `headers` (for a
   * `MEDIA_BASE_URL` on another host); any other origin gets neither.
   */
  trustedOrigins?: string[];
}

/** Options every call takes. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

/** A listing query, typed by the resource's fields. */
export interface ListQuery<S extends ResourceShape> extends CallOptions {
  where?: Where<S["fields"]>;
  sort?: Sort<S["fields"]>;
  projection?: Projection<S["fields"]>;
  embedded?: Embedded<S["embeddable"]>;
  page?: number;
  maxResults?: number;
  /** Include soft-deleted documents. */
  showDeleted?: boolean;
}

/** Options of an item read. */
export interface GetOptions<S extends ResourceShape> extends CallOptions {
  projection?: Projection<S["fields"]>;
  embedded?: Embedded<S["embeddable"]>;
}

/** Options of an item write. */
export interface WriteOptions extends CallOptions {
  /** The ETag to send, instead of the last one the client saw. */
  etag?: string;
}

/** A document named by id, or a document (its id and ETag are used). */
export type Target = string | { readonly [field: string]: unknown };

/** Options of a change feed. */
export interface ChangesOptions<S extends ResourceShape> {
  signal?: AbortSignal;
  /** Events carry the documents (`?documents=1`). */
  documents?: boolean;
  where?: Where<S["fields"]>;
  projection?: Projection<S["fields"]>;
  /** Start after this event (a saved `id`): the feed replays what came after it. */
  lastEventId?: string;
  /** The first wait before reconnecting after a dropped connection; default 500 ms. */
  reconnectDelayMs?: number;
  /** Reconnections in a row without an event before giving up; default 10. */
  maxReconnects?: number;
}

/** A downloaded file: its body as a stream, and what the headers say about it. */
export interface MediaFile {
  /** 200, or 206 for a byte range. */
  status: number;
  stream: ReadableStream<Uint8Array>;
  contentType: string | null;
  /** Bytes in this answer (the range's length for a range). */
  length: number | null;
  /** For a range: its first and last byte and the file's whole size. */
  range: { start: number; end: number; size: number } | null;
  etag: string | null;
  /** The file name from `Content-Disposition`, when given. */
  filename: string | null;
  bytes(): Promise<Uint8Array>;
  blob(): Promise<Blob>;
}

/** A byte range: `{start, end}` (end inclusive, optional) or the last `suffix` bytes. */
export type ByteRange = { start: number; end?: number } | { suffix: number };

type ParamArgs<P> = keyof P extends never ? []
  : string extends keyof P ? [params?: P]
  : [params: P];

/** An API type: resource name -> shape (an interface such as the generated `Api` fits). */
export type ApiOf<A> = { [K in keyof A]: ResourceShape };

/** The client of one API. */
export class Client<A extends ApiOf<A> = AnyApi> {
  readonly transport: Transport;
  /** Last ETag seen per item URL. */
  readonly etags: EtagCache;

  constructor(readonly options: ClientOptions) {
    this.transport = new Transport(options);
    this.etags = new EtagCache(options.etagCacheSize ?? 10_000);
  }

  /** The client of resource `name` (with its URL variables for a sub-resource). */
  resource<R extends keyof A & string>(
    name: R,
    ...params: ParamArgs<A[R]["params"]>
  ): ResourceClient<A[R]> {
    const template = this.options.paths?.[name] ?? name;
    const values = (params[0] ?? {}) as Record<string, string>;
    const path = template.replace(/\{([^}]+)\}/g, (_, key: string) => {
      const value = values[key];
      if (value === undefined) {
        throw new TypeError(`resource ${name}: the URL variable ${key} is missing`);
      }
      return encodeURIComponent(value);
    });
    return new ResourceClient<A[R]>(this, path.replace(/^\/+|\/+$/g, ""));
  }

  /**
   * Downloads a file: `ref` is a media URL from a document (`RETURN_MEDIA_AS_URL`) or a
   * file id. `range` asks for part of it (206).
   */
  async download(
    ref: string,
    options: CallOptions & { range?: ByteRange } = {},
  ): Promise<MediaFile> {
    const endpoint = this.options.mediaEndpoint ?? "media";
    const path = /[/:]/.test(ref) ? ref : `${endpoint}/${encodeURIComponent(ref)}`;
    const headers: Record<string, string> = { accept: "*/*", ...options.headers };
    const range = options.range;
    if (range) {
      headers.range = "suffix" in range
        ? `bytes=-${range.suffix}`
        : `bytes=${range.start}-${range.end ?? ""}`;
    }
    const url = this.transport.url(path);
    const response = await this.transport.send("GET", url, { headers, signal: options.signal });
    return mediaFile("GET", url.href, response);
  }

  /** Sends any request (the typed calls' way out for what they don't cover). */
  request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    return this.transport.send(method, path, options);
  }
}

/** Creates a client; `A` is the generated `Api` type of the service. */
export function createClient<A extends ApiOf<A> = AnyApi>(
  options: ClientOptions,
): Client<A> {
  return new Client<A>(options);
}

/** What a resource client uses of its client. */
interface ClientCore {
  readonly transport: Transport;
  readonly etags: EtagCache;
  readonly options: ClientOptions;
}

/** The typed calls on one resource. */
export class ResourceClient<S extends ResourceShape> {
  constructor(private readonly client: ClientCore, readonly path: string) {}

  private get t(): Transport {
    return this.client.transport;
  }
  private get idField(): string {
    return this.client.options.idField ?? "_id";
  }
  private get etagField(): string {
    return this.client.options.etagField ?? "_etag";
  }

  /** One page of the listing. */
  async list(query: ListQuery<S> = {}): Promise<Page<S["document"]>> {
    const url = this.t.url(this.path, {
      where: json(query.where),
      sort: query.sort?.length ? query.sort.join(",") : undefined,
      projection: json(query.projection),
      embedded: json(query.embedded),
      page: query.page,
      max_results: query.maxResults,
      show_deleted: query.showDeleted ? 1 : undefined,
    });
    const response = await this.t.send("GET", url, query);
    const body = await this.t.json<Record<string, unknown>>("GET", url, response);
    const items = (body._items ?? []) as S["document"][];
    for (const item of items) this.remember(item as Record<string, unknown>);
    return {
      items,
      meta: (body._meta ?? {}) as Page<S["document"]>["meta"],
      links: (body._links ?? {}) as Page<S["document"]>["links"],
    };
  }

  /** Every page of the listing in turn, from `query.page` (default 1) to the last. */
  async *pages(query: ListQuery<S> = {}): AsyncGenerator<Page<S["document"]>> {
    for (let page = query.page ?? 1;; page++) {
      const result = await this.list({ ...query, page });
      yield result;
      if (!result.items.length || !hasNext(result, page)) return;
    }
  }

  /** Every document of the listing, page after page. */
  async *all(query: ListQuery<S> = {}): AsyncGenerator<S["document"]> {
    for await (const page of this.pages(query)) yield* page.items;
  }

  /**
   * One document, by id (`"6b01..."`) or by a lookup (`{lastname: "Lovelace"}`, the
   * resource's additional lookup).
   */
  async get(
    ref: string | Partial<S["lookups"]>,
    options: GetOptions<S> = {},
  ): Promise<S["document"]> {
    const key = typeof ref === "string" ? ref : lookupValue(ref as Record<string, unknown>);
    const url = this.t.url(this.itemPath(key), {
      projection: json(options.projection),
      embedded: json(options.embedded),
    });
    const response = await this.t.send("GET", url, options);
    const document = await this.t.json<Record<string, unknown>>("GET", url, response);
    this.remember(document, response.headers.get("etag"));
    return document as S["document"];
  }

  /** Creates one document. Values that are Blobs (media fields) are sent as multipart. */
  create(document: S["input"], options?: CallOptions): Promise<Written>;
  /** Creates several documents at once: all or none (bulk insert). */
  create(documents: S["input"][], options?: CallOptions): Promise<Written[]>;
  async create(body: S["input"] | S["input"][], options: CallOptions = {}) {
    const url = this.t.url(this.path);
    const response = await this.t.send("POST", url, { ...options, body });
    const answer = await this.t.json<Record<string, unknown>>("POST", url, response);
    if (Array.isArray(body)) {
      const items = (answer._items ?? [answer]) as Written[];
      for (const item of items) this.remember(item);
      return items;
    }
    this.remember(answer);
    return answer as Written;
  }

  /** Changes the named fields of a document (with If-Match from its last known ETag). */
  patch(target: Target, changes: S["patch"], options: WriteOptions = {}): Promise<Written> {
    return this.write("PATCH", target, changes, options);
  }

  /** Replaces a document (with If-Match from its last known ETag). */
  put(target: Target, document: S["input"], options: WriteOptions = {}): Promise<Written> {
    return this.write("PUT", target, document, options);
  }

  /** Deletes a document (with If-Match from its last known ETag). */
  async delete(target: Target, options: WriteOptions = {}): Promise<void> {
    await this.write("DELETE", target, undefined, options);
  }

  /** Deletes every document of the endpoint. */
  async deleteAll(options: CallOptions = {}): Promise<void> {
    const response = await this.t.send("DELETE", this.path, options);
    await response.body?.cancel();
  }

  /**
   * The resource's change feed: yields its events as they happen, and reconnects after a
   * dropped connection, resuming after the last event seen (`Last-Event-ID`). A `reset`
   * event means changes were missed: read the resource again. Ends when the caller stops
   * iterating or aborts (AbortedError).
   */
  async *changes(options: ChangesOptions<S> = {}): AsyncGenerator<ChangeEvent<S["document"]>> {
    const endpoint = this.client.options.changesEndpoint ?? "_changes";
    const url = this.t.url(`${this.path}/${endpoint}`, {
      documents: options.documents ? 1 : undefined,
      where: json(options.where),
      projection: json(options.projection),
    });
    let lastId = options.lastEventId ?? null;
    let delay = options.reconnectDelayMs ?? 500;
    const maxReconnects = options.maxReconnects ?? 10;
    let failures = 0;
    let lastFailure: unknown = null;
    for (;;) {
      const local = new AbortController();
      const opened = Date.now();
      let events = 0;
      const signal = options.signal ? anySignal([options.signal, local.signal]) : local.signal;
      try {
        const headers: Record<string, string> = { accept: "text/event-stream" };
        if (lastId) headers["last-event-id"] = lastId;
        const response = await this.t.send("GET", url, { headers, signal });
        if (!response.body) throw new NetworkError("GET", url.href, new Error("no body"));
        for await (
          const event of readEvents(response.body, { onRetry: (ms) => (delay = ms) })
        ) {
          if (event.id) lastId = event.id;
          events++;
          const change = toChange<S["document"]>(event, this.idField, this.etagField);
          if (change.type !== "ready") failures = 0;
          if (change.documentId && change.etag) {
            const key = this.itemPath(change.documentId);
            if (change.type === "delete") this.client.etags.delete(key);
            else this.client.etags.set(key, change.etag);
          }
          yield change;
        }
        lastFailure = new Error("the service closed the feed");
      } catch (error) {
        if (options.signal?.aborted) {
          throw error instanceof AbortedError
            ? error
            : new AbortedError("GET", url.href, options.signal.reason);
        }
        if (error instanceof ResponseError || error instanceof AbortedError) throw error;
        lastFailure = error; // a refused or broken connection: reconnect
      } finally {
        local.abort();
      }
      // A connection that served a while was no failure to connect: count afresh.
      if (events > 0 && Date.now() - opened >= 1000) failures = 0;
      if (++failures > maxReconnects) {
        throw new NetworkError("GET", url.href, lastFailure);
      }
      await sleep(delay * Math.min(2 ** (failures - 1), 16), options.signal, "GET", url.href);
    }
  }

  private async write(
    method: "PATCH" | "PUT" | "DELETE",
    target: Target,
    body: unknown,
    options: WriteOptions,
  ): Promise<Written> {
    const id = typeof target === "string" ? target : target[this.idField];
    if (typeof id !== "string" || !id) {
      throw new TypeError(
        `${method}: name the document by its ${this.idField}, or pass the document`,
      );
    }
    const path = this.itemPath(id);
    const given = typeof target === "string" ? undefined : target[this.etagField];
    const etag = options.etag ?? this.client.etags.get(path) ??
      (typeof given === "string" ? given : undefined);
    const headers: Record<string, string> = { ...options.headers };
    if (etag) headers["if-match"] = etag;
    const url = this.t.url(path);
    let response: Response;
    try {
      response = await this.t.send(method, url, { body, headers, signal: options.signal });
    } catch (error) {
      if (error instanceof ResponseError && error.status === 412) {
        const current = await this.get(id, { signal: options.signal }).catch(() => null);
        const conflict = new ConflictError<S["document"]>(
          method,
          url.href,
          error.headers,
          error.body,
          current,
        );
        throw Object.assign(conflict, { cause: error });
      }
      throw error;
    }
    if (method === "DELETE") {
      await response.body?.cancel();
      this.client.etags.delete(path);
      return { _id: id, _status: "OK" };
    }
    const answer = await this.t.json<Written>(method, url, response);
    this.remember(answer as Record<string, unknown>, response.headers.get("etag"));
    return answer;
  }

  private itemPath(id: string): string {
    return `${this.path}/${encodeURIComponent(id)}`;
  }

  /** Records the ETag of a document (or write answer) the service sent. */
  private remember(document: Record<string, unknown>, header?: string | null) {
    const id = document[this.idField];
    const etag = document[this.etagField] ?? header?.replace(/^W\//, "").replace(/^"(.*)"$/, "$1");
    if (typeof id === "string" && typeof etag === "string") {
      this.client.etags.set(this.itemPath(id), etag);
    }
  }
}

/** Item URL -> last ETag seen, bounded (least recently set forgotten first). */
export class EtagCache {
  #map = new Map<string, string>();
  constructor(private readonly limit: number) {}
  get(key: string): string | undefined {
    return this.#map.get(key);
  }
  set(key: string, etag: string) {
    this.#map.delete(key);
    this.#map.set(key, etag);
    if (this.#map.size > this.limit) this.#map.delete(this.#map.keys().next().value!);
  }
  delete(key: string) {
    this.#map.delete(key);
  }
}

function json(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

function lookupValue(ref: Record<string, unknown>): string {
  const values = Object.values(ref).filter((v) => v !== undefined);
  if (values.length !== 1) throw new TypeError("get: name exactly one lookup field");
  return String(values[0]);
}

function hasNext(page: Page<unknown>, number: number): boolean {
  if (Object.keys(page.links).length) return "next" in page.links;
  const { max_results: size, total } = page.meta;
  if (total !== undefined && size) return number * size < total;
  return size !== undefined && page.items.length >= size;
}

function toChange<D>(
  event: { id: string | null; event: string; data: string },
  idField: string,
  etagField: string,
): ChangeEvent<D> {
  let data: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(event.data);
    if (parsed && typeof parsed === "object") data = parsed;
  } catch {
    data = { text: event.data };
  }
  const type = (typeof data.op === "string" ? data.op : event.event) as ChangeEvent<D>["type"];
  const change: ChangeEvent<D> = { id: event.id, type, data };
  if (typeof data[idField] === "string") change.documentId = data[idField] as string;
  if (typeof data[etagField] === "string") change.etag = data[etagField] as string;
  if (data.document && typeof data.document === "object") change.document = data.document as D;
  return change;
}

/** A signal that fires when any of `signals` does. */
function anySignal(signals: AbortSignal[]): AbortSignal {
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}

function mediaFile(method: string, url: string, response: Response): MediaFile {
  const headers = response.headers;
  const length = headers.get("content-length");
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(headers.get("content-range") ?? "");
  const disposition = headers.get("content-disposition") ?? "";
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  const plain = /filename="([^"]*)"/i.exec(disposition);
  const read = async <T>(f: () => Promise<T>) => {
    try {
      return await f();
    } catch (error) {
      throw new NetworkError(method, url, error);
    }
  };
  return {
    status: response.status,
    stream: response.body ?? new ReadableStream({ start: (c) => c.close() }),
    contentType: headers.get("content-type"),
    length: length === null ? null : Number(length),
    range: range
      ? { start: Number(range[1]), end: Number(range[2]), size: Number(range[3]) }
      : null,
    etag: headers.get("etag"),
    filename: star ? decodeURIComponent(star[1]) : plain ? plain[1] : null,
    bytes: () => read(async () => new Uint8Array(await response.arrayBuffer())),
    blob: () => read(() => response.blob()),
  };
}
