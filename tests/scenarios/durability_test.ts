/**
 * The embedded default through the real command line: every acknowledged write survives
 * `kill -9`, and a second process on the same data directory is refused.
 */
import assert from "node:assert/strict";
import { freePort } from "../support/net.ts";

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
  const deadline = Date.now() + 20_000;
  while (!seen.includes("serving")) {
    const { value, done } = await reader.read();
    if (done || Date.now() > deadline) throw new Error(`service did not start: ${seen}`);
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
          });
          const body = await res.json();
          if (res.status === 201) acknowledged.push(body._id);
        } catch {
          return; // the process is gone
        }
      }
    })();
    while (acknowledged.length < 150) await new Promise((r) => setTimeout(r, 10));

    const second = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "src/main.ts", "--settings", settingsFile],
      env: { DATA_DIR: dataDir, PORT: String(freePort()), STORE: "embedded" },
      stdout: "null",
      stderr: "piped",
    });
    const refused = await second.output();
    assert.equal(refused.code, 1);
    assert.match(new TextDecoder().decode(refused.stderr), /in use by another process/);

    first.process.kill("SIGKILL");
    await first.process.status;
    await writer;
    const count = acknowledged.length;
    assert.ok(count >= 150);

    const restarted = await start(settingsFile, dataDir);
    try {
      const res = await fetch(`${restarted.base}events?max_results=1`);
      const body = await res.json();
      assert.ok(body._meta.total >= count, `${body._meta.total} stored, ${count} acknowledged`);
      for (const id of acknowledged) {
        const item = await fetch(`${restarted.base}events/${id}`);
        await item.body?.cancel();
        assert.equal(item.status, 200, `acknowledged ${id} is missing after kill -9`);
      }
    } finally {
      restarted.process.kill("SIGTERM");
      await restarted.process.status;
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
    const deadline = Date.now() + 60_000;
    while (acknowledged.length < 1500) {
      assert.ok(Date.now() < deadline, `only ${acknowledged.length} writes acknowledged in 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    first.process.kill("SIGKILL");
    await first.process.status;
    await writers;
    const count = acknowledged.length;

    const restarted = await start(settingsFile, dataDir);
    try {
      const stored = new Set<string>();
      for (let page = 1;; page++) {
        const res = await fetch(`${restarted.base}events?max_results=50&page=${page}`);
        const body = await res.json();
        for (const item of body._items) stored.add(item._id);
        if (body._items.length < 50) break;
      }
      const lost = acknowledged.filter((id) => !stored.has(id));
      assert.deepEqual(lost, [], `${lost.length} of ${count} acknowledged writes lost`);
      assert.ok(stored.size >= count);
    } finally {
      restarted.process.kill("SIGTERM");
      await restarted.process.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
