/**
 * The embedded default through the real command line: every acknowledged write survives
 * `kill -9`, and a second process on the same data directory is refused.
 */
import assert from "node:assert/strict";
import { freePort } from "../support/net.ts";
import { until, withDeadline } from "../support/wait.ts";

/** How long a process may take to start, stop, or answer. */
const PROCESS_MS = 20_000;
/** Bounds one request to a service under test. */
const request = () => ({ signal: AbortSignal.timeout(PROCESS_MS) });

const SETTINGS = {
  RESOURCE_METHODS: ["GET", "POST"],
  DOMAIN: { events: { schema: { n: { type: "integer" } } } },
};

interface Started {
  process: Deno.ChildProcess;
  base: string;
}

/** Starts `src/main.ts` and waits until it listens (it announces that on stderr). */
async function start(settingsFile: string, dataDir: string): Promise<Started> {
  const port = freePort();
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "src/main.ts", "--settings", settingsFile],
    env: { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", STORE: "embedded" },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = process.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = Date.now() + PROCESS_MS;
  while (!seen.includes("serving")) {
    const left = Math.max(1, deadline - Date.now());
    const { value, done } = await withDeadline(reader.read(), left, `service start (${seen})`);
    if (done) throw new Error(`service did not start: ${seen}`);
    seen += value;
  }
  // Keep reading: a full pipe would block the service on its request log.
  (async () => {
    try {
      while (!(await reader.read()).done) { /* discard */ }
    } catch { /* the process is gone */ }
  })();
  return { process, base: `http://127.0.0.1:${port}/` };
}

/** A fresh directory with the settings file, and the service started on it. */
async function firstRun(prefix: string) {
  const dir = await Deno.makeTempDir({ prefix });
  const settingsFile = `${dir}/settings.json`;
  await Deno.writeTextFile(settingsFile, JSON.stringify(SETTINGS));
  const dataDir = `${dir}/data`;
  return { dir, settingsFile, dataDir, first: await start(settingsFile, dataDir) };
}

Deno.test({
  name: "[embedded] acknowledged writes survive kill -9; a second process is refused",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { dir, settingsFile, dataDir, first } = await firstRun("restsvc-durable-");
    const acknowledged: string[] = [];
    // Writers keep going while the process is killed mid-stream.
    const writer = (async () => {
      for (let n = 0; n < 100_000; n++) {
        try {
          const res = await fetch(`${first.base}events`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ n }),
            ...request(),
          });
          const body = await res.json();
          if (res.status === 201) acknowledged.push(body._id);
        } catch {
          return; // the process is gone
        }
      }
    })();
    await until(() => acknowledged.length >= 150, "150 acknowledged writes", { ms: 60_000 });

    const second = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "src/main.ts", "--settings", settingsFile],
      env: { DATA_DIR: dataDir, PORT: String(freePort()), STORE: "embedded" },
      stdout: "null",
      stderr: "piped",
      // A second process that does not give up is killed at the deadline (and fails below).
      signal: AbortSignal.timeout(PROCESS_MS),
    });
    const refused = await second.output();
    assert.equal(refused.code, 1);
    assert.match(new TextDecoder().decode(refused.stderr), /in use by another process/);

    first.process.kill("SIGKILL");
    await withDeadline(first.process.status, PROCESS_MS, "the killed process");
    await withDeadline(writer, PROCESS_MS, "the writers after the kill");
    const count = acknowledged.length;
    assert.ok(count >= 150);

    const restarted = await start(settingsFile, dataDir);
    try {
      const res = await fetch(`${restarted.base}events?max_results=1`, request());
      const body = await res.json();
      assert.ok(body._meta.total >= count, `${body._meta.total} stored, ${count} acknowledged`);
      for (const id of acknowledged) {
        const item = await fetch(`${restarted.base}events/${id}`, request());
        await item.body?.cancel();
        assert.equal(item.status, 200, `acknowledged ${id} is missing after kill -9`);
      }
    } finally {
      restarted.process.kill("SIGTERM");
      await withDeadline(restarted.process.status, PROCESS_MS, "the restarted process");
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "[embedded] group commit: kill -9 during 1,000 concurrent POSTs loses nothing acknowledged",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { dir, settingsFile, dataDir, first } = await firstRun("restsvc-group-");
    const acknowledged: string[] = [];
    let gone = false;
    // 1,000 POSTs in flight at once (each in its own request), then more, until killed.
    const post = async (n: number) => {
      try {
        const res = await fetch(`${first.base}events`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ n }),
          ...request(),
        });
        const body = await res.json();
        if (res.status === 201) acknowledged.push(body._id);
      } catch {
        gone = true;
      }
    };
    const writers = (async () => {
      for (let round = 0; round < 1000 && !gone; round++) {
        await Promise.all(Array.from({ length: 1000 }, (_, i) => post(round * 1000 + i)));
      }
    })();
    await until(() => acknowledged.length >= 1500, "1,500 acknowledged writes", {
      ms: 60_000,
      everyMs: 5,
    });
    first.process.kill("SIGKILL");
    await withDeadline(first.process.status, PROCESS_MS, "the killed process");
    await withDeadline(writers, PROCESS_MS, "the writers after the kill");
    const count = acknowledged.length;

    const restarted = await start(settingsFile, dataDir);
    try {
      const stored = new Set<string>();
      for (let page = 1;; page++) {
        const res = await fetch(
          `${restarted.base}events?max_results=50&page=${page}`,
          request(),
        );
        const body = await res.json();
        for (const item of body._items) stored.add(item._id);
        if (body._items.length < 50) break;
      }
      const lost = acknowledged.filter((id) => !stored.has(id));
      assert.deepEqual(lost, [], `${lost.length} of ${count} acknowledged writes lost`);
      assert.ok(stored.size >= count);
    } finally {
      restarted.process.kill("SIGTERM");
      await withDeadline(restarted.process.status, PROCESS_MS, "the restarted process");
      await Deno.remove(dir, { recursive: true });
    }
  },
});
