/**
 * A small in-memory map with expiry and a size bound, for verified credentials and seen
 * HMAC signatures. Oldest entries go first when full.
 */
export class TtlCache<V> {
  #map = new Map<string, { value: V; expires: number }>();
  constructor(readonly max: number) {}

  get(key: string, now = Date.now()): V | undefined {
    const entry = this.#map.get(key);
    if (!entry) return undefined;
    if (entry.expires <= now) {
      this.#map.delete(key);
      return undefined;
    }
    return entry.value;
  }

  has(key: string, now = Date.now()): boolean {
    return this.get(key, now) !== undefined;
  }

  /** Stores `value` until `expires` (ms); returns the expiry of an entry evicted, if any. */
  set(key: string, value: V, expires: number): number | undefined {
    this.#map.delete(key);
    let evicted: number | undefined;
    if (this.#map.size >= this.max) {
      const now = Date.now();
      for (const [k, e] of this.#map) if (e.expires <= now) this.#map.delete(k);
      if (this.#map.size >= this.max) {
        const [oldest, entry] = this.#map.entries().next().value!;
        this.#map.delete(oldest);
        evicted = entry.expires;
      }
    }
    this.#map.set(key, { value, expires });
    return evicted;
  }

  clear(): void {
    this.#map.clear();
  }

  get size(): number {
    return this.#map.size;
  }
}
