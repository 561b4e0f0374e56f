/**
 * Command line: `deno task start [--settings FILE] [--check]` (or env SETTINGS=FILE). Loads
 * and checks the settings, opens the store, serves, and shuts down gracefully on SIGINT /
 * SIGTERM. Every failure is one line on stderr and a non-zero exit, never a stack trace.
 *
 * ```sh
 * deno task start --settings my-settings.json
 * deno task start --check --settings my-settings.json   # checks; opens no store
 * ```
 */
import { parseArgs } from "node:util";
import { createService, prepare, SettingsError } from "./mod.ts";
import { loadSettingsFile } from "./settings/load.ts";
import { type FetchHandler, type ServerTls, startServer } from "./http/server.ts";
import { createLogger, flushLog } from "./log.ts";

const DEFAULT_SETTINGS = new URL("../config/settings.json", import.meta.url).pathname;

const USAGE = `usage: deno task start [options]

options:
  -s, --settings FILE   settings: a JSON file, an Eve settings.py (its literal subset) or a
                        TS/JS module (default: env SETTINGS, else config/settings.json)
      --check           check the settings and schemas, then exit (opens no store, writes
                        nothing; safe while the service runs)
  -h, --help            show this help

environment: SETTINGS, HOST, PORT, STORE, DATA_DIR, MONGO_URI, DB_HOST, DB_PORT, DB_USERNAME,
DB_PASSWORD, DB_AUTH_SOURCE, DB_DBNAME (and MONGO_* names), REDIS_URL, METRICS_TOKEN,
TLS_CERT_FILE, TLS_KEY_FILE

Alone, this serves development and private networks; in production put the reverse proxy
of deploy/ in front (docs/deployment.md).`;

/** In-flight requests get this long to finish on SIGINT / SIGTERM. */
const SHUTDOWN_DEADLINE_MS = 10_000;

/** One line on stderr, after the log lines still waiting to be written (keeps their order). */
function say(line: string): void {
  flushLog();
  console.error(line);
}

function fail(message: string, code = 1): number {
  say(message);
  return code;
}

async function main(): Promise<number> {
  let values: { settings?: string; check?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: Deno.args,
      options: {
        settings: { type: "string", short: "s" },
        check: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    return fail(`${(error as Error).message} (see --help)`, 2);
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const file = values.settings ?? Deno.env.get("SETTINGS") ?? DEFAULT_SETTINGS;
  let raw;
  try {
    raw = await loadSettingsFile(file);
  } catch (error) {
    return fail(`refusing to start: cannot read ${file}: ${(error as Error).message}`);
  }
  const options = {
    extensions: raw.exports.extensions as never,
    events: raw.exports.events as never,
  };
  let service;
  try {
    if (values.check) {
      const { warnings } = prepare(raw.settings, options);
      for (const warning of warnings) say(`warning: ${warning}`);
      console.log(`${file}: settings are valid`);
      return 0;
    }
    service = await createService(raw.settings, options);
  } catch (error) {
    if (!(error instanceof SettingsError)) {
      return fail(`refusing to start: ${(error as Error).message}`);
    }
    say(`refusing to start: ${file} has ${error.problems.length} problem(s):`);
    for (const problem of error.problems) say(`  - ${problem}`);
    return 1;
  }
  for (const warning of service.warnings) say(`warning: ${warning}`);
  const { settings } = service;
  const log = createLogger();
  let tls: ServerTls | undefined;
  if (settings.TLS_CERT_FILE !== null && settings.TLS_KEY_FILE !== null) {
    try {
      tls = {
        cert: await Deno.readTextFile(settings.TLS_CERT_FILE),
        key: await Deno.readTextFile(settings.TLS_KEY_FILE),
      };
    } catch (error) {
      await service.close();
      return fail(`refusing to start: cannot read the TLS files: ${(error as Error).message}`);
    }
  }
  let server;
  try {
    server = await startServer(service.fetch as FetchHandler, {
      hostname: settings.HOST,
      port: settings.PORT,
      tls,
      log: (level, message, extra) => log.log(level, message, extra),
      onListen: ({ hostname, port }) => {
        const scheme = tls ? "https" : "http";
        const host = hostname.includes(":") ? `[${hostname}]` : hostname;
        say(`serving ${file} on ${scheme}://${host}:${port}/ (store: ${service.store.kind})`);
      },
    });
  } catch (error) {
    await service.close();
    const reason = error instanceof Deno.errors.AddrInUse
      ? "the address is already in use"
      : (error as Error).message;
    return fail(`cannot listen on ${settings.HOST}:${settings.PORT}: ${reason}`);
  }
  const running = server;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // Drain in-flight requests, but never wait on them for ever.
    const deadline = setTimeout(() => {
      say(`shutdown: requests still running after ${SHUTDOWN_DEADLINE_MS} ms`);
      Deno.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    // Open change feeds never end by themselves: end them so the drain isn't held.
    service.endStreams();
    void running.shutdown().finally(() => clearTimeout(deadline));
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await running.finished;
  await service.close();
  // An accept error (EMFILE) ends the server: exit non-zero, to be restarted.
  return stopping ? 0 : 1;
}

Deno.exit(await main());
