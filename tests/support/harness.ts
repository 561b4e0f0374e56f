/**
 * Conformance harness: every scenario runs against a running service over real HTTP, once
 * per store (embedded, and MongoDB: jongodb or the server MONGO_URI names), served by
 * `Deno.serve` (src/http/server.ts) as `deno task start` serves it.
 *
 * ```ts
 * scenario("POST creates a document", SETTINGS, async (api) => {
 *   const res = await api.post("people", { name: "x" });
 *   assert.equal(res.status, 201);
 * });
 * ```
 *
 * Scenarios of one file with the same settings that do not read each other's data can share
 * one service per store ({@link sharedService}).
 */
import { createService, type Service, type ServiceOptions } from "../../src/mod.ts";
import { JONGODB_GAPS, type MongoTestTarget, sharedMongoTarget } from "./jongodb.ts";
import { jongodbGap, skipUnless } from "./skip.ts";
import { Client } from "./client.ts";
import { createLogger } from "../../src/log.ts";
import { startServer } from "../../src/http/server.ts";
import { describedApi } from "./described.ts";

export type StoreKind = "embedded" | "mongo";
export const STORES: StoreKind[] = (Deno.env.get("TEST_STORES")?.split(",") as StoreKind[]) ??
  ["embedded", "mongo"];

/** The shared MongoDB target of this test process, started on first use. */
export function mongoServer(): Promise<MongoTestTarget> {
  return sharedMongoTarget();
}

let counter = 0;
/** A unique name for a database or data directory. */
function uniqueName(): string {
  return `t${Date.now().toString(36)}${(counter++).toString(36)}${
    Math.random().toString(36).slice(2, 6)
  }`;
}

/** Replaces the database name in a MongoDB URI. */
function withDatabase(uri: string, db: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]+)(\/[^?]*)?(\?.*)?$/.exec(uri);
  if (!match) throw new Error(`cannot parse MONGO_URI ${uri}`);
  return `${match[1]}/${db}${match[3] ?? ""}`;
}

/** Store settings for a fresh, empty database of `kind`. */
export async function storeSettings(kind: StoreKind): Promise<Record<string, unknown>> {
  if (kind === "embedded") {
    const dir = await Deno.makeTempDir({ prefix: "restsvc-test-" });
    return { STORE: "embedded", DATA_DIR: dir };
  }
  const server = await mongoServer();
  return { STORE: "mongo", MONGO_URI: withDatabase(server.uri, uniqueName()) };
}

/** A running service and a client bound to it. */
export interface Running {
  service: Service;
  api: Client;
  url: string;
  kind: StoreKind;
  stop(): Promise<void>;
}

/**
 * Starts the service with `settings` on a free loopback port against a fresh `kind` store,
 * or against `reuse` (store settings from {@link storeSettings}, kept when it stops: another
 * service may be started on the same data later; the caller removes it).
 */
export async function startService(
  settings: Record<string, unknown>,
  kind: StoreKind,
  options: ServiceOptions = {},
  reuse?: Record<string, unknown>,
): Promise<Running> {
  const store = reuse ?? await storeSettings(kind);
  // Records go nowhere unless TEST_LOG is set; scenarios about logging pass their own logger.
  const logger = Deno.env.get("TEST_LOG") ? undefined : createLogger(() => {});
  const service = await createService({ ...settings, ...store }, {
    env: false,
    logger,
    ...options,
  });
  const server = await startServer(service.fetch, { hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${server.addr.port}/`;
  const api = new Client(url);
  checkAnswers(api, service);
  return {
    service,
    url,
    kind,
    api,
    async stop() {
      service.endStreams();
      await server.shutdown();
      await service.close();
      if (kind === "embedded" && !reuse) {
        await Deno.remove(store.DATA_DIR as string, { recursive: true });
      }
    },
  };
}

/**
 * Every answer `api` gets is checked against the service's API description (when it has
 * one): an answer the description does not allow fails the request, and so the scenario.
 * `TEST_DESCRIBED_LOG=<file>` appends the problems to that file instead (a survey of many
 * scenario files at once).
 */
function checkAnswers(api: Client, service: Service) {
  const doc = service.description();
  if (!doc) return;
  const described = describedApi(doc);
  const log = Deno.env.get("TEST_DESCRIBED_LOG");
  api.observe = (exchange) => {
    // The override header names the method answered only when the settings allow it.
    const overrides = service.settings.ALLOW_OVERRIDE_HTTP_METHOD;
    const problems = described.check(
      overrides ? exchange : { ...exchange, requestHeaders: undefined },
    );
    if (!problems.length) return;
    if (log) Deno.writeTextFileSync(log, problems.join("\n") + "\n", { append: true });
    else throw new Error(`answer not allowed by the API description:\n${problems.join("\n")}`);
  };
}

/**
 * Whether Deno's op and resource sanitizers check a scenario on each store: on for the
 * embedded store, off for MongoDB, whose driver keeps its connection pool's sockets and its
 * monitors' timers beyond a test (and the shared jongodb process outlives the first test
 * that starts it).
 */
export const SANITIZED: Readonly<Record<StoreKind, boolean>> = { embedded: true, mongo: false };

export interface ScenarioOptions extends ServiceOptions {
  /** jongodb gaps (names from JONGODB_GAPS) this scenario needs; it is skipped there. */
  gaps?: string[];
  only?: boolean;
}

/** Registers `name` once per store; `body` gets a client of a freshly started service. */
export function scenario(
  name: string,
  settings: Record<string, unknown>,
  body: (api: Client, running: Running) => Promise<void>,
  options: ScenarioOptions = {},
) {
  const { gaps = [], only, ...serviceOptions } = options;
  for (const kind of STORES) {
    const emulated = kind === "mongo" && !Deno.env.get("MONGO_URI");
    const gap = emulated ? gaps.find((g) => JONGODB_GAPS.has(g)) : undefined;
    Deno.test({
      ...skipUnless(`[${kind}] ${name}`, gap && jongodbGap(gap)),
      only,
      sanitizeOps: SANITIZED[kind],
      sanitizeResources: SANITIZED[kind],
      async fn() {
        const running = await startService(settings, kind, serviceOptions);
        try {
          await body(running.api, running);
        } finally {
          await running.stop();
        }
      },
    });
  }
}

/** A scenario of a {@link sharedService}: its name, body and jongodb gaps. */
interface SharedScenario {
  name: string;
  body: (api: Client, running: Running) => Promise<void>;
  gaps: string[];
}

/**
 * One service per store that several scenarios of a file share, instead of one each (a
 * start costs more than most scenarios: the schemas and the API description are compiled,
 * a store opened). `title` names the group: one test per store, `[<store>] <title>`,
 * starts the service, runs each scenario added with the function returned as a step of
 * its own (named as a scenario would be, with the sanitizers of its store), and stops the
 * service. Only for scenarios that do not depend on what the others stored: each one
 * writes documents of its own and reads back only those (a scenario counting a
 * collection's documents stays a {@link scenario}).
 *
 * ```ts
 * const shared = sharedService("validation rules", SETTINGS);
 * shared("min / max bound numbers", async (api) => { ... });
 * ```
 */
export function sharedService(
  title: string,
  settings: Record<string, unknown>,
  options: ServiceOptions = {},
): (
  name: string,
  body: SharedScenario["body"],
  scenarioOptions?: { gaps?: string[] },
) => void {
  const scenarios: SharedScenario[] = [];
  for (const kind of STORES) {
    const emulated = kind === "mongo" && !Deno.env.get("MONGO_URI");
    const sanitizers = { sanitizeOps: SANITIZED[kind], sanitizeResources: SANITIZED[kind] };
    Deno.test({
      name: `[${kind}] ${title}`,
      ...sanitizers,
      async fn(t) {
        const running = await startService(settings, kind, options);
        try {
          for (const { name, body, gaps } of scenarios) {
            const gap = emulated ? gaps.find((g) => JONGODB_GAPS.has(g)) : undefined;
            await t.step({
              ...skipUnless(`[${kind}] ${name}`, gap && jongodbGap(gap)),
              ...sanitizers,
              fn: () => body(running.api, running),
            });
          }
        } finally {
          await running.stop();
        }
      },
    });
  }
  return (name, body, scenarioOptions = {}) => {
    scenarios.push({ name, body, gaps: scenarioOptions.gaps ?? [] });
  };
}
