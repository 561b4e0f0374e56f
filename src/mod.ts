/**
 * The public API for applications that embed the service:
 *
 * ```ts
 * import { createService } from "./src/mod.ts";
 * const service = await createService({ DOMAIN: { people: {} } });
 * service.events.on("on_insert_people", (items) => { ... });
 * Deno.serve(service.fetch);
 * ```
 */
import { parseSort } from "./query/sort.ts";
import { buildDomain, type Domain } from "./domain/build.ts";
import { addOplogResource } from "./domain/oplog.ts";
import { Events } from "./events.ts";
import { createHandler } from "./http/app.ts";
import { withHttpErrors } from "./http/errors.ts";
import { publicUrls } from "./http/urls.ts";
import { startServer } from "./http/server.ts";
import { createLogger, type Logger } from "./log.ts";
import {
  checkSettings,
  closest,
  distance,
  type Settings,
  SettingsError,
} from "./settings/check.ts";
import { mongoOnly, unknownOperators } from "./doc/match/operator-names.ts";
import { ENGINE_OPERATORS } from "./doc/match/engine.ts";
import { applyEnvOverrides } from "./settings/load.ts";
import type { Runtime } from "./services/runtime.ts";
import { ensureIndexes } from "./services/indexes.ts";
import { openStore, wantsMongo } from "./store/open.ts";
import { unsatisfiableOnOneNode } from "./store/write_concern.ts";
import { loggedStore } from "./store/logged.ts";
import type { Store } from "./store/store.ts";
import { type CompiledSchema, compileSchema, SchemaError } from "./validation/mod.ts";
import type { Coercer, CustomRule, CustomType, DefaultSetter } from "./validation/mod.ts";
import { formatDate, parseDate } from "./validation/dates.ts";
import { freshString } from "./util/strings.ts";
import { cachedDates } from "./util/date_cache.ts";
import { metaFields } from "./services/meta.ts";
import { createDataAccess, type DataAccess } from "./services/data.ts";
import { corsConfig } from "./http/middleware/cors.ts";
import { RATE_LIMIT_HEADERS } from "./http/middleware/rate-limit.ts";
import { openLimiter, rateLimitConfig, rateLimitingOn } from "./ratelimit/mod.ts";
import { Auth, type AuthenticateFn } from "./auth/mod.ts";
import { authConfig, hideSecrets } from "./auth/config.ts";
import { openApiConfig } from "./openapi/config.ts";
import { describeApi } from "./openapi/document.ts";
import { changesConfig } from "./services/changes_config.ts";
import { ChangeHub } from "./services/changes.ts";
import { Metrics, metricsConfig } from "./metrics/mod.ts";

export { HttpError } from "./http/errors.ts";
export { Events } from "./events.ts";
export { SettingsError } from "./settings/check.ts";
export { type Server, type ServerTls, startServer } from "./http/server.ts";
/** @deprecated The earlier name of {@linkcode startServer}, kept for embedding applications. */
export const serve: typeof startServer = startServer;
export type { Coercer, CustomRule, CustomType, DefaultSetter } from "./validation/mod.ts";
export type { DataAccess, DataReply, Target } from "./services/data.ts";
export { accountOf } from "./auth/mod.ts";
export type { Account, AuthenticateFn } from "./auth/mod.ts";
export { canRead } from "./services/policy.ts";
export type { Metrics } from "./metrics/mod.ts";
/** The typed client (also its own entry point, src/client/mod.ts, for browsers and Node). */
export { Client, ClientError, createClient } from "./client/mod.ts";

export interface ServiceOptions {
  /** A store to use instead of the one the settings name (tests, custom stores). */
  store?: Store;
  /** An event bus with callbacks already registered. */
  events?: Events;
  logger?: Logger;
  /** Custom validation rules, types and coercers (see docs/schemas-and-validation.md). */
  extensions?: {
    rules?: Record<string, CustomRule>;
    types?: Record<string, CustomType>;
    coercers?: Record<string, Coercer>;
    defaultSetters?: Record<string, DefaultSetter>;
  };
  /** Apply environment overrides (DB_*, MONGO_URI, HOST, PORT ...); default true. */
  env?: boolean;
  /**
   * Custom authentication (Eve's `check_auth`): answers the account of a request, or null
   * to refuse it. Used for every protected endpoint, before the AUTH_SCHEMES ones.
   */
  authenticate?: AuthenticateFn;
}

export interface Service {
  /** The fetch handler: give it to `Deno.serve` or call it in-process. */
  fetch(request: Request, info?: unknown): Promise<Response>;
  events: Events;
  settings: Settings;
  store: Store;
  /**
   * In-process data access to every resource, internal ones included: the same
   * validation, versioning, oplog and database events as HTTP, without authentication.
   */
  data: DataAccess;
  /** Warnings found while checking the settings (accepted Eve keys without effect ...). */
  warnings: string[];
  /**
   * Ends every open change feed. A server drains open requests before it stops, and a feed
   * never ends by itself: call this when shutdown starts. `close()` does it too.
   */
  endStreams(): void;
  /** The Prometheus metrics (docs/configuration.md, "Metrics"), or null when METRICS is off. */
  metrics: Metrics | null;
  /**
   * The API description OPENAPI_PATH serves (a fresh copy, built from the same settings),
   * or null when OPENAPI_PATH is off. For tools and tests that check answers against it.
   */
  description(): Record<string, unknown> | null;
  close(): Promise<void>;
}

/**
 * Checks settings and compiles every schema, without opening a store. Throws
 * SettingsError listing every problem.
 */
export function prepare(raw: Record<string, unknown>, options: ServiceOptions = {}) {
  const input = structuredClone(raw);
  const problems: string[] = options.env === false ? [] : applyEnvOverrides(input);
  const hostGiven = "DB_HOST" in input || "MONGO_HOST" in input;
  const checked = checkSettings(input);
  problems.push(...checked.problems);
  const settings = checked.settings;
  addOplogResource(settings);
  hideSecrets(settings);
  const domain = buildDomain(settings, problems, {
    parseSortText: parseSort,
    types: options.extensions?.types,
  });
  if (!options.store && !wantsMongo(settings, hostGiven)) {
    pipelineProblems(domain, { problems, warnings: checked.warnings });
  }
  const auth = authConfig(settings, { custom: options.authenticate, problems });
  const schemas = new Map<string, CompiledSchema>();
  for (const resource of domain.values()) {
    try {
      const schema = compileSchema(resource.schema, {
        path: `DOMAIN.${resource.name}.schema`,
        allowUnknown: resource.allowUnknown,
        dateFormat: settings.DATE_FORMAT,
        allowCustomFieldsInGeojson: settings.ALLOW_CUSTOM_FIELDS_IN_GEOJSON,
        metaFields: metaFields({ settings } as Runtime, resource),
        unknownMetaFields: resource.versioning
          ? [
            settings.VERSION,
            settings.LATEST_VERSION,
            resource.idField + settings.VERSION_ID_SUFFIX,
          ]
          : [],
        idField: resource.idField,
        versionField: settings.VERSION,
        resources: [...domain.keys()],
        rules: options.extensions?.rules,
        types: options.extensions?.types,
        coercers: options.extensions?.coercers,
        defaultSetters: options.extensions?.defaultSetters,
        model: resource.schemaModel,
      });
      schemas.set(resource.name, schema);
    } catch (error) {
      if (error instanceof SchemaError) problems.push(...error.problems);
      else throw error;
    }
    for (const [field, relation] of Object.entries(resource.schemaModel.relations)) {
      // Internal documents are never served over HTTP, embedded ones included.
      if (relation.embeddable && domain.get(relation.resource)?.internal) {
        problems.push(
          `DOMAIN.${resource.name}.schema.${field}.data_relation: "${relation.resource}" is an ` +
            `internal resource and cannot be embeddable`,
        );
      }
    }
  }
  const rateLimit = rateLimitConfig(settings, problems);
  const changes = changesConfig(settings, problems);
  const metrics = metricsConfig(settings, problems);
  const cors = corsConfig(settings, { problems, warnings: checked.warnings }, {
    extraExpose: rateLimitingOn(rateLimit) ? RATE_LIMIT_HEADERS : [],
  });
  const openapi = openApiConfig(settings, { domain, problems, warnings: checked.warnings });
  if (problems.length) throw new SettingsError(problems);
  return {
    openapi,
    settings,
    domain,
    schemas,
    hostGiven,
    auth,
    warnings: checked.warnings,
    cors,
    rateLimit,
    changes,
    metrics,
  };
}

/**
 * The operators of aggregation pipelines that the embedded store does not run. Its engine
 * meets an operator only when it evaluates it: a pipeline with a typo answered an empty
 * collection and failed once documents came, where MongoDB refuses every request. A name
 * that is no operator, or one running server-side JavaScript, is a problem; a MongoDB
 * operator the engine lacks is a warning (the endpoint answers 400 until the service runs on
 * MongoDB). With MongoDB the server judges its own operators (a newer server knows more).
 */
function pipelineProblems(
  domain: Domain,
  report: { problems: string[]; warnings: string[] },
): void {
  for (const resource of domain.values()) {
    if (!resource.aggregation) continue;
    for (const { name, at, javascript } of unknownOperators(resource.aggregation.pipeline)) {
      const where = `DOMAIN.${resource.name}.datasource.aggregation.pipeline${at}`;
      if (javascript) {
        report.problems.push(
          `${where}: ${name} runs server-side JavaScript, which this service does not`,
        );
      } else if (mongoOnly(name)) {
        report.warnings.push(
          `${where}: ${name} runs on MongoDB only: on the embedded store the endpoint answers 400`,
        );
      } else {
        // A suggestion only when it is near: one edit in three letters at most.
        const near = closest(name, ENGINE_OPERATORS);
        const close = distance(name.toLowerCase(), near.toLowerCase()) <=
          Math.max(1, name.length / 3);
        report.problems.push(
          `${where}: ${name} is not an operator the embedded store runs` +
            (close ? ` (did you mean ${near}?)` : ""),
        );
      }
    }
  }
}

/** Builds the service: settings in, a fetch handler out. */
export async function createService(
  raw: Record<string, unknown>,
  options: ServiceOptions = {},
): Promise<Service> {
  const prepared = prepare(raw, options);
  const {
    settings,
    domain,
    schemas,
    hostGiven,
    auth,
    warnings,
    cors,
    rateLimit,
    openapi,
    changes,
  } = prepared;
  const log = options.logger ?? createLogger(undefined, settings.DEBUG ? "debug" : "info");
  const metrics = prepared.metrics ? new Metrics() : null;
  const writeConcerns: Record<string, Record<string, unknown>> = Object.create(null);
  // The store opened here refuses those writes (a store handed in is the caller's).
  const embedded = !options.store && !wantsMongo(settings, hostGiven);
  for (const resource of domain.values()) {
    const concern = resource.extra.mongo_write_concern as Record<string, unknown> | undefined;
    if (!concern) continue;
    writeConcerns[resource.source] = concern;
    const reason = embedded ? unsatisfiableOnOneNode(concern) : null;
    if (reason !== null) {
      warnings.push(
        `DOMAIN.${resource.name}.mongo_write_concern: ${reason}: every write to the resource ` +
          'fails (500) until it asks for w: 1, 0 or "majority"',
      );
    }
  }
  const store = loggedStore(
    options.store ?? await openStore(settings, hostGiven, writeConcerns),
    log,
    { observe: metrics ? (o) => metrics.observeStore(o) : undefined },
  );
  const events = options.events ?? new Events();
  const dateFormat = settings.DATE_FORMAT;
  const rt: Runtime = {
    instance: {},
    settings,
    domain,
    store,
    events,
    schemas,
    log,
    urls: publicUrls(settings),
    // Fresh strings: dates are in every document of a page (see freshString).
    formatDate: cachedDates((date) => freshString(formatDate(date, dateFormat))),
    parseDate: (text, format) => parseDate(text, format ?? dateFormat),
  };
  const access = auth ? await Auth.create(rt, auth) : undefined;
  rt.auth = access;
  try {
    await ensureIndexes(rt);
  } catch (error) {
    await store.close(); // start-up stops here: nothing else will close it
    throw error;
  }
  if (changes.resources.size > 0) {
    const sources = [...changes.resources.keys()].map((name) => domain.get(name)!.source);
    rt.changes = new ChangeHub(changes, {
      collections: new Set(sources),
      etagField: settings.ETAG,
    });
    rt.changes.start(store, log);
  }
  const limiter = await openLimiter(rateLimit, settings, log);
  const fetch = createHandler(rt, {
    cors,
    rateLimit: { config: rateLimit, limiter, log },
    openapi,
    metrics: metrics && prepared.metrics && { metrics, config: prepared.metrics },
    auth: access,
  });
  return {
    fetch,
    events,
    settings,
    store,
    data: withHttpErrors(createDataAccess(rt), settings),
    warnings,
    endStreams: () => rt.changes?.closeAll(),
    metrics,
    description: () =>
      openapi
        ? describeApi(rt, {
          config: openapi,
          rateLimited: rateLimitingOn(rateLimit),
          auth: access,
        })
        : null,
    close: async () => {
      await rt.changes?.close();
      await limiter?.close();
      if (!options.store) await store.close();
    },
  };
}
