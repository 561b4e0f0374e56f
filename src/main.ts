/**
 * Command line: `deno task start [--settings FILE]` (or env SETTINGS=FILE). Loads and checks
 * the settings, opens the store, serves, and shuts down gracefully on SIGINT / SIGTERM.
 */
import { parseArgs } from "node:util";
import { createService, SettingsError } from "./mod.ts";
import { loadSettingsFile } from "./settings/load.ts";
import { type FetchHandler, serve } from "./http/server.ts";
import { createLogger } from "./log.ts";

const DEFAULT_SETTINGS = new URL("../config/settings.json", import.meta.url).pathname;

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: { settings: { type: "string", short: "s" }, check: { type: "boolean" } },
  });
  const file = values.settings ?? Deno.env.get("SETTINGS") ?? DEFAULT_SETTINGS;
  let service;
  try {
    const raw = await loadSettingsFile(file);
    service = await createService(raw.settings, {
      extensions: raw.exports.extensions as never,
      events: raw.exports.events as never,
    });
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(`refusing to start: ${file} has ${error.problems.length} problem(s):`);
      for (const problem of error.problems) console.error(`  - ${problem}`);
    } else console.error(`refusing to start: ${(error as Error).message}`);
    return 1;
  }
  for (const warning of service.warnings) console.error(`warning: ${warning}`);
  if (values.check) {
    await service.close();
    console.log(`${file}: settings are valid`);
    return 0;
  }
  const { settings } = service;
  const log = createLogger();
  const server = await serve(service.fetch as FetchHandler, {
    hostname: settings.HOST,
    port: settings.PORT,
    limits: {
      headersTimeoutMs: settings.SERVER_HEADERS_TIMEOUT_MS,
      idleTimeoutMs: settings.SERVER_IDLE_TIMEOUT_MS,
      maxConnections: settings.SERVER_MAX_CONNECTIONS,
    },
    log: (level, message, extra) => log.log(level, message, extra),
    onListen: ({ hostname, port }) => {
      console.error(
        `serving ${file} on http://${hostname}:${port}/ (store: ${service.store.kind})`,
      );
    },
  });
  const stop = () => void server.shutdown();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await server.finished;
  await service.close();
  return 0;
}

Deno.exit(await main());
