/** Test servers shared by every test of a process. */

/**
 * `start` run once, on first use, its server stopped when the process unloads: no test file
 * registers a clean-up step as a test.
 */
export function processShared<T extends { stop(): Promise<void> }>(
  start: () => Promise<T>,
): () => Promise<T> {
  let shared: Promise<T> | undefined;
  return () => {
    if (!shared) {
      shared = start();
      globalThis.addEventListener("unload", () => {
        shared?.then((server) => server.stop());
      });
    }
    return shared;
  };
}
