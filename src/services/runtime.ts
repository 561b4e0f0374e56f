/**
 * What resource services share for the life of the service, and the small request
 * context they receive (no HTTP framework objects, so embedding apps use the same code).
 */
import type { Domain } from "../domain/build.ts";
import type { Method, Resource } from "../domain/types.ts";
import type { Events } from "../events.ts";
import type { Settings } from "../settings/check.ts";
import type { Doc, Store } from "../store/store.ts";
import type { CompiledSchema } from "../validation/mod.ts";
import type { Logger } from "../log.ts";
import type { Account, Auth } from "../auth/mod.ts";
import type { ChangeHub } from "./changes.ts";

export interface Runtime {
  settings: Settings;
  domain: Domain;
  store: Store;
  events: Events;
  /** Compiled validators by resource name. */
  schemas: ReadonlyMap<string, CompiledSchema>;
  log: Logger;
  /** Authentication and authorisation; absent when the API has none. */
  auth?: Auth;
  /** The change feeds' hub; absent when no resource has a feed. */
  changes?: ChangeHub;
  formatDate(date: Date): string;
  /** Reads a date in DATE_FORMAT (or in `format`); null when the text does not fit. */
  parseDate(text: string, format?: string): Date | null;
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
  /** The authenticated account (null: anonymous, public endpoint or no authentication). */
  account?: Account | null;
}

/** What a service answers: the renderer turns it into a response. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}
