/**
 * The table of endpoint kinds: for each kind of {@link Target} (`target.ts`), what
 * authorisation guards, the labels the request metrics carry, and the route that answers
 * it. Authentication, metrics and the app's one catch-all handler read the request's
 * target through this table; a new kind of endpoint is an entry here and a branch in the
 * resolver.
 */
import type { Context } from "hono";
import type { AppEnv } from "./env.ts";
import { HttpError } from "./errors.ts";
import { parsePreconditions } from "./preconditions.ts";
import { readRequestBody } from "./body/mod.ts";
import { isValidJsonpCallback } from "./jsonp.ts";
import { READ_ONLY_ALLOW } from "../domain/methods.ts";
import { clientIp } from "./client-address.ts";
import type { Endpoints, Target } from "./target.ts";
import type { AuthTarget } from "../auth/mod.ts";
import type { Resource } from "../domain/types.ts";
import type { Reply, Runtime } from "../services/runtime.ts";
import { notFound } from "../services/errors.ts";
import { homeRoute } from "../routes/home.ts";
import { resourceRoute } from "../routes/resource.ts";
import { schemaRoute } from "../routes/schema.ts";
import { mediaRoute } from "../routes/media.ts";
import { changesRoute } from "../routes/changes.ts";

/** What a route is handed: the service, the request's context and the endpoints. */
export interface Handling {
  rt: Runtime;
  c: Context<AppEnv>;
  routes: Endpoints;
}

/** One kind of endpoint. */
interface Kind<T extends Target> {
  /**
   * What authorisation guards: the kind it checks and the resource (null: a service-wide
   * endpoint); null when there is nothing to guard (no endpoint, the docs page's files).
   */
  guarded(target: T): { kind: AuthTarget["kind"]; resource: Resource | null } | null;
  /** The `endpoint` label of the request metrics (the resource is the other label). */
  label: string;
  /** The endpoint's methods as its `Allow` header names them; null: no endpoint. */
  allow(target: T): string | null;
  /** Answers the request: a Response, or a Reply the app renders. */
  route(target: T, handling: Handling): Promise<Response | Reply> | Reply;
}

type Of<K extends Target["kind"]> = Extract<Target, { kind: K }>;

const nothing = () => null;
const readOnly = () => READ_ONLY_ALLOW;
const serviceWide = (kind: AuthTarget["kind"]) => () => ({ kind, resource: null });

/** Answers the description or the docs page (both are the OpenAPI endpoints'). */
function described(target: Target, { c, routes }: Handling): Promise<Response> {
  return routes.openapi!.answer(target.path!, c.req.raw, c.get("method"))!;
}

/** The endpoint kinds (see the module comment). */
export const KINDS: { readonly [K in Target["kind"]]: Kind<Of<K>> } = {
  outside: {
    guarded: nothing,
    label: "none",
    allow: nothing,
    route: () => {
      throw new HttpError(404, "The requested URL was not found on the server.");
    },
  },
  none: {
    guarded: nothing,
    label: "none",
    allow: nothing,
    route: () => {
      throw notFound();
    },
  },
  // The description says what the home endpoint links to: it is authorised the same way.
  openapi: { guarded: serviceWide("home"), label: "openapi", allow: readOnly, route: described },
  docs: { guarded: nothing, label: "none", allow: readOnly, route: described },
  home: {
    guarded: serviceWide("home"),
    label: "home",
    allow: readOnly,
    route: (_target, { rt, c, routes }) =>
      homeRoute(rt, {
        request: c.req.raw,
        method: c.get("method"),
        links: routes.openapi?.homeLinks,
      }),
  },
  schema: {
    guarded: serviceWide("schema"),
    label: "schema",
    allow: readOnly,
    route: (target, { rt, c }) =>
      schemaRoute(rt, { target: target.name, request: c.req.raw, method: c.get("method") }),
  },
  media: {
    guarded: serviceWide("media"),
    label: "media",
    allow: readOnly,
    route: (target, { rt, c }) =>
      mediaRoute(rt, {
        id: target.id,
        request: c.req.raw,
        method: c.get("method"),
        account: c.get("account") ?? null,
        preconditions: parsePreconditions(c.req.raw.headers),
      }),
  },
  // A change feed asks what a GET on its resource endpoint asks.
  changes: {
    guarded: (target) => ({ kind: "collection", resource: target.resource }),
    label: "collection",
    allow: readOnly,
    route: (target, { rt, c }) =>
      changesRoute(rt, {
        match: target.match,
        values: target.values,
        request: c.req.raw,
        method: c.get("method"),
        ip: clientIp(c),
      }),
  },
  collection: resourceKind("collection"),
  item: resourceKind("item"),
  lookup: resourceKind("lookup"),
};

type ResourceKind = "collection" | "item" | "lookup";

/** A collection, item or additional-lookup endpoint of the domain. */
function resourceKind(kind: ResourceKind): Kind<Of<ResourceKind>> {
  return {
    guarded: (target) => ({ kind, resource: target.resource }),
    label: kind,
    allow: (target) => [...target.match.endpoint.methods, "OPTIONS"].join(", "),
    route: (target, { rt, c }) =>
      resourceRoute(rt, {
        match: target.match,
        values: target.values,
        request: c.req.raw,
        method: c.get("method"),
        ip: clientIp(c),
        query: target.query ?? new URLSearchParams(),
        preconditions: parsePreconditions(c.req.raw.headers),
        readBody: (options) => readRequestBody(rt.settings, c.req.raw, options),
      }),
  };
}

/** The entry of `target`'s kind. */
function kindOf(target: Target): Kind<Target> {
  return KINDS[target.kind] as Kind<Target>;
}

/** What authorisation checks for `target` with the effective `method`; null: nothing. */
export function authTarget(target: Target, method: string): AuthTarget | null {
  const guarded = kindOf(target).guarded(target);
  return guarded && { kind: guarded.kind, resource: guarded.resource, method };
}

/** The metric labels of `target`: its resource name and endpoint kind, never its URL. */
export function metricsLabels(target: Target): { resource: string; endpoint: string } {
  const guarded = kindOf(target).guarded(target);
  return { resource: guarded?.resource?.name ?? "", endpoint: kindOf(target).label };
}

/**
 * The methods of the endpoint `target` addresses, as its OPTIONS answer's `Allow` names
 * them; null when it addresses none.
 */
export function allowedMethods(target: Target): string | null {
  return kindOf(target).allow(target);
}

/**
 * Answers the request `target` resolved: a bad JSONP callback name is refused first (before
 * any work), then the kind's route runs.
 */
export function dispatch(target: Target, handling: Handling): Promise<Response | Reply> | Reply {
  if (target.kind !== "outside" && target.jsonp !== null && !isValidJsonpCallback(target.jsonp)) {
    throw new HttpError(400, "invalid JSONP callback name");
  }
  return kindOf(target).route(target, handling);
}
