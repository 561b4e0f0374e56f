/**
 * Cross-origin resource sharing (X_DOMAINS, X_DOMAINS_RE, X_HEADERS, X_EXPOSE_HEADERS,
 * X_ALLOW_CREDENTIALS, X_MAX_AGE). Off unless X_DOMAINS or X_DOMAINS_RE allows an origin.
 *
 * The middleware runs around every route and decorates whatever the route (or the error
 * handler) answered, so it works for any endpoint, errors included. Answers rendered by the
 * app are made with the fields already in them (given before the route runs, see
 * `../answer_fields.ts`); only other answers (and OPTIONS ones) are decorated afterwards. A preflight's allowed
 * methods come from the endpoint's own `Allow` header. An allowed origin is echoed (never
 * `*`) with `Vary: Origin`; a disallowed origin gets an empty Access-Control-Allow-Origin
 * (as in Eve: no browser accepts it); credentials are allowed only for origins listed
 * explicitly (X_DOMAINS entries or X_DOMAINS_RE), never for an origin let in by `*` nor
 * for a refused one. As in Eve, Access-Control-Allow-Methods (the endpoint's methods, as
 * its `Allow` names them), -Allow-Headers, -Expose-Headers and -Max-Age go with every
 * answer to an origin, refused or not, whatever the method.
 *
 * Hono's own `cors()` is not used: it sends Access-Control-Allow-Credentials to disallowed
 * origins, echoes any requested header when none are configured, and answers every
 * preflight with one fixed method list instead of the endpoint's.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { Settings } from "../../settings/check.ts";
import type { AppEnv } from "../env.ts";
import type { Target } from "../target.ts";
import { allowedMethods } from "../dispatch.ts";
import { isWhole, lateFields, withToken } from "../answer_fields.ts";

export interface CorsConfig {
  /** Origins allowed by exact match. */
  origins: ReadonlySet<string>;
  /** `*` in X_DOMAINS: any origin (without credentials). */
  anyOrigin: boolean;
  /** X_DOMAINS_RE, each compiled once and anchored at both ends. */
  patterns: RegExp[];
  /** Access-Control-Allow-Headers on preflights (X_HEADERS). */
  allowHeaders: string[];
  /** Access-Control-Expose-Headers (X_EXPOSE_HEADERS, plus any the service adds). */
  exposeHeaders: string[];
  credentials: boolean;
  maxAge: number;
}

/**
 * The X_* list setting `key`: Eve accepts a string or a list of strings; null means none.
 * Anything else is reported in `report.problems` and reads as none.
 */
function stringList(
  settings: Settings,
  key: "X_DOMAINS" | "X_DOMAINS_RE" | "X_HEADERS" | "X_EXPOSE_HEADERS",
  report: { problems: string[] },
): string[] {
  const value = settings[key];
  if (value === null || value === undefined) return [];
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value;
  report.problems.push(`${key}: must be a string, a list of strings or null`);
  return [];
}

/**
 * Reads and checks the CORS settings (problems and warnings are appended); null when CORS
 * is off. `extraExpose` names response headers the service itself wants readable.
 */
export function corsConfig(
  settings: Settings,
  report: { problems: string[]; warnings: string[] },
  options: { extraExpose?: string[] } = {},
): CorsConfig | null {
  const { problems, warnings } = report;
  const domains = stringList(settings, "X_DOMAINS", report);
  const patterns: RegExp[] = [];
  for (const source of stringList(settings, "X_DOMAINS_RE", report)) {
    try {
      patterns.push(new RegExp(`^(?:${source})$`));
    } catch (error) {
      problems.push(
        `X_DOMAINS_RE: invalid regular expression ${JSON.stringify(source)}: ${
          (error as Error).message
        }`,
      );
    }
  }
  const allowHeaders = stringList(settings, "X_HEADERS", report);
  const exposeHeaders = stringList(settings, "X_EXPOSE_HEADERS", report);
  const credentials = settings.X_ALLOW_CREDENTIALS;
  if (credentials !== null && credentials !== undefined && typeof credentials !== "boolean") {
    problems.push("X_ALLOW_CREDENTIALS: must be true, false or null");
  }
  const maxAge = settings.X_MAX_AGE;
  if (maxAge < 0) problems.push("X_MAX_AGE: must be at least 0");
  const anyOrigin = domains.includes("*");
  if (anyOrigin && credentials === true) {
    warnings.push(
      'X_ALLOW_CREDENTIALS: not sent to origins allowed only by X_DOMAINS "*"; list the ' +
        "origins that may send credentials in X_DOMAINS or X_DOMAINS_RE",
    );
  }
  if (!domains.length && !patterns.length) return null;
  const expose = [...exposeHeaders];
  for (const name of options.extraExpose ?? []) {
    if (!expose.some((h) => h.toLowerCase() === name.toLowerCase())) expose.push(name);
  }
  return {
    origins: new Set(domains.filter((d) => d !== "*")),
    anyOrigin,
    patterns,
    allowHeaders,
    exposeHeaders: expose,
    credentials: credentials === true,
    maxAge,
  };
}

/** "listed" (exact or pattern match), "any" (only `*` lets it in), or null (refused). */
export function matchOrigin(config: CorsConfig, origin: string): "listed" | "any" | null {
  if (config.origins.has(origin)) return "listed";
  if (config.patterns.some((re) => re.test(origin))) return "listed";
  return config.anyOrigin ? "any" : null;
}

/**
 * The CORS middleware; a no-op when `config` is null (CORS off). `then`: work of an outer
 * middleware on the answer, run after this one's in the same step (as an outer step's
 * after-part would run; this one throws nothing itself); undefined when it has none to do.
 */
export function cors(
  config: CorsConfig | null,
  then?: (c: Context<AppEnv>) => Promise<void> | undefined,
): MiddlewareHandler<AppEnv> {
  return async function cors(c, next) {
    if (!config) await next();
    else {
      const origin = c.req.header("origin");
      const match = origin ? matchOrigin(config, origin) : null;
      // Any method but OPTIONS: the fields depend on the request alone; rendered answers are
      // made with them (answer_fields.ts). An OPTIONS answer's fields read its `Allow`.
      const late = c.req.method !== "OPTIONS";
      if (late) {
        const fields = lateFields(c);
        fields.vary.push("Origin");
        if (origin) Object.assign(fields.headers, originFields(config, c, { origin, match }));
      }
      await next();
      if (!late || !isWhole(c.res)) decorate(config, c, { origin, match });
    }
    const pending = then?.(c);
    if (pending) await pending;
  };
}

/** The CORS fields of an answer not made with them (see {@link cors}). */
function decorate(
  config: CorsConfig,
  c: Context<AppEnv>,
  request: { origin: string | undefined; match: "listed" | "any" | null },
): void {
  const { origin, match } = request;
  const preflight = c.req.method === "OPTIONS" &&
    c.req.header("access-control-request-method") !== undefined;
  // An endpoint that does not answer OPTIONS itself still tells its methods in `Allow`.
  if (match && preflight && c.res.status === 405 && c.res.headers.has("allow")) {
    c.res = new Response(null, { status: 200, headers: { allow: c.res.headers.get("allow")! } });
  }
  const headers = c.res.headers;
  // Answers differ by Origin whenever CORS is on, so shared caches must key on it.
  headers.set("vary", withToken(headers.get("vary"), "Origin"));
  if (!origin) return;
  const allow = c.req.method === "OPTIONS" ? headers.get("allow") : null;
  const fields = originFields(config, c, { origin, match, allow });
  for (const name in fields) headers.set(name, fields[name]);
}

/**
 * The fields of an answer to a request from `origin`. As in Eve, a refused origin is told so
 * with an empty Access-Control-Allow-Origin (which no browser accepts); credentials are never
 * allowed to it. As in Eve, every answer to an origin (a refused one too) names the allowed
 * request headers, the exposed headers, the endpoint's methods (an OPTIONS answer's `Allow`,
 * `allow`, when it has one) and how long a preflight may be cached; the lists are empty when
 * nothing is configured.
 */
function originFields(
  config: CorsConfig,
  c: Context<AppEnv>,
  request: { origin: string; match: "listed" | "any" | null; allow?: string | null },
): Record<string, string> {
  const { origin, match } = request;
  const fields: Record<string, string> = {
    "access-control-allow-origin": match ? origin : "",
  };
  if (match && config.credentials && match === "listed") {
    fields["access-control-allow-credentials"] = "true";
  }
  fields["access-control-allow-headers"] = config.allowHeaders.join(", ");
  fields["access-control-expose-headers"] = config.exposeHeaders.join(", ");
  const target = c.get("target") as Target | undefined;
  const methods = request.allow ?? (target ? allowedMethods(target) : null);
  fields["access-control-allow-methods"] = methods ?? "";
  fields["access-control-max-age"] = String(config.maxAge);
  return fields;
}
