/**
 * Prints the JSON settings an Eve settings.py amounts to (the literal subset python.ts
 * reads), to keep as a JSON settings file:
 *
 * ```sh
 * deno task settings-from-python settings.py > settings.json
 * ```
 *
 * `os.environ.get(...)` reads this process's environment: values it finds are written into
 * the JSON. Exits 1 with the line and column of anything it refuses.
 */
import { PythonSettingsError, readPythonSettings } from "./python.ts";

/** Converts the file at `path`; the JSON text, or an error message. */
export function convert(path: string, text: string): { json: string } | { error: string } {
  try {
    const settings = readPythonSettings(text, { env: Deno.env });
    return { json: JSON.stringify(settings, null, 2) };
  } catch (error) {
    if (error instanceof PythonSettingsError) return { error: `${path}, ${error.message}` };
    throw error;
  }
}

if (import.meta.main) {
  const [path] = Deno.args;
  if (!path || Deno.args.length !== 1) {
    console.error("usage: deno task settings-from-python SETTINGS.py");
    Deno.exit(2);
  }
  let text: string;
  try {
    const info = await Deno.stat(path);
    if (info.size > 1024 * 1024) throw new Error("it is larger than 1 MiB");
    text = await Deno.readTextFile(path);
  } catch (error) {
    console.error(`cannot read ${path}: ${(error as Error).message}`);
    Deno.exit(1);
  }
  const result = convert(path, text);
  if ("error" in result) {
    console.error(result.error);
    Deno.exit(1);
  }
  console.log(result.json);
}
