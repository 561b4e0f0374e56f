/**
 * Graceful shutdown of the command line (`src/main.ts` as a child process): on SIGTERM a
 * request in flight completes with 200, new connections are refused while it drains, and
 * the process exits 0. The request is held in flight by a settings module whose
 * `on_pre_GET` hook waits for the test to release it (through a file), so the timing
 * never depends on sleeps. Every wait has a deadline.
 */
import assert from "node:assert/strict";
import { STORES, storeSettings } from "../support/harness.ts";
import { startMain } from "../support/main_process.ts";
import { eventually, withDeadline } from "../support/wait.ts";

const EVENTS = new URL("../../src/events.ts", import.meta.url).href;

/** A settings module: `on_pre_GET` marks `started`, then waits (at most 20 s) for `release`. */
const settingsModule = (dir: string) => `
import { Events } from ${JSON.stringify(EVENTS)};

export default { RESOURCE_METHODS: ["GET"], DOMAIN: { people: {} } };

export const events = new Events().on("on_pre_GET_people", async () => {
  await Deno.writeTextFile(${JSON.stringify(`${dir}/started`)}, "");
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    try {
      await Deno.stat(${JSON.stringify(`${dir}/release`)});
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
});
`;

const exists = (path: string) => () => Deno.stat(path).then(() => true, () => false);

/** Whether a TCP connection to `port` is refused right now. */
async function refused(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return false;
  } catch (error) {
    return error instanceof Deno.errors.ConnectionRefused;
  }
}

for (const kind of STORES) {
  Deno.test({
    name: `[${kind}] SIGTERM drains the request in flight, refuses new connections, exits 0`,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const dir = await Deno.makeTempDir({ prefix: "restsvc-shutdown-" });
      const store = await storeSettings(kind);
      await Deno.writeTextFile(`${dir}/settings.ts`, settingsModule(dir));
      const main = await startMain(`${dir}/settings.ts`, { env: store });
      const { child, port } = main;
      const client = Deno.createHttpClient({});
      try {
        const inFlight = fetch(`http://127.0.0.1:${port}/people`, { client }).then(
          async (res) => ({ status: res.status, body: await res.json() }),
        );
        await eventually(exists(`${dir}/started`), "the request reaches the hook", { ms: 10_000 });
        child.kill("SIGTERM");
        await eventually(() => refused(port), "new connections are refused", { ms: 5_000 });
        // Still draining: the request has not been answered and the process still runs.
        const early = await Promise.race([
          inFlight.then(() => "answered"),
          child.status.then(() => "exited"),
          new Promise((resolve) => setTimeout(() => resolve("waiting"), 200)),
        ]);
        assert.equal(early, "waiting", main.stderr());
        assert.ok(await refused(port));
        await Deno.writeTextFile(`${dir}/release`, "");
        const answer = await withDeadline(inFlight, 10_000, "the drained request");
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.body._items, []);
        const status = await withDeadline(child.status, 10_000, "the process exits");
        assert.equal(status.code, 0, main.stderr());
      } finally {
        client.close();
        await main.kill();
        await Deno.remove(dir, { recursive: true });
        if (kind === "embedded") await Deno.remove(store.DATA_DIR as string, { recursive: true });
      }
    },
  });
}
