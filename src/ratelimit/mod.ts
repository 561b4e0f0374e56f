/**
 * Rate-limit settings, checked once at start-up, and the limiter they select: Redis when
 * REDIS_URL is set, else in-process memory (with a warning that the limit is per instance).
 */
import type { Logger } from "../log.ts";
import type { Settings } from "../settings/check.ts";
import { type AddressSet, addressSet } from "../util/ip.ts";
import type { Limiter } from "./limiter.ts";
import { MemoryLimiter } from "./memory.ts";

export { accepted, type Hit, type Limiter, LimiterUnavailable, remaining } from "./limiter.ts";
export { MemoryLimiter } from "./memory.ts";

/** The methods with a RATE_LIMIT_<METHOD> setting (HEAD counts as GET). */
export const LIMITED_METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"] as const;

export interface RateLimitConfig {
  /** `{limit, windowMs}` by method; methods without a limit are absent. */
  limits: Partial<Record<string, { limit: number; windowMs: number }>>;
  /** Redis key prefix (one per service sharing a Redis). */
  prefix: string;
  /** What to do when Redis cannot be reached: let the request through, or answer 503. */
  onRedisError: "allow" | "refuse";
  timeoutMs: number;
  /** Socket addresses (and CIDR ranges) whose `X-Forwarded-For` is believed. */
  trustedProxies: AddressSet;
}

/** Reads and checks the rate-limit settings; problems are appended to `problems`. */
export function rateLimitConfig(settings: Settings, problems: string[]): RateLimitConfig {
  const limits: RateLimitConfig["limits"] = Object.create(null);
  for (const method of LIMITED_METHODS) {
    const key = `RATE_LIMIT_${method}` as const;
    const value = settings[key];
    if (value === null || value === undefined) continue;
    if (
      !Array.isArray(value) || value.length !== 2 ||
      !value.every((n) => Number.isInteger(n) && n >= 1)
    ) {
      problems.push(`${key}: must be null or [requests, seconds], two integers of at least 1`);
      continue;
    }
    limits[method] = { limit: value[0], windowMs: value[1] * 1000 };
  }
  const url = settings.REDIS_URL;
  if (url !== null && !/^rediss?:\/\/[^\s]+$/.test(url)) {
    problems.push("REDIS_URL: must be a redis:// or rediss:// URL");
  }
  const onRedisError = settings.RATE_LIMIT_ON_REDIS_ERROR;
  if (onRedisError !== "allow" && onRedisError !== "refuse") {
    problems.push(`RATE_LIMIT_ON_REDIS_ERROR: must be "allow" or "refuse"`);
  }
  const proxies = addressSet(settings.TRUSTED_PROXIES);
  for (const entry of proxies.invalid) {
    problems.push(`TRUSTED_PROXIES: ${JSON.stringify(entry)} is not an IP address or CIDR range`);
  }
  const timeoutMs = settings.RATE_LIMIT_REDIS_TIMEOUT;
  if (timeoutMs < 1 || timeoutMs > 60_000) {
    problems.push("RATE_LIMIT_REDIS_TIMEOUT: must be between 1 and 60000 (milliseconds)");
  }
  return {
    limits,
    prefix: settings.RATE_LIMIT_KEY_PREFIX,
    onRedisError: onRedisError === "refuse" ? "refuse" : "allow",
    timeoutMs,
    trustedProxies: proxies.set,
  };
}

/** Whether any method has a limit. */
export const rateLimitingOn = (config: RateLimitConfig): boolean =>
  Object.keys(config.limits).length > 0;

/**
 * The limiter the settings ask for, or null when rate limiting is off. The Redis client is
 * loaded only when REDIS_URL is set (loading it costs about a third of a second of a start).
 */
export async function openLimiter(
  config: RateLimitConfig,
  settings: Settings,
  log: Logger,
): Promise<Limiter | null> {
  if (!rateLimitingOn(config)) return null;
  const url = settings.REDIS_URL;
  if (url) {
    const { RedisLimiter } = await import("./redis.ts");
    return new RedisLimiter(url, { timeoutMs: config.timeoutMs, log });
  }
  log.log(
    "warn",
    "rate limiting without REDIS_URL: counts are kept in this process, so each instance " +
      "enforces the limit on its own",
  );
  return new MemoryLimiter();
}
