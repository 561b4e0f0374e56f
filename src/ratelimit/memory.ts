/**
 * The in-process limiter: counts live in this instance only (used when no REDIS_URL is set;
 * the service warns at start-up that the limit then holds per instance).
 */
import type { Hit, Limiter } from "./limiter.ts";

/** Counters kept at most; past this, expired ones are swept, then the oldest dropped. */
const MAX_KEYS = 100_000;

export class MemoryLimiter implements Limiter {
  readonly kind = "memory";
  readonly #windows = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  hit(key: string, options: { limit: number; windowMs: number }): Promise<Hit> {
    const now = this.now();
    let window = this.#windows.get(key);
    if (!window || window.resetAt <= now) {
      if (window) this.#windows.delete(key);
      if (this.#windows.size >= MAX_KEYS) this.#sweep(now);
      window = { count: 0, resetAt: now + options.windowMs };
      this.#windows.set(key, window);
    }
    window.count++;
    return Promise.resolve({ limit: options.limit, count: window.count, resetAt: window.resetAt });
  }

  /** Drops expired windows; when none expired, the oldest tenth. */
  #sweep(now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.resetAt <= now) this.#windows.delete(key);
    }
    if (this.#windows.size < MAX_KEYS) return;
    let drop = Math.ceil(MAX_KEYS / 10);
    for (const key of this.#windows.keys()) {
      if (drop-- <= 0) break;
      this.#windows.delete(key);
    }
  }

  /** Always ready: the counters live in this process. */
  ping(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#windows.clear();
    return Promise.resolve();
  }
}
