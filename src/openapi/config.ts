/**
 * Where the API description and the docs page are served (OPENAPI_PATH, DOCS_PATH), read
 * once at start-up; every mistake is a start-up problem naming its setting.
 */
import type { Domain } from "../domain/build.ts";
import type { Settings } from "../settings/check.ts";

/** Paths under the API prefix, without leading or trailing slashes. */
export interface OpenApiConfig {
  /** Path of the OpenAPI document, e.g. `openapi.json`. */
  documentPath: string;
  /** Path of the docs page (its assets are below it), or null when there is none. */
  docsPath: string | null;
}

const SEGMENTS = /^[\w.~-]+(\/[\w.~-]+)*$/;

/** One path setting: null when off (false / null), the path, or a problem. */
function readPath(
  settings: Settings,
  key: "OPENAPI_PATH" | "DOCS_PATH",
  problems: string[],
): string | null {
  const value = settings[key];
  if (value === null || value === false) return null;
  if (typeof value !== "string") {
    problems.push(`${key}: must be a path such as "/openapi.json", or false to turn it off`);
    return null;
  }
  const path = value.replace(/^\/+|\/+$/g, "");
  if (!SEGMENTS.test(path) || path.split("/").some((segment) => /^\.+$/.test(segment))) {
    problems.push(`${key}: "${value}" is not a path of letters, digits and "_.~-" segments`);
    return null;
  }
  return path;
}

/** The paths some other endpoint of the service owns: taken for the description. */
function takenBy(settings: Settings, domain: Domain, path: string): string | null {
  const under = (owner: string) => path === owner || path.startsWith(owner + "/");
  for (const resource of domain.values()) {
    if (resource.internal) continue;
    const literal = resource.url.split("/<")[0];
    if (under(resource.url) || (literal && under(literal))) return `DOMAIN.${resource.name}.url`;
  }
  const schema = settings.SCHEMA_ENDPOINT;
  if (schema && under(schema)) return "SCHEMA_ENDPOINT";
  if (settings.RETURN_MEDIA_AS_URL && under(settings.MEDIA_ENDPOINT)) {
    return "MEDIA_ENDPOINT";
  }
  return null;
}

/**
 * The checked paths, or null when the description is off (then so is the docs page).
 * Problems are appended to `problems`. A path another endpoint already serves (a resource
 * named `docs` ...) is left to it: that endpoint of ours is off, with a warning, so
 * settings written before these endpoints existed keep working as they did.
 */
export function openApiConfig(
  settings: Settings,
  options: { domain: Domain; problems: string[]; warnings: string[] },
): OpenApiConfig | null {
  const { domain, problems, warnings } = options;
  let documentPath = readPath(settings, "OPENAPI_PATH", problems);
  let docsPath = readPath(settings, "DOCS_PATH", problems);
  const free = (key: string, path: string | null) => {
    const owner = path === null ? null : takenBy(settings, domain, path);
    if (owner) {
      warnings.push(`${key}: "/${path}" is served by ${owner}; set ${key} to another path`);
    }
    return owner ? null : path;
  };
  documentPath = free("OPENAPI_PATH", documentPath);
  docsPath = free("DOCS_PATH", docsPath);
  if (documentPath !== null && docsPath !== null) {
    if (documentPath === docsPath || documentPath.startsWith(docsPath + "/")) {
      problems.push(`OPENAPI_PATH: "/${documentPath}" is inside DOCS_PATH "/${docsPath}"`);
    }
  }
  if (documentPath === null) return null;
  return { documentPath, docsPath };
}
