/**
 * The one skip format of the suite: a test that cannot run here still registers, with the
 * reason in its name (`... (skipped: <reason>)`), and is ignored.
 */

/** A test's name and ignore flag: skipped with `reason`, or run when there is none. */
export function skipUnless(
  name: string,
  reason: string | null | undefined,
): { name: string; ignore: boolean } {
  return reason ? { name: `${name} (skipped: ${reason})`, ignore: true } : { name, ignore: false };
}

/** The reason of a skip on the jongodb emulator for one of its gaps (see jongodb.ts). */
export function jongodbGap(gap: string): string {
  return `jongodb gap "${gap}"`;
}
