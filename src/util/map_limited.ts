/**
 * @module
 * A function mapped over a list with a bound on the calls in flight at once: a request's store
 * queries (uniqueness, relations) go out a few at a time, however many its documents ask for.
 *
 * ```ts
 * const sizes = await mapLimited(paths, 4, async (path) => (await Deno.stat(path)).size);
 * ```
 */

/**
 * `fn` over `items`, at most `limit` calls at a time; the results in the order of `items`.
 * After a call fails, no new one starts (those in flight finish) and its error is thrown.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  // None or one (most requests): no workers to share them out.
  if (items.length === 0) return [];
  if (items.length === 1) return [await fn(items[0])];
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
