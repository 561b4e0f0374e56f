/**
 * Loads settings from a JSON file, an Eve settings.py or a TypeScript/JavaScript module, then applies
 * environment overrides. A module exports the settings as `default` (or `settings`), and
 * may export `extensions` (custom validation rules and types, see docs/schemas-and-validation.md).
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isPlainObject } from "../util/plain.ts";
import { ALIASES } from "./keys.ts";
import { PythonSettingsError, readPythonSettings } from "./python.ts";

/** What a settings source yields before checking. */
export interface RawSettings {
  settings: Record<string, unknown>;
  /** Named exports of a settings module other than the settings themselves. */
  exports: Record<string, unknown>;
  source: string;
}

/** Environment variables that override settings, and how to read them. */
export const ENV_OVERRIDES: Record<string, "string" | "int"> = {
  MONGO_URI: "string",
  DB_HOST: "string",
  DB_PORT: "int",
  DB_USERNAME: "string",
  DB_PASSWORD: "string",
  DB_AUTH_SOURCE: "string",
  DB_DBNAME: "string",
  MONGO_HOST: "string",
  MONGO_PORT: "int",
  MONGO_USERNAME: "string",
  MONGO_PASSWORD: "string",
  MONGO_AUTH_SOURCE: "string",
  MONGO_DBNAME: "string",
  HOST: "string",
  PORT: "int",
  STORE: "string",
  DATA_DIR: "string",
  REDIS_URL: "string",
  METRICS_TOKEN: "string",
  ETAG_SECRET: "string",
  TLS_CERT_FILE: "string",
  TLS_KEY_FILE: "string",
};

/** Extensions of settings modules (anything else but `.json` is refused). */
const MODULE_EXTENSIONS = new Set(["ts", "mts", "tsx", "js", "mjs", "jsx"]);

/** Largest Eve settings.py read, in bytes. */
const MAX_PYTHON_BYTES = 1024 * 1024;

/**
 * Reads a settings file; `.json` is parsed, `.py` read as an Eve settings module (its
 * literal subset, see python.ts), anything else is imported as a module.
 */
export async function loadSettingsFile(path: string): Promise<RawSettings> {
  const absolute = resolve(path);
  if (absolute.endsWith(".json")) {
    let text: string;
    try {
      text = await Deno.readTextFile(absolute);
    } catch (error) {
      throw new Error(`cannot read settings file ${path}: ${(error as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new Error(`settings file ${path} is not valid JSON: ${(error as Error).message}`);
    }
    if (!isPlainObject(parsed)) throw new Error(`settings file ${path} must hold a JSON object`);
    return { settings: parsed, exports: {}, source: path };
  }
  if (absolute.endsWith(".py")) {
    let text: string;
    try {
      const info = await Deno.stat(absolute);
      if (info.size > MAX_PYTHON_BYTES) {
        throw new Error(`it is larger than ${MAX_PYTHON_BYTES} bytes`);
      }
      text = await Deno.readTextFile(absolute);
    } catch (error) {
      throw new Error(`cannot read settings file ${path}: ${(error as Error).message}`);
    }
    try {
      return { settings: readPythonSettings(text, { env: Deno.env }), exports: {}, source: path };
    } catch (error) {
      if (error instanceof PythonSettingsError) {
        throw new Error(`settings file ${path}, ${error.message}`);
      }
      throw error;
    }
  }
  const extension = /\.([^./\\]+)$/.exec(absolute)?.[1]?.toLowerCase() ?? "";
  if (extension === "yaml" || extension === "yml") {
    throw new Error(
      `settings file ${path}: YAML is not supported; write the settings as JSON (.json) ` +
        "or as a TypeScript/JavaScript module (.ts, .js) exporting them",
    );
  }
  if (!MODULE_EXTENSIONS.has(extension)) {
    throw new Error(
      `settings file ${path}: unknown file type${extension ? ` ".${extension}"` : ""}; ` +
        "use JSON (.json) or a TypeScript/JavaScript module (.ts, .mts, .js, .mjs)",
    );
  }
  const module = await import(pathToFileURL(absolute).href);
  const { default: byDefault, settings: named, ...exports } = module;
  const settings = byDefault ?? named;
  if (!isPlainObject(settings)) {
    throw new Error(`settings module ${path} must export an object as default or as "settings"`);
  }
  return { settings: structuredClone(settings), exports, source: path };
}

/** Copies the overriding environment variables that are set onto `settings`. */
export function applyEnvOverrides(
  settings: Record<string, unknown>,
  env: { get(name: string): string | undefined } = Deno.env,
): string[] {
  const problems: string[] = [];
  for (const [name, kind] of Object.entries(ENV_OVERRIDES)) {
    const value = env.get(name);
    if (value === undefined || value === "") continue;
    if (kind === "int") {
      const n = Number(value);
      if (!Number.isInteger(n)) problems.push(`environment ${name}: must be an integer`);
      else settings[name] = n;
    } else settings[name] = value;
  }
  // An environment value wins over the file's value for the same setting under the other name.
  for (const [eve, ours] of Object.entries(ALIASES)) {
    if (env.get(ours) && env.get(eve) === undefined) delete settings[eve];
    if (env.get(eve) && env.get(ours) === undefined) delete settings[ours];
  }
  return problems;
}
