/** Settings checks without a store: what `prepare` refuses, as the list of problems. */
import { prepare, type ServiceOptions, SettingsError } from "../../src/mod.ts";

/**
 * The problems `prepare` lists for `raw` (environment ignored; `options.extensions` as the
 * service would get them); none when it accepts them.
 */
export function settingsProblems(
  raw: Record<string, unknown>,
  options: Pick<ServiceOptions, "extensions"> = {},
): string[] {
  try {
    prepare(raw, { ...options, env: false });
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
  return [];
}
