/**
 * The shell examples of README.md and docs/*.md, read for `tests/readme_test.ts`: every
 * ```sh block, with the markers (HTML comments on the lines just before it) that say how it
 * runs, and each command's expected output (the comment lines that follow the command).
 *
 * Markers:
 * - `<!-- not-run: <reason> -->`: the block is not run (the reason is required).
 * - `<!-- settings: <name> | {json} | shipped -->`: this block and the next ones of the file
 *   run against config/settings.json with these settings added (a name refers to a ```json
 *   block marked `<!-- example-settings: <name> -->` earlier in the file; DOMAIN entries are
 *   added or replaced one resource at a time); `shipped` goes back to the shipped config.
 *
 * Blocks of docs/deployment.md that run a container engine (`docker ...`) are not run either.
 *
 * Expected output: a comment line after a command (before the next one) is a piece of its
 * output; `...` matches anything, and the pieces must appear in order. A line starting with
 * an HTTP status (`# 404 ...`, or `# HTTP/1.1 206 ...`) is the status every curl of the
 * command must answer; without one, every curl must answer 2xx.
 */
import { shellCommands } from "./readme.ts";

/** One command of a block, with what its output must show. */
export interface ExampleCommand {
  source: string;
  words: string[];
  /** Output pieces, in order (`...` already split out). */
  expected: string[];
  /** The status every curl of the command must answer; null: any 2xx. */
  status: number | null;
}

/** A ```sh block and how it runs. */
export interface ExampleBlock {
  file: string;
  line: number;
  text: string;
  commands: ExampleCommand[];
  /** Why it is not run, or null. */
  notRun: string | null;
  /** The settings added to the shipped config (`{}` for none) and their label. */
  settings: Record<string, unknown>;
  settingsLabel: string;
}

/** Container engines: their commands in docs/deployment.md are not run. */
const CONTAINER = new Set(["docker", "podman", "docker-compose"]);

const MARKER = /^<!--\s*([a-z-]+):\s*(.*?)\s*-->$/;

/** The markers on the lines just before line `index` (blank lines between are allowed). */
function markersBefore(lines: string[], index: number): Map<string, string> {
  const markers = new Map<string, string>();
  for (let i = index - 1; i >= 0; i--) {
    const line = lines[i].trim();
    if (line === "") continue;
    const m = MARKER.exec(line);
    if (!m) break;
    markers.set(m[1], m[2]);
  }
  return markers;
}

/** The commands of a block with the comment lines after each as its expected output. */
export function exampleCommands(text: string): ExampleCommand[] {
  const commands = shellCommands(text);
  let cursor = 0;
  const located = commands.map((c) => {
    const start = text.indexOf(c.source, cursor);
    if (start === -1) throw new Error(`cannot locate command: ${c.source}`);
    cursor = start + c.source.length;
    return { ...c, start, end: cursor };
  });
  return located.map((c, i) => {
    const after = text.slice(c.end, located[i + 1]?.start ?? text.length);
    // The rest of the command's last line (an inline comment) is not output.
    const lines = after.split("\n").slice(1).map((l) => l.trim()).filter((l) => l.startsWith("#"));
    const out = lines.map((l) => l.replace(/^#\s?/, ""));
    let status: number | null = null;
    const first = out[0] ?? "";
    const m = /^(?:HTTP\/[\d.]+ )?(\d{3})(?: |$)/.exec(first);
    if (m) {
      status = Number(m[1]);
      if (!first.startsWith("HTTP/")) out[0] = first.slice(3).trim();
    }
    const expected = out.flatMap((l) => l.split("...")).map((p) => p.trim()).filter(Boolean);
    return { source: c.source, words: c.words, expected, status };
  });
}

/** Every ```sh block of `markdown` (file name `file`), with its markers applied. */
export function exampleBlocks(file: string, markdown: string): ExampleBlock[] {
  const lines = markdown.split("\n");
  const named = new Map<string, Record<string, unknown>>();
  let settings: Record<string, unknown> = {};
  let settingsLabel = "shipped";
  const blocks: ExampleBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)\s*$/.exec(lines[i].trim());
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === "```");
    if (end === -1) throw new Error(`${file}:${i + 1}: unclosed code block`);
    const text = lines.slice(i + 1, end).join("\n");
    const markers = markersBefore(lines, i);
    const where = `${file}:${i + 1}`;
    if (fence[1] === "json" && markers.has("example-settings")) {
      named.set(markers.get("example-settings")!, JSON.parse(text));
    }
    if (fence[1] === "sh") {
      const chosen = markers.get("settings");
      if (chosen !== undefined) {
        if (chosen === "shipped") settings = {};
        else if (chosen.startsWith("{")) settings = JSON.parse(chosen);
        else if (named.has(chosen)) settings = named.get(chosen)!;
        else throw new Error(`${where}: no example settings named "${chosen}" before the block`);
        settingsLabel = chosen;
      }
      const commands = exampleCommands(text);
      const notRun = markers.get("not-run") ??
        (file === "docs/deployment.md" && commands.some((c) => CONTAINER.has(c.words[0]))
          ? "container commands (no container engine runs where the tests do)"
          : null);
      if (notRun !== null && notRun.length < 8) {
        throw new Error(`${where}: a not-run marker needs its reason`);
      }
      blocks.push({
        file,
        line: i + 1,
        text,
        commands,
        notRun,
        settings,
        settingsLabel,
      });
    }
    i = end;
  }
  return blocks;
}

/** The shipped settings with `extra` added (DOMAIN entries one resource at a time). */
export function withSettings(
  shipped: Record<string, unknown>,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const domain = {
    ...shipped.DOMAIN as Record<string, unknown>,
    ...extra.DOMAIN as Record<string, unknown> | undefined,
  };
  return { ...shipped, ...extra, DOMAIN: domain };
}

/** What one command printed and answered. */
export interface CommandRun {
  stdout: string;
  stderr: string;
  statuses: number[];
  code: number;
}

/**
 * A bash script running `commands` in order in one shell, with `curl` reporting each
 * answer's status on stderr and markers that attribute output to commands.
 */
export function script(commands: string[]): string {
  const lines = [
    `curl() { command curl -w '%{stderr}\\n@@status %{http_code}\\n' "$@"; }`,
  ];
  commands.forEach((source, i) => {
    lines.push(`echo; echo "@@cmd ${i}"; echo >&2; echo "@@cmd ${i}" >&2`);
    lines.push(source);
    lines.push(`echo "\n@@rc $?" >&2`);
  });
  return lines.join("\n") + "\n";
}

/** Splits a script's output into the runs of its commands. */
export function commandRuns(stdout: string, stderr: string, count: number): CommandRun[] {
  const split = (text: string) => {
    const parts: string[] = new Array(count).fill("");
    let current = -1;
    for (const line of text.split("\n")) {
      const m = /^@@cmd (\d+)$/.exec(line);
      if (m) current = Number(m[1]);
      else if (current >= 0) parts[current] += line + "\n";
    }
    return parts;
  };
  const outs = split(stdout);
  const errs = split(stderr);
  return outs.map((out, i) => {
    const err = errs[i];
    const statuses = [...err.matchAll(/^@@status (\d+)$/gm)].map((m) => Number(m[1]));
    const rc = /^@@rc (\d+)$/m.exec(err);
    return {
      stdout: out,
      stderr: err.replace(/^@@(status|rc) \d+$\n?/gm, ""),
      statuses,
      code: rc ? Number(rc[1]) : -1,
    };
  });
}

/** The first expected piece not found, in order, in `output`; null when all are there. */
export function missingPiece(expected: string[], output: string): string | null {
  let at = 0;
  for (const piece of expected) {
    const found = output.indexOf(piece, at);
    if (found === -1) return piece;
    at = found + piece.length;
  }
  return null;
}
