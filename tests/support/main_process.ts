/**
 * The command line (`src/main.ts`) as a child process on a free loopback port, for scenarios
 * that need the real server (its HTTP server, signals, shutdown). Every wait has a deadline.
 */
import { freePort } from "./net.ts";
import { until } from "./wait.ts";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

/**
 * Runs `src/main.ts` with `args` to its end (killed after 30 s at the latest): its exit code
 * and what it printed.
 */
export async function runMain(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr).trim() };
}

/** A running `src/main.ts`. */
export interface MainProcess {
  child: Deno.ChildProcess;
  port: number;
  /** `http://127.0.0.1:<port>/` */
  base: string;
  /** What the process wrote to stderr so far. */
  stderr(): string;
  /** Kills the process if it still runs and waits for it to exit. */
  kill(): Promise<void>;
}

/**
 * Starts `src/main.ts --settings <settings>` with `env` (values made strings) and waits until
 * it says it is serving; the process is killed after `lifetimeMs` whatever happens.
 */
export async function startMain(
  settings: string,
  options: { env?: Record<string, unknown>; waitMs?: number; lifetimeMs?: number } = {},
): Promise<MainProcess> {
  const port = freePort();
  const env: Record<string, string> = {
    DENO_NO_UPDATE_CHECK: "1",
    NO_COLOR: "1",
    HOST: "127.0.0.1",
    PORT: String(port),
  };
  for (const [key, value] of Object.entries(options.env ?? {})) env[key] = String(value);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--settings", settings],
    env,
    stdout: "null",
    stderr: "piped",
    signal: AbortSignal.timeout(options.lifetimeMs ?? 60_000),
  }).spawn();
  let text = "";
  void child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (text += chunk) }),
  ).catch(() => {});
  const main: MainProcess = {
    child,
    port,
    base: `http://127.0.0.1:${port}/`,
    stderr: () => text,
    async kill() {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already exited.
      }
      await child.status;
    },
  };
  try {
    await until(() => /serving /.test(text), "the service listens", {
      ms: options.waitMs ?? 30_000,
    });
  } catch (error) {
    await main.kill();
    throw new Error(`${(error as Error).message}; stderr: ${text}`);
  }
  return main;
}
