/** Settings checks without a store: what `prepare` refuses, as the list of problems. */
import { prepare, SettingsError } from "../../src/mod.ts";

/** The problems `prepare` lists for `raw` (environment ignored); none when it accepts them. */
export function settingsProblems(raw: Record<string, unknown>): string[] {
  try {
    prepare(raw, { env: false });
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
  return [];
}
