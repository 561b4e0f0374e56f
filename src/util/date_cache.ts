/** Formatted dates remembered at most this many at a time (the cache empties when full). */
const SIZE = 4096;

/**
 * `format` remembering recent answers by instant: stored documents carry the same
 * `_created`/`_updated` values request after request.
 */
export function cachedDates(format: (date: Date) => string): (date: Date) => string {
  const cache = new Map<number, string>();
  return (date) => {
    const time = date.getTime();
    let text = cache.get(time);
    if (text === undefined) {
      text = format(date);
      if (cache.size >= SIZE) cache.clear();
      cache.set(time, text);
    }
    return text;
  };
}
