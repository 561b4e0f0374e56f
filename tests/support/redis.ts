/**
 * Test support: a redis-server of the test process's own, on a free loopback port, with no
 * persistence; killed when the process ends. `REDIS_URL` selects an existing server
 * instead (only for the shared one: tests that kill Redis always start their own).
 */
import { processShared } from "./shared.ts";
import { freePort } from "./net.ts";

/** A running redis-server. */
export interface RedisTestServer {
  url: string;
  /** Stops the server (SIGKILL: as abrupt as a crash) and waits for it to exit. */
  stop(): Promise<void>;
  /** Suspends the server (SIGSTOP): connections stay open but nothing answers. */
  freeze?(): void;
}

const START_TIMEOUT_MS = 10_000;

/** Resolves once something accepts TCP connections on `port`; rejects at the deadline. */
async function waitForPort(port: number, deadline: number, exited: () => boolean) {
  while (Date.now() < deadline) {
    if (exited()) throw new Error("redis-server exited before accepting connections");
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  throw new Error(`redis-server did not accept connections within ${START_TIMEOUT_MS} ms`);
}

/**
 * Why Redis scenarios can't run here, or null when they can (`REDIS_URL` given, or
 * `redis-server` installed). `.ci/run` installs it, so CI runs them all.
 */
export const REDIS_SKIP: string | null = (() => {
  if (Deno.env.get("REDIS_URL")) return null;
  try {
    const out = new Deno.Command("redis-server", { args: ["--version"], stdout: "null" })
      .outputSync();
    return out.success ? null : "redis-server does not run";
  } catch {
    return "redis-server is not installed (apt-get install -y redis-server)";
  }
})();

/** Starts `redis-server` on a free loopback port and waits until it accepts connections. */
export async function startRedis(): Promise<RedisTestServer> {
  const port = freePort();
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("redis-server", {
      args: [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
  } catch (error) {
    throw new Error(
      `cannot start redis-server (install it: apt-get install -y redis-server): ${
        (error as Error).message
      }`,
    );
  }
  let exited = false;
  const status = child.status.then(() => exited = true);
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already exited.
    }
  };
  globalThis.addEventListener("unload", kill);
  const stop = async () => {
    globalThis.removeEventListener("unload", kill);
    kill();
    await status;
  };
  try {
    await waitForPort(port, Date.now() + START_TIMEOUT_MS, () => exited);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, stop, freeze: () => child.kill("SIGSTOP") };
}

const sharedRedis = processShared(startRedis);
/** The shared Redis of this test process (REDIS_URL, or started on first use). */
export function redisServer(): Promise<RedisTestServer> {
  const url = Deno.env.get("REDIS_URL");
  if (url) return Promise.resolve({ url, stop: () => Promise.resolve() });
  return sharedRedis();
}
