/**
 * The Redis limiter: one counter per key, shared by every instance pointing at the same
 * Redis, so the limit holds in total. Each hit is a single Lua script (INCR, and PEXPIRE on
 * the window's first hit), atomic on the server: no read-then-write race between instances.
 * Every call is bounded by `timeoutMs`; a slow or unreachable Redis rejects with
 * LimiterUnavailable and never hangs a request.
 */
import { Redis } from "ioredis";
import type { Logger } from "../log.ts";
import { type Hit, type Limiter, LimiterUnavailable } from "./limiter.ts";

/** INCR the key; start its window (PEXPIRE) when it has none; answer {count, ms left}. */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

type HitCommand = (key: string, windowMs: number) => Promise<[number, number]>;

export interface RedisLimiterOptions {
  /** Upper bound of one hit, connection included, in milliseconds. */
  timeoutMs: number;
  log: Logger;
}

export class RedisLimiter implements Limiter {
  readonly kind = "redis";
  readonly #redis: Redis;
  readonly #timeoutMs: number;
  #down = false;

  constructor(url: string, options: RedisLimiterOptions) {
    const { timeoutMs, log } = options;
    this.#timeoutMs = timeoutMs;
    this.#redis = new Redis(url, {
      connectTimeout: timeoutMs,
      commandTimeout: timeoutMs,
      maxRetriesPerRequest: 1,
      // Keep reconnecting in the background, at most every 2 s.
      retryStrategy: (times) => Math.min(times * 100, 2000),
    });
    this.#redis.defineCommand("rateLimitHit", { numberOfKeys: 1, lua: HIT_SCRIPT });
    // One record per outage, not one per reconnection attempt.
    this.#redis.on("error", (error: Error) => {
      if (this.#down) return;
      this.#down = true;
      log.log("error", "rate limiting: Redis is unreachable", { error: error.message });
    });
    this.#redis.on("ready", () => {
      if (this.#down) log.log("info", "rate limiting: Redis is reachable again");
      this.#down = false;
      // Queue commands only until the first connection: during a later outage a hit fails at
      // once instead of waiting for the timeout, and nothing piles up in memory.
      this.#redis.options.enableOfflineQueue = false;
    });
  }

  async hit(key: string, options: { limit: number; windowMs: number }): Promise<Hit> {
    const command = (this.#redis as unknown as { rateLimitHit: HitCommand }).rateLimitHit;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new LimiterUnavailable(`Redis did not answer within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
    });
    try {
      const [count, ttl] = await Promise.race([
        command.call(this.#redis, key, options.windowMs),
        timeout,
      ]);
      return { limit: options.limit, count: Number(count), resetAt: Date.now() + Number(ttl) };
    } catch (error) {
      if (error instanceof LimiterUnavailable) throw error;
      throw new LimiterUnavailable(`Redis failed: ${(error as Error).message}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  async ping(): Promise<void> {
    await this.#redis.ping();
  }

  /** Drops the connection at once (never waits on an unreachable server). */
  close(): Promise<void> {
    this.#redis.disconnect();
    return Promise.resolve();
  }
}
