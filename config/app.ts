/**
 * An example application embedding the service: it loads `config/settings.json` (or the
 * file named by `--settings` / env SETTINGS), registers a few hooks, and serves.
 *
 *     deno task start:example
 *
 * The hooks show the main uses of events:
 * - a dynamic filter: `GET /works` with an `X-Owner: <person id>` header lists only that
 *   person's works (on_pre_GET_works alters the lookup);
 * - a veto: people whose lastname is on a block list cannot be created (on_insert_people
 *   throws a 403), and the people collection cannot be deleted wholesale (403);
 * - a response change: a fetched person carries a computed `fullname` (on_fetched_item);
 * - an audit line for every stored document (on_inserted, generic form);
 * - an audit trail kept in the internal resource `audit` through in-process data access
 *   (`service.data`), which HTTP clients can't reach.
 */
import { parseArgs } from "node:util";
import { createService, Events, HttpError, type Service, SettingsError } from "../src/mod.ts";
import { createLogger, type Logger } from "../src/log.ts";
import { loadSettingsFile } from "../src/settings/load.ts";
import { ObjectId } from "../src/doc/bson.ts";
import type { Doc } from "../src/store/store.ts";

const DEFAULT_SETTINGS = new URL("./settings.json", import.meta.url).pathname;

/** Lastnames the example refuses to store. */
export const BLOCKED_LASTNAMES = new Set(["root", "admin"]);

/** Registers the example hooks on `events` and returns it. */
export function registerExampleHooks(events: Events, log: Logger = createLogger()): Events {
  events.on("on_pre_GET_works", (request: Request, lookup: Doc) => {
    const owner = request.headers.get("x-owner");
    if (owner === null) return;
    if (!ObjectId.isValid(owner) || !/^[a-f0-9]{24}$/i.test(owner)) {
      throw new HttpError(400, "X-Owner must be a person id");
    }
    lookup.owner = new ObjectId(owner);
  });

  events.on("on_insert_people", (items: Doc[]) => {
    for (const item of items) {
      if (BLOCKED_LASTNAMES.has(String(item.lastname).toLowerCase())) {
        throw new HttpError(403, `lastname ${item.lastname} is reserved`);
      }
    }
  });

  events.on("on_delete_resource_people", () => {
    throw new HttpError(403, "people cannot be deleted all at once");
  });

  events.on("on_fetched_item_people", (person: Doc) => {
    const parts = [person.firstname, person.lastname].filter((p) => typeof p === "string");
    person.fullname = parts.join(" ");
  });

  events.on("on_inserted", (resource: string, items: Doc[]) => {
    log.log("info", `stored ${items.length} document(s) in ${resource}`, { resource });
  });
  return events;
}

/**
 * Keeps an audit trail of created documents in the internal resource `audit`, written
 * in-process (validated, logged and evented like an HTTP write).
 */
export function registerAuditTrail(service: Service): void {
  service.events.on("on_inserted", async (resource: string, items: Doc[]) => {
    if (resource === "audit") return; // its own inserts raise this event too
    const entries = items.map((item) => ({
      resource,
      action: "create",
      document: String(item._id),
    }));
    await service.data.post("audit", entries);
  });
}

/** Builds the example service from a settings file, hooks registered. */
export async function createExampleService(file = DEFAULT_SETTINGS): Promise<Service> {
  const raw = await loadSettingsFile(file);
  const log = createLogger();
  const events = registerExampleHooks(new Events(), log);
  const service = await createService(raw.settings, { events, logger: log });
  if (service.settings.DOMAIN && "audit" in (service.settings.DOMAIN as Doc)) {
    registerAuditTrail(service);
  }
  return service;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ args: Deno.args, options: { settings: { type: "string" } } });
  const file = values.settings ?? Deno.env.get("SETTINGS") ?? DEFAULT_SETTINGS;
  let service: Service;
  try {
    service = await createExampleService(file);
  } catch (error) {
    const problems = error instanceof SettingsError ? error.problems : [(error as Error).message];
    console.error(`refusing to start: ${file}:\n  - ${problems.join("\n  - ")}`);
    return 1;
  }
  const controller = new AbortController();
  const server = Deno.serve({
    hostname: service.settings.HOST,
    port: service.settings.PORT,
    signal: controller.signal,
    onListen: ({ hostname, port }) => {
      console.error(`example app serving ${file} on http://${hostname}:${port}/`);
    },
  }, service.fetch);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => controller.abort());
  }
  await server.finished;
  await service.close();
  return 0;
}

if (import.meta.main) Deno.exit(await main());
