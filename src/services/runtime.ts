/**
 * What resource services share for the life of the service, and the small request
 * context they receive (no HTTP framework objects, so embedding apps use the same code).
 */
import type { Domain } from "../domain/build.ts";
import type { Method, Resource } from "../domain/types.ts";
import type { Events } from "../events.ts";
import type { Settings } from "../settings/check.ts";
import type { Doc, Filter, Store } from "../store/store.ts";
import type { CompiledSchema } from "../validation/mod.ts";
import { type Logger, type RequestFields, requestLogger } from "../log.ts";
import type { LoggedStore } from "../store/logged.ts";
import type { ChangeHub } from "./changes.ts";

/**
 * The service's public URLs (built by the HTTP layer, `http/urls.ts`): under PUBLIC_BASE_URL
 * (else path-absolute) and the API prefix.
 */
export interface UrlBuilder {
  /** The URL of an API path (`people/1`), for `Location`. */
  api(path: string): string;
  /** The URL of the API entry point (`/api/v1`, `/` without a prefix). */
  apiRoot(): string;
  /** The URL a stored file is served at (MEDIA_BASE_URL, else the media endpoint). */
  media(id: string): string;
}

/** Who a request acts as, once authenticated. */
export interface Account {
  /** The account's id: stored in AUTH_FIELD, the oplog's `u`, rate-limit keys. */
  id: unknown;
  /** The account's roles (checked against ALLOWED_*_ROLES). */
  roles: string[];
  /** The user name, when the scheme has one. */
  username?: string;
  /** The scheme that authenticated the request: basic, token, hmac, jwt or custom. */
  scheme: string;
}

/**
 * What the services ask of authorisation (implemented by `auth/mod.ts`, which sits above
 * the services: it reads accounts through them).
 */
export interface AccessControl {
  /** Whether `account` (null: anonymous) may read `resource`. */
  canRead(account: Account | null, resource: Resource): boolean;
  /** The field naming a document's owner (AUTH_FIELD), or null when documents have none. */
  ownerField(resource: Resource): string | null;
  /** The condition "owned by `account`" on `resource`, when documents have an owner. */
  ownerFilter(resource: Resource, account: Account | null | undefined): Filter | undefined;
  /**
   * As in Eve: a request whose own conditions (`filters`: item lookup, URL variables, the
   * top level of `where`) name the owner field with another value than the requester's is
   * refused, 401 "Incompatible User-Restricted Resource request".
   */
  assertOwnRequest(ctx: RequestContext, filters: Array<Filter | undefined>): void;
  /** Sets (or checks) the owner field of documents `ctx` is about to write. */
  prepareWrite(
    ctx: RequestContext,
    docs: Doc[],
    options?: { original?: Doc; patch?: boolean },
  ): Promise<void>;
}

export interface Runtime {
  /**
   * The service's identity: the same object in each request's view of the runtime
   * ({@linkcode requestRuntime}). What belongs to the service for its life (caches, write
   * queues) is keyed by it, not by the runtime object.
   */
  readonly instance: object;
  settings: Settings;
  domain: Domain;
  store: Store;
  events: Events;
  /** Compiled validators by resource name. */
  schemas: ReadonlyMap<string, CompiledSchema>;
  log: Logger;
  urls: UrlBuilder;
  /** Authorisation; absent when the API has no authentication. */
  auth?: AccessControl;
  /** The change feeds' hub; absent when no resource has a feed. */
  changes?: ChangeHub;
  formatDate(date: Date): string;
  /** Reads a date in DATE_FORMAT (or in `format`); null when the text does not fit. */
  parseDate(text: string, format?: string): Date | null;
}

/**
 * The runtime one request's services see: the service's, with a logger and a store whose
 * records carry the request's fields (`clientip`, `url`, `method`, `requestid`), and events
 * whose callbacks run in the request's log context. Made once per request by the HTTP
 * layer; everything else is the service's own (the view inherits it).
 */
export function requestRuntime(rt: Runtime, fields: RequestFields): Runtime {
  const view: Runtime = Object.create(rt);
  view.log = requestLogger(rt.log, fields);
  view.store = (rt.store as Partial<LoggedStore>).forRequest?.(fields) ?? rt.store;
  // Most services listen to no event: their requests need no view of the events.
  if (rt.events.listening) view.events = rt.events.inRequest(fields);
  return view;
}

/** A request's conditional headers, read by the HTTP layer (`http/preconditions.ts`). */
export interface Preconditions {
  /** `If-Match` entity tags, bare (`*` kept); absent without the header. */
  ifMatch?: string[];
  /** `If-None-Match` entity tags, bare (`*` kept); absent without the header. */
  ifNoneMatch?: string[];
  /** `If-Modified-Since`, ms since the epoch; absent without the header or when unreadable. */
  ifModifiedSince?: number;
}

export interface RequestContext {
  /** Effective method (after `X-HTTP-Method-Override`). */
  method: Method;
  resource: Resource;
  /** The Web request as received (hooks may read headers, url ...). */
  request: Request;
  /** Sub-resource URL variable values, by field, already typed. */
  urlValues: Doc;
  /** Item lookup, e.g. `{_id: ObjectId(...)}`; empty at resource endpoints. Hooks may add to it. */
  lookup: Doc;
  query: URLSearchParams;
  /** Parsed body, for writes. */
  body?: unknown;
  /** Client IP address. */
  ip: string;
  /** The resource endpoint path as requested, without the API prefix (`people/1/invoices`). */
  resourcePath: string;
  /** An in-process call of the embedding app (no HTTP request): writes need no `If-Match`. */
  internal?: boolean;
  /** The request's conditional headers (none for an in-process call). */
  preconditions?: Preconditions;
  /** The authenticated account (null: anonymous, public endpoint or no authentication). */
  account?: Account | null;
}

/** What a service answers: the renderer turns it into a response. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}
