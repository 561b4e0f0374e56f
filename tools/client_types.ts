/**
 * `deno task client:types`: writes the TypeScript types of an API for the typed client
 * (src/client/), from a settings file or from a running service's OpenAPI description.
 *
 *     deno task client:types --settings config/settings.json --out api_types.ts
 *     deno task client:types --url http://localhost:5000/openapi.json --out api_types.ts
 *
 * From settings, the settings are loaded and checked as the service does (`prepare`: the
 * normalized domain and compiled schemas), and the types come from the same OpenAPI
 * description the service would serve, so both routes give the same file. Bad settings
 * list every problem and exit 1, as `deno task start --check` does.
 */
import { parseArgs } from "node:util";
import { prepare, SettingsError } from "../src/mod.ts";
import { loadSettingsFile } from "../src/settings/load.ts";
import { describeApi } from "../src/openapi/document.ts";
import { publicUrls } from "../src/http/urls.ts";
import type { Runtime } from "../src/services/runtime.ts";
import { generateTypes } from "../src/client/typegen.ts";

const USAGE = `Usage: deno task client:types (--settings FILE | --url URL) [--out FILE]

  -s, --settings FILE   settings: a JSON file or a TS/JS module
  -u, --url URL         a running service's OpenAPI description (…/openapi.json)
  -H, --header "K: V"   a header for --url (credentials), may repeat
  -o, --out FILE        where to write the types (default: standard output)`;

/** The types of the API that `raw` settings describe (throws SettingsError). */
export function typesFromSettings(
  raw: Record<string, unknown>,
  options: { extensions?: never; origin?: string } = {},
): string {
  const prepared = prepare(raw, { env: false, extensions: options.extensions });
  const rt = {
    settings: prepared.settings,
    domain: prepared.domain,
    schemas: prepared.schemas,
    urls: publicUrls(prepared.settings),
  } as unknown as Runtime; // describeApi reads only these (and the optional change hub)
  const document = describeApi(rt, {
    config: prepared.openapi ?? { documentPath: "openapi.json", docsPath: null },
    rateLimited: false,
  });
  const lookups: Record<string, string | undefined> = {};
  for (const resource of prepared.domain.values()) {
    lookups[resource.name] = resource.additionalLookup?.field;
  }
  return generateTypes({ document, lookups, origin: options.origin });
}

/** The types of the API whose OpenAPI description is at `url`. */
export async function typesFromUrl(url: string, headers: HeadersInit = {}): Promise<string> {
  const response = await fetch(url, { headers: { accept: "application/json", ...headers } });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`GET ${url}: ${response.status} ${response.statusText}`);
  }
  const document = await response.json();
  if (!document || typeof document !== "object" || !document.components) {
    throw new Error(`${url} is not an OpenAPI description`);
  }
  return generateTypes({ document, origin: url });
}

async function main(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        settings: { type: "string", short: "s" },
        url: { type: "string", short: "u" },
        header: { type: "string", short: "H", multiple: true },
        out: { type: "string", short: "o" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.settings === !values.url) {
    console.error(`name one of --settings and --url\n${USAGE}`);
    return 2;
  }
  let text: string;
  try {
    if (values.settings) {
      const raw = await loadSettingsFile(values.settings);
      text = typesFromSettings(raw.settings, {
        extensions: raw.exports.extensions as never,
        origin: values.settings,
      });
    } else {
      const headers = new Headers();
      for (const header of values.header ?? []) {
        const colon = header.indexOf(":");
        if (colon < 1) throw new Error(`--header "${header}" is not "Name: value"`);
        headers.set(header.slice(0, colon).trim(), header.slice(colon + 1).trim());
      }
      text = await typesFromUrl(values.url!, headers);
    }
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(`${values.settings} has ${error.problems.length} problem(s):`);
      for (const problem of error.problems) console.error(`  - ${problem}`);
    } else console.error((error as Error).message);
    return 1;
  }
  if (values.out) await Deno.writeTextFile(values.out, text);
  else console.log(text);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
