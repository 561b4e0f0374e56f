/**
 * The service's settings in the deployment of deploy/docker-compose.yml: the shipped domain
 * (config/settings.json) behind the reverse proxy of deploy/nginx.conf. The image's
 * /config/settings.json is the shipped file; this module is mounted at /deploy/settings.ts.
 * tests/deploy/nginx_test.ts serves these settings (with its own domain) behind nginx.
 */
import shipped from "../config/settings.json" with { type: "json" };

export default {
  ...shipped,
  // Only the proxy may name the client in X-Forwarded-For: its fixed address in the compose
  // network (a list of addresses or CIDR ranges, comma-separated, in the environment).
  TRUSTED_PROXIES: (Deno.env.get("TRUSTED_PROXIES") ?? "172.28.0.10").split(","),
  // nginx.conf's client_max_body_size is this plus room for multipart framing.
  MAX_BODY_SIZE: 16 * 1024 * 1024,
  // A body slower than 240 bytes per second of waiting, after 5 s, is answered 408.
  MIN_REQUEST_BODY_RATE: 240,
  MIN_REQUEST_BODY_RATE_GRACE_MS: 5_000,
  // Per client address, counted across the replicas in Redis (REDIS_URL).
  RATE_LIMIT_GET: [600, 60],
  RATE_LIMIT_POST: [120, 60],
  RATE_LIMIT_PATCH: [120, 60],
  RATE_LIMIT_PUT: [120, 60],
  RATE_LIMIT_DELETE: [60, 60],
};
