/**
 * The container's dependency steps, run outside a container (no container engine runs on
 * this project's machines): on a copy of what the Dockerfile copies, the same commands leave
 * the test-only MongoDB emulator out, keep the lock consistent, and the service's settings
 * check runs from the installed packages alone (`--cached-only`).
 */
import assert from "node:assert/strict";
import { TEST_ONLY_PACKAGES } from "./support/test_deps.ts";
import { runtimeLockText } from "../tools/runtime-lock.ts";
import { freePort } from "./support/net.ts";
import { until } from "./support/wait.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Runs `deno args` in `cwd`, killed after 120 s; throws with its output unless it exits 0. */
async function deno(cwd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (out.code !== 0) throw new Error(`deno ${args.join(" ")} exited ${out.code}: ${text}`);
  return text;
}

/** Copies the folder `from` (files and folders only) to `to`. */
async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copyTree(`${from}/${entry.name}`, `${to}/${entry.name}`);
    else if (entry.isFile) await Deno.copyFile(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}

/** The `RUN` commands of the Dockerfile, continuation lines joined. */
async function runCommands(): Promise<string[]> {
  const text = await Deno.readTextFile(`${ROOT}Dockerfile`);
  return text.replace(/\\\n\s*/g, " ").split("\n").filter((l) => l.startsWith("RUN "))
    .map((l) => l.slice(4).trim());
}

/** The `deno ...` steps of the Dockerfile's `RUN` commands, in order. */
async function denoSteps(): Promise<string[][]> {
  return (await runCommands()).flatMap((c) => c.split("&&").map((s) => s.trim()))
    .filter((s) => s.startsWith("deno ")).map((s) => s.split(" ").slice(1));
}

/** Asserts that none of the test-only packages is in `dir`'s node_modules. */
function assertNoTestPackages(dir: string) {
  const installed = [...Deno.readDirSync(`${dir}/node_modules`)].map((e) => e.name);
  assert.ok(installed.includes("hono") && installed.includes("mongodb"), String(installed));
  const store = [...Deno.readDirSync(`${dir}/node_modules/.deno`)].map((e) => e.name);
  for (const pkg of TEST_ONLY_PACKAGES) {
    assert.ok(!installed.includes(pkg), `${pkg} is installed`);
    // "@scope/name" is stored as "@scope+name@1.2.3"
    const stored = pkg.replace("/", "+") + "@";
    assert.ok(!store.some((e) => e.startsWith(stored)), `${pkg} is in node_modules/.deno`);
  }
}

Deno.test("container: test-only packages are not in the service's import map", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const imported = Object.values(config.imports as Record<string, string>).join(" ");
  for (const pkg of TEST_ONLY_PACKAGES) assert.ok(!imported.includes(pkg), pkg);
});

Deno.test({
  name: "container: the runtime install leaves the test-only packages out",
  sanitizeResources: false,
  async fn() {
    const steps = await denoSteps();
    assert.deepEqual(steps, [
      ["install", "--lock=deno.runtime.lock", "--frozen"],
      ["cache", "--lock=deno.runtime.lock", "--frozen", "src/main.ts"],
    ]);
    const dir = await Deno.makeTempDir({ prefix: "restsvc-image-" });
    try {
      for (const file of ["deno.json", "deno.runtime.lock"]) {
        await Deno.copyFile(`${ROOT}${file}`, `${dir}/${file}`);
      }
      await deno(dir, steps[0]);
      assertNoTestPackages(dir);
      // The sources and settings come next in the image; the service runs from what is there.
      for (const folder of ["src", "config"]) {
        await copyTree(`${ROOT}${folder}`, `${dir}/${folder}`);
      }
      await deno(dir, steps[1]);
      assertNoTestPackages(dir);
      const checked = await deno(dir, [
        "run",
        "--lock=deno.runtime.lock",
        "--frozen",
        "--cached-only",
        "--allow-read",
        "--allow-env",
        "src/main.ts",
        "--check",
      ]);
      assert.match(checked, /settings are valid/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "start: a first `deno task start` prints no install warning and serves with the " +
    "task's permissions",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "restsvc-start-" });
    const port = freePort();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["task", "start"],
      cwd: dir,
      env: {
        DENO_NO_UPDATE_CHECK: "1",
        NO_COLOR: "1",
        HOST: "127.0.0.1",
        PORT: String(port),
        DATA_DIR: `${dir}/data`,
      },
      stdout: "piped",
      stderr: "piped",
    });
    let output = "";
    let process: Deno.ChildProcess | undefined;
    try {
      for (const file of ["deno.json", "deno.lock", "deno.runtime.lock"]) {
        await Deno.copyFile(`${ROOT}${file}`, `${dir}/${file}`);
      }
      for (const folder of ["src", "config"]) {
        await copyTree(`${ROOT}${folder}`, `${dir}/${folder}`);
      }
      process = child.spawn();
      const read = async (stream: ReadableStream<Uint8Array>) => {
        for await (const text of stream.pipeThrough(new TextDecoderStream())) output += text;
      };
      const done = Promise.all([read(process.stdout), read(process.stderr)]);
      await until(() => output.includes("serving "), "deno task start to serve", {
        ms: 120_000,
        everyMs: 100,
      }).catch((error) => {
        throw new Error(`${error.message}; it wrote: ${output}`);
      });
      const res = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(res.status, 200, await res.text());
      assert.doesNotMatch(output, /approve-scripts|Ignored build scripts|Warning/i, output);
      const tasks = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`)).tasks;
      assert.doesNotMatch(tasks.start, /allow-run|allow-all|-A\b/);
      assert.equal(
        await Deno.readTextFile(`${dir}/deno.lock`),
        await Deno.readTextFile(`${ROOT}deno.lock`),
        "the lock changed",
      );
      process.kill("SIGTERM");
      await done;
    } finally {
      try {
        process?.kill("SIGKILL");
      } catch { /* already exited */ }
      await process?.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("start: deno.runtime.lock is deno.lock cut to the service's packages", async () => {
  const expected = runtimeLockText(await Deno.readTextFile(`${ROOT}deno.lock`));
  assert.equal(
    await Deno.readTextFile(`${ROOT}deno.runtime.lock`),
    expected,
    "deno.runtime.lock is stale: run `deno task lock:runtime`",
  );
  for (const pkg of TEST_ONLY_PACKAGES) assert.ok(!expected.includes(`"${pkg}@`), pkg);
  // It is the default lock, so `deno task start` installs nothing else; the tasks that reach
  // the tests name the full lock.
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  assert.equal(config.lock, "deno.runtime.lock");
  for (const task of ["test", "check"]) {
    assert.match(config.tasks[task], /--lock=deno\.lock/, `the ${task} task names deno.lock`);
  }
});
