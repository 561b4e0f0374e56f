/**
 * The test files of the inner loop (`deno task test:fast`) and how they are grouped.
 *
 * Every test file loads the service's module graph (hono, ajv, mingo, the MongoDB driver,
 * SQLite, ...) and `deno test` gives each file an isolate of its own, so a hundred files
 * meant a hundred loads of that graph, most of the loop's CPU time. The loop instead runs
 * a few entry modules (`group_1.ts` ... `group_4.ts`), each importing its share of the
 * files: the graph loads once per group, the groups run two at a time (`--parallel`), and
 * every test stays a test of its own, with its sanitizers. A new `*_test.ts` file joins
 * the loop by itself unless it is listed in {@link LEFT_OUT}. `deno task test` still runs
 * every file in its own isolate.
 */

/**
 * Files the loop leaves out, by path under tests/ (a folder leaves out everything in it):
 * those that start other programs (the command line, shutdown, TLS, durability with
 * `kill -9`, the browser, nginx, containers, other runtimes, client type generation),
 * large media, timing-bound connections, half a minute of a quiet process, the fuzzers and the
 * MongoDB-only store tests.
 */
export const LEFT_OUT = [
  "deploy/",
  "container_test.ts",
  "client/client_runtimes_test.ts",
  "client/client_types_test.ts",
  "scenarios/docs_browser_test.ts",
  "scenarios/cli_test.ts",
  "scenarios/shutdown_test.ts",
  "scenarios/changes_shutdown_test.ts",
  "scenarios/durability_test.ts",
  "scenarios/tls_test.ts",
  "scenarios/media_large_test.ts",
  "scenarios/connections_test.ts",
  "scenarios/hostile_fuzz_test.ts",
  "settings/fuzz_test.ts",
  "store/mongo_test.ts",
  "util/idle_gc_test.ts",
];

/** How many groups the files are spread over (each is one isolate; two run at once). */
export const GROUPS = 4;

const TESTS = new URL("../", import.meta.url);

/** Every `*_test.ts` under tests/ (paths relative to it, sorted), less {@link LEFT_OUT}. */
export function loopFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(new URL(dir, TESTS))) {
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory) walk(`${path}/`);
      else if (entry.isFile && entry.name.endsWith("_test.ts")) found.push(path);
    }
  };
  walk("");
  const left = (path: string) =>
    LEFT_OUT.some((out) => out.endsWith("/") ? path.startsWith(out) : path === out);
  return found.filter((path) => !left(path)).sort();
}

/**
 * The files of group `n` (1 ... {@link GROUPS}): the largest files first, each to the
 * group with the fewest bytes so far, so the groups take about as long (a file's size
 * stands for its running time).
 */
export function groupFiles(n: number): string[] {
  const sized = loopFiles().map((path) => ({
    path,
    size: Deno.statSync(new URL(path, TESTS)).size,
  }))
    .sort((a, b) => b.size - a.size || (a.path < b.path ? -1 : 1));
  const groups = Array.from({ length: GROUPS }, () => ({ size: 0, files: [] as string[] }));
  for (const file of sized) {
    const smallest = groups.reduce((a, b) => (b.size < a.size ? b : a));
    smallest.size += file.size;
    smallest.files.push(file.path);
  }
  return groups[n - 1].files.sort();
}

/** Imports the files of group `n`, registering their tests in this isolate. */
export async function loadGroup(n: number): Promise<void> {
  for (const path of groupFiles(n)) await import(new URL(path, TESTS).href);
}
