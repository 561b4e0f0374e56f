/**
 * Writes `deno.runtime.lock`: `deno.lock` cut down to the packages the service's import map
 * reaches. Deno installs every package a lock file holds, and `deno.lock` also holds the
 * test-only packages the tests import (tests/support/test_deps.ts), so deno.json names
 * `deno.runtime.lock` as the default lock: `deno task start` (and the container build)
 * install the service's packages alone, while `deno task test` and `deno task check` name
 * `--lock=deno.lock`. A plain `deno test` without that flag would write test packages into
 * the runtime lock; tests/container_test.ts then fails. Run it after changing dependencies:
 *
 * ```sh
 * deno task lock:runtime
 * ```
 */

type Lock = {
  version: string;
  specifiers?: Record<string, string>;
  npm?: Record<string, { dependencies?: string[]; optionalDependencies?: string[] }>;
  workspace?: { dependencies?: string[] };
  [key: string]: unknown;
};

/** The package name of a lock key: `@scope/name@1.2.3_peer@4` → `@scope/name`. */
const nameOf = (key: string) => key.slice(0, key.indexOf("@", 1));

/** `lock` with only what its workspace dependencies reach. */
export function runtimeLock(lock: Lock): Lock {
  const npm = lock.npm ?? {};
  const keys = Object.keys(npm);
  const resolve = (dep: string): string | undefined => {
    if (Object.hasOwn(npm, dep)) return dep;
    const named = keys.filter((k) => nameOf(k) === dep);
    return named.length === 1 ? named[0] : undefined;
  };
  const roots = lock.workspace?.dependencies ?? [];
  const specifiers: Record<string, string> = {};
  const reached = new Set<string>();
  const visit = (key: string | undefined) => {
    if (!key || reached.has(key)) return;
    reached.add(key);
    const entry = npm[key];
    for (const dep of [...entry.dependencies ?? [], ...entry.optionalDependencies ?? []]) {
      visit(resolve(dep));
    }
  };
  for (const root of roots) {
    const version = lock.specifiers?.[root];
    if (version === undefined) continue;
    specifiers[root] = version;
    visit(`${nameOf(root.slice("npm:".length))}@${version}`);
  }
  return {
    ...lock,
    specifiers,
    npm: Object.fromEntries(keys.filter((k) => reached.has(k)).map((k) => [k, npm[k]])),
  };
}

/** The text of the runtime lock for the text of `deno.lock`. */
export function runtimeLockText(denoLock: string): string {
  return JSON.stringify(runtimeLock(JSON.parse(denoLock)), null, 2) + "\n";
}

if (import.meta.main) {
  const root = new URL("../", import.meta.url);
  const text = runtimeLockText(await Deno.readTextFile(new URL("deno.lock", root)));
  await Deno.writeTextFile(new URL("deno.runtime.lock", root), text);
}
