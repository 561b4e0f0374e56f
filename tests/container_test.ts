/**
 * The container's dependency steps, run outside a container (no container engine runs on
 * this project's machines): on a copy of what the Dockerfile copies, the same commands leave
 * the test-only MongoDB emulator out, keep the lock consistent, and the service's settings
 * check runs from the installed packages alone (`--cached-only`).
 */
import assert from "node:assert/strict";
import { TEST_ONLY_IMPORTS } from "../tools/runtime-deps.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const ORIGINAL = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));

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

Deno.test({
  name: "container: the runtime install leaves the test-only packages out",
  sanitizeResources: false,
  async fn() {
    const install = (await runCommands()).find((c) => c.includes("tools/runtime-deps.ts"));
    assert.ok(install, "the Dockerfile installs the dependencies");
    const dependencySteps = install.split("&&").map((s) => s.trim());
    assert.deepEqual(dependencySteps, [
      "deno run --allow-read=deno.json --allow-write=deno.json tools/runtime-deps.ts",
      "deno install",
      "deno install --frozen",
    ]);
    const dir = await Deno.makeTempDir({ prefix: "restsvc-image-" });
    try {
      for (const file of ["deno.json", "deno.lock"]) {
        await Deno.copyFile(`${ROOT}${file}`, `${dir}/${file}`);
      }
      await Deno.mkdir(`${dir}/tools`);
      await Deno.copyFile(`${ROOT}tools/runtime-deps.ts`, `${dir}/tools/runtime-deps.ts`);
      for (const step of dependencySteps) await deno(dir, step.split(" ").slice(1));
      const config = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`));
      const lock = JSON.parse(await Deno.readTextFile(`${dir}/deno.lock`));
      const installed = [...Deno.readDirSync(`${dir}/node_modules`)].map((e) => e.name);
      assert.ok(installed.includes("hono") && installed.includes("mongodb"), String(installed));
      for (const name of TEST_ONLY_IMPORTS) {
        assert.equal(config.imports[name], undefined);
        // "npm:@scope/name@1.2.3" -> "@scope/name"
        const pkg = /^npm:(@?[^@]+)@/.exec(ORIGINAL.imports[name])![1];
        assert.ok(!installed.includes(pkg.split("/")[0]), `${pkg} is installed`);
        assert.ok(!Object.keys(lock.npm).some((k) => k.startsWith(`${pkg}@`)), `${pkg} locked`);
      }
      // The sources and settings come next in the image; the service runs from what is there.
      for (const folder of ["src", "config"]) {
        await copyTree(`${ROOT}${folder}`, `${dir}/${folder}`);
      }
      const checked = await deno(dir, [
        "run",
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
