/**
 * The client outside Deno: bundled (`deno bundle --platform browser`), it runs the main
 * flows (tests/client/runtimes/smoke.mjs) in Node and in Chromium against a running service,
 * on both stores.
 */
import assert from "node:assert/strict";
import { startService, STORES } from "../support/harness.ts";
import { CHROMIUM, CHROMIUM_SKIP } from "../support/browser.ts";
import { skipUnless } from "../support/skip.ts";

const ROOT = new URL("../../", import.meta.url);
const HERE = new URL("./runtimes/", import.meta.url);
const SHIPPED = JSON.parse(Deno.readTextFileSync(new URL("config/settings.json", ROOT)));

/** The major version of `node` on the PATH, or null when there is none. */
const NODE_MAJOR: number | null = (() => {
  try {
    const out = new Deno.Command("node", { args: ["--version"], stdout: "piped" }).outputSync();
    return Number(/^v(\d+)/.exec(new TextDecoder().decode(out.stdout))?.[1] ?? NaN) || null;
  } catch {
    return null;
  }
})();
const NODE_SKIP = NODE_MAJOR === null
  ? "node is not installed"
  : NODE_MAJOR < 20
  ? `node ${NODE_MAJOR} is older than 20`
  : null;

/** A directory with the bundled client and the smoke scripts. */
async function bundled(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "restsvc-client-" });
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--platform", "browser", "-o", `${dir}/client.mjs`, "src/client/mod.ts"],
    cwd: ROOT.pathname,
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  for (const name of ["smoke.mjs", "node_runner.mjs"]) {
    await Deno.copyFile(new URL(name, HERE), `${dir}/${name}`);
  }
  return dir;
}

/** Runs a command with a deadline; its stdout's last line as JSON. */
async function runJson(
  command: string,
  args: string[],
  cwd: string,
): Promise<Record<string, unknown>> {
  const child = new Deno.Command(command, {
    args,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  try {
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout).trim();
    assert.ok(out.success, `${command} failed: ${new TextDecoder().decode(out.stderr)}`);
    return JSON.parse(stdout.split("\n").at(-1)!);
  } finally {
    clearTimeout(timer);
  }
}

function assertSmoke(seen: Record<string, unknown>, tag: string) {
  assert.deepEqual(seen, {
    created: "OK",
    lookup: true,
    conflict: "Time",
    listed: [`R${tag}`],
    notFound: true,
    hmac: 1,
    basic: 1,
    feed: ["ready", "insert", `S${tag}`],
    deleted: true,
  });
}

for (const kind of STORES) {
  for (const runtime of ["node", "chromium"] as const) {
    const skip = runtime === "node" ? NODE_SKIP : CHROMIUM_SKIP;
    Deno.test({
      ...skipUnless(`[${kind}] client runtimes: the bundled client in ${runtime}`, skip),
      sanitizeOps: false,
      sanitizeResources: false,
      async fn() {
        const dir = await bundled();
        const running = await startService(SHIPPED, kind);
        const tag = Math.random().toString(36).slice(2, 8);
        try {
          const seen = runtime === "node"
            ? await runJson("node", ["node_runner.mjs", running.url, tag], dir)
            : await runJson(Deno.execPath(), [
              "run",
              "-A",
              // The full lock: the project's default lock holds the service's packages alone.
              `--lock=${new URL("deno.lock", ROOT).pathname}`,
              new URL("browser_driver.ts", HERE).pathname,
              running.url,
              dir,
              tag,
              CHROMIUM,
            ], ROOT.pathname);
          assertSmoke(seen, tag);
        } finally {
          await running.stop();
          await Deno.remove(dir, { recursive: true });
        }
      },
    });
  }
}
