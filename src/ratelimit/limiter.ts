/**
 * Rate limiting: counts hits per key in a fixed window that starts at the key's first hit.
 * Two implementations share this interface: Redis (shared by every instance, see
 * `redis.ts`) and in-process memory (per instance, see `memory.ts`).
 */

/** The outcome of one counted hit. */
export interface Hit {
  /** Requests allowed per window. */
  limit: number;
  /** Hits counted in the current window, this one included. */
  count: number;
  /** Epoch milliseconds at which the window ends and the count restarts. */
  resetAt: number;
}

export interface Limiter {
  /** "redis" or "memory". */
  readonly kind: string;
  /**
   * Counts one hit for `key` in a window of `windowMs` and returns the new count. Rejects
   * with {@linkcode LimiterUnavailable} when the counter cannot be reached in time.
   */
  hit(key: string, options: { limit: number; windowMs: number }): Promise<Hit>;
  /** Resolves when the counter store answers (readiness probe); rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The counter store did not answer (down, unreachable, or too slow). */
export class LimiterUnavailable extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LimiterUnavailable";
  }
}

/** Whether a hit is within its limit. */
export const accepted = (hit: Hit): boolean => hit.count <= hit.limit;

/** Requests left in the window after this hit (never negative). */
export const remaining = (hit: Hit): number => Math.max(0, hit.limit - hit.count);
