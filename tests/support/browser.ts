/**
 * Test support: the Debian `chromium` driven by `playwright-core` (never a browser
 * download), headless, with a fresh profile per launch. Playwright reads system paths that
 * only `--allow-all` opens in Deno, so it runs in a child process (browser_driver.ts) and
 * the test suite keeps its narrower permissions.
 */

/** Where Debian installs Chromium (`apt-get install -y chromium`). */
export const CHROMIUM = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";

/** Why browser tests can't run here, or null when they can. `.ci/run` installs chromium. */
export const CHROMIUM_SKIP: string | null = (() => {
  try {
    Deno.statSync(CHROMIUM);
    return null;
  } catch {
    return `chromium is not installed at ${CHROMIUM} (apt-get install -y chromium)`;
  }
})();

/** What the browser saw of a page. */
export interface Visit {
  status: number | null;
  /** `data-tag` of every Swagger UI tag section, in page order. */
  tags: string[];
  /** The text of `#swagger-ui`. */
  text: string;
  /** Console errors, page errors, failed requests and requests to other origins. */
  problems: string[];
}

/**
 * Opens `url` in Chromium, waits for `selector` and the network to settle, writes a
 * full-page screenshot to `screenshot`. Killed after `timeoutMs`.
 */
export async function visit(
  url: string,
  options: {
    selector: string;
    screenshot: string;
    timeoutMs?: number;
    /** Credentials to give the page's own login form first. */
    login?: { user: string; password: string };
  },
): Promise<Visit> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const driver = new URL("./browser_driver.ts", import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      // The full lock: the project's default lock holds the service's packages alone.
      `--lock=${new URL("../../deno.lock", import.meta.url).pathname}`,
      driver,
      url,
      options.selector,
      options.screenshot,
      CHROMIUM,
      ...(options.login ? [JSON.stringify({ login: options.login })] : []),
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    const out = await child.output();
    const text = new TextDecoder().decode(out.stdout).trim();
    if (!out.success) {
      throw new Error(
        `browser driver failed (${out.code}): ${new TextDecoder().decode(out.stderr)}`,
      );
    }
    return JSON.parse(text.split("\n").at(-1)!) as Visit;
  } finally {
    clearTimeout(timer);
  }
}
