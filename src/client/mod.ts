/**
 * A typed client for the service, for Deno, Node 20+ and browsers (`fetch` only):
 *
 * ```ts
 * import { createClient } from "./src/client/mod.ts";
 * import { type Api, paths } from "./api_types.ts"; // deno task client:types
 * const api = createClient<Api>({ baseUrl: "http://localhost:5000/", paths });
 * const people = api.resource("people");
 * for await (const person of people.all({ where: { lastname: "Lovelace" } })) { ... }
 * ```
 *
 * It imports nothing outside `src/client/` (tests/architecture_test.ts).
 */
export { Client, createClient, EtagCache, ResourceClient } from "./client.ts";
export type { ApiOf } from "./client.ts";
export type {
  ByteRange,
  CallOptions,
  ChangesOptions,
  ClientOptions,
  GetOptions,
  ListQuery,
  MediaFile,
  Target,
  WriteOptions,
} from "./client.ts";
export type { Credentials } from "./auth.ts";
export type { RequestOptions, RetryOptions } from "./http.ts";
export {
  AbortedError,
  AuthError,
  ClientError,
  ConflictError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ResponseError,
  UnavailableError,
  ValidationError,
} from "./errors.ts";
export type { ErrorBody, FieldIssues, Issues } from "./errors.ts";
export type {
  AnyApi,
  AnyResource,
  ApiShape,
  ChangeEvent,
  Embedded,
  Operators,
  Page,
  Projection,
  ResourceShape,
  Sort,
  SortKey,
  Where,
  Written,
} from "./types.ts";
export { generateTypes, type TypeSource } from "./typegen.ts";
