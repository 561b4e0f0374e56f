/**
 * The shell examples of README.md and docs/*.md work when pasted: every curl call with `{`
 * or `[` in its URL turns globbing off (`-g`) or sends the query with `--data-urlencode`;
 * the fields a query names exist in the domain the example runs against (embedded ones
 * are embeddable relations); and every ```sh block runs, as written and in order, with the
 * real `curl` and bash, against a service started with config/settings.json (plus the
 * settings its marker names; see tests/support/doc_examples.ts), on each store: each
 * command exits 0, each curl answers 2xx or the status shown after it, and the output
 * shows what the comment lines after it show.
 */
import assert from "node:assert/strict";
import { loadSettingsFile } from "../src/settings/load.ts";
import { startService, STORES } from "./support/harness.ts";
import { skipUnless } from "./support/skip.ts";
import { fieldRule, queryFields } from "./support/readme.ts";
import {
  commandRuns,
  type ExampleBlock,
  exampleBlocks,
  missingPiece,
  script,
  withSettings,
} from "./support/doc_examples.ts";
import type { Json } from "./support/client.ts";

const ROOT = new URL("../", import.meta.url);
const { settings: shipped } = await loadSettingsFile(
  new URL("config/settings.json", ROOT).pathname,
);

/** README.md and every chapter of docs/ (`DOC_FILES=a.md,docs/b.md` narrows while writing). */
const FILES = [
  "README.md",
  ...[...Deno.readDirSync(new URL("docs/", ROOT))]
    .filter((e) => e.isFile && e.name.endsWith(".md")).map((e) => `docs/${e.name}`).sort(),
].filter((f) => !Deno.env.get("DOC_FILES") || Deno.env.get("DOC_FILES")!.split(",").includes(f));
/** Whether DOC_FILES narrows the files (the counts below then do not apply). */
const NARROWED = Boolean(Deno.env.get("DOC_FILES"));
const BLOCKS: ExampleBlock[] = FILES.flatMap((file) =>
  exampleBlocks(file, Deno.readTextFileSync(new URL(file, ROOT)))
);

/**
 * The project's top-level files and folders, linked into the directories examples run in so
 * that `deno task ...` and `./src/mod.ts` resolve there (local data and git are left out).
 */
const PROJECT_ENTRIES = [...Deno.readDirSync(ROOT)].map((e) => e.name)
  .filter((name) => ![".git", ".data"].includes(name));

/** The example service's address in the docs. */
const DOC_HOST = "localhost:5000";

/** Options of curl that take a value (the ones the docs use). */
const WITH_VALUE = new Set([
  "-X",
  "-H",
  "-d",
  "--data",
  "--data-raw",
  "--data-binary",
  "--data-urlencode",
  "-F",
  "-u",
  "-o",
  "-r",
  "-w",
  "--json",
]);

/** A curl call: its flags, URL and query (with `-G --data-urlencode` values). */
function parseCurl(words: string[]) {
  const flags = new Set<string>();
  const encoded: string[] = [];
  let url: string | null = null;
  for (let i = 1; i < words.length; i++) {
    const w = words[i];
    if (WITH_VALUE.has(w)) {
      if (w === "--data-urlencode") encoded.push(words[i + 1]);
      i++;
    } else if (/^-[a-zA-Z]+$/.test(w)) { for (const f of w.slice(1)) flags.add(`-${f}`); }
    else if (w.startsWith("--")) flags.add(w);
    else url ??= w;
  }
  return { flags, url, encoded };
}

/** Every curl call of every block (also inside `$(...)` and pipes). */
const CURLS = BLOCKS.flatMap((block) =>
  block.commands.flatMap((c) => {
    const calls: { block: ExampleBlock; source: string; words: string[]; refused: boolean }[] = [];
    const refused = c.status !== null && c.status >= 400;
    c.words.forEach((w, i) => {
      if (w === "curl" || w.endsWith("(curl")) {
        const inner = w !== "curl"; // `$(curl ...)`: the call ends at the closing parenthesis
        const end = c.words.findIndex((x, j) => j > i && (x === "|" || (inner && x.endsWith(")"))));
        calls.push({
          block,
          source: c.source,
          words: c.words.slice(i, end === -1 ? undefined : end),
          refused,
        });
      }
    });
    return calls;
  })
);

const where = (b: ExampleBlock) => `${b.file}:${b.line}`;

Deno.test("docs: curl calls with { or [ in the URL use -g or --data-urlencode", () => {
  assert.ok(NARROWED || CURLS.length >= 40, `only ${CURLS.length} curl calls found`);
  for (const { block, source, words } of CURLS) {
    const curl = parseCurl(words);
    assert.ok(curl.url, `${where(block)}: no URL in ${source}`);
    if (!/[{}[\]]/.test(curl.url)) continue;
    assert.ok(
      curl.flags.has("-g") || curl.flags.has("--globoff"),
      `${where(block)}: curl globs the braces of ${curl.url} (add -g)`,
    );
  }
});

/**
 * The resource a path addresses (its collection, or an item below it): the resource whose url
 * matches, URL variables standing for one segment; the longest url wins.
 */
function resourceFor(domain: Record<string, { url?: string }>, pathname: string): string | null {
  const path = pathname.replace(/^\/+|\/+$/g, "");
  let best: string | null = null;
  let bestLength = -1;
  for (const [name, resource] of Object.entries(domain)) {
    const url = resource.url ?? name;
    const pattern = url.split(/<[^>]*>/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("[^/]+");
    if (new RegExp(`^${pattern}(?:/[^/]+)?$`).test(path) && url.length > bestLength) {
      best = name;
      bestLength = url.length;
    }
  }
  return best;
}

Deno.test("docs: the fields the examples' queries name exist in their domain (unless refused)", () => {
  let checked = 0;
  // Examples of refusals (a 4xx shown after them) may name what the domain lacks.
  for (const { block, words } of CURLS.filter((c) => !c.refused)) {
    const curl = parseCurl(words);
    if (!curl.url?.replace(/^'|'$/g, "").startsWith(DOC_HOST)) continue;
    const url = new URL(`http://${curl.url}`);
    for (const pair of curl.encoded) {
      const eq = pair.indexOf("=");
      url.searchParams.append(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const domain = withSettings(shipped, block.settings).DOMAIN as Record<
      string,
      { url?: string; schema: Record<string, Json> }
    >;
    const resource = resourceFor(domain, url.pathname);
    if (resource === null) continue;
    for (const { field, use } of queryFields(url.searchParams)) {
      const rule = fieldRule(domain[resource].schema, field);
      assert.ok(rule, `${where(block)}: ${use} names "${field}", not a field of ${resource}`);
      if (use === "embedded") {
        assert.ok(rule.data_relation?.embeddable, `${where(block)}: "${field}" not embeddable`);
      }
      checked++;
    }
  }
  assert.ok(NARROWED || checked >= 10, `only ${checked} query fields checked`);
});

Deno.test("docs: every file has runnable examples, and every skipped one says why", () => {
  for (const file of FILES) {
    const blocks = BLOCKS.filter((b) => b.file === file);
    for (const b of blocks.filter((b) => b.notRun !== null)) {
      assert.ok(b.notRun!.length >= 8, `${where(b)}: not-run without a reason`);
    }
  }
  const runnable = BLOCKS.filter((b) => b.notRun === null);
  assert.ok(NARROWED || runnable.length >= 30, `only ${runnable.length} runnable blocks`);
});

const CURL_MISSING = await new Deno.Command("curl", { args: ["--version"], stdout: "null" })
  .output().then(() => null, () => "curl is not installed");

/** Runnable blocks in groups that share one service and one shell (same file and settings). */
function groups(file: string): ExampleBlock[][] {
  const out: ExampleBlock[][] = [];
  for (const block of BLOCKS.filter((b) => b.file === file && b.notRun === null)) {
    const last = out.at(-1);
    if (last && last[0].settings === block.settings) last.push(block);
    else out.push([block]);
  }
  return out;
}

for (const kind of STORES) {
  for (const file of FILES) {
    const fileGroups = groups(file);
    if (fileGroups.length === 0) continue;
    Deno.test({
      ...skipUnless(`[${kind}] docs: the examples of ${file} run as written`, CURL_MISSING),
      sanitizeOps: false,
      sanitizeResources: false,
      async fn() {
        for (const group of fileGroups) await runGroup(kind, group);
      },
    });
  }
}

/**
 * Runs `text` with bash in a process group of its own (setsid), and past `timeoutMs` kills
 * the whole group: an example that starts a server leaves nothing running behind it.
 */
async function groupOutput(text: string, options: { cwd: string; timeoutMs: number }) {
  const child = new Deno.Command("setsid", {
    args: ["bash", "-c", text],
    cwd: options.cwd,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const killGroup = () => {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // The group has already ended.
    }
  };
  const timer = setTimeout(killGroup, options.timeoutMs);
  try {
    return await child.output();
  } finally {
    clearTimeout(timer);
    killGroup();
  }
}

async function runGroup(kind: (typeof STORES)[number], group: ExampleBlock[]) {
  const running = await startService(withSettings(shipped, group[0].settings), kind);
  // A fresh directory for the files examples write, where `deno task` finds the project.
  const dir = await Deno.makeTempDir({ prefix: "restsvc-docs-" });
  for (const name of PROJECT_ENTRIES) {
    await Deno.symlink(new URL(name, ROOT).pathname, `${dir}/${name}`);
  }
  try {
    const host = new URL(running.url).host;
    const commands = group.flatMap((b) => b.commands.map((c) => ({ block: b, command: c })));
    const out = await groupOutput(
      script(commands.map((c) => c.command.source.replaceAll(DOC_HOST, host))),
      { cwd: dir, timeoutMs: 60_000 },
    );
    const decode = (b: Uint8Array) => new TextDecoder().decode(b);
    const runs = commandRuns(decode(out.stdout), decode(out.stderr), commands.length);
    runs.forEach((run, i) => {
      const { block, command } = commands[i];
      const at = `${where(block)} (${group[0].settingsLabel} settings): ${command.source}`;
      assert.equal(run.code, 0, `${at}\nexited ${run.code}: ${run.stderr}${run.stdout}`);
      for (const status of run.statuses) {
        if (command.status !== null) assert.equal(status, command.status, `${at}\n${run.stdout}`);
        else assert.ok(status >= 200 && status < 300, `${at}\nanswered ${status}: ${run.stdout}`);
      }
      const missing = missingPiece(command.expected, run.stdout);
      assert.equal(missing, null, `${at}\nthe output lacks ${missing}:\n${run.stdout}`);
    });
  } finally {
    await running.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Chapters written elsewhere in the project: links to them are checked once they exist. */
const WRITTEN_ELSEWHERE = new Set(["docs/deployment.md", "docs/performance.md", "docs/client.md"]);

/** GitHub's anchor of a heading. */
function slug(heading: string): string {
  return heading.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-");
}

Deno.test("docs: links between the docs point to files and headings that exist", async () => {
  const { dirname, join, normalize } = await import("node:path");
  let checked = 0;
  for (const file of FILES) {
    const text = Deno.readTextFileSync(new URL(file, ROOT)).replace(/```[\s\S]*?```/g, "");
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split("#");
      const resolved = path === "" ? file : normalize(join(dirname(file), path));
      let body: string;
      try {
        body = Deno.readTextFileSync(new URL(resolved, ROOT));
      } catch {
        assert.ok(WRITTEN_ELSEWHERE.has(resolved), `${file}: link to missing ${target}`);
        continue;
      }
      checked++;
      if (anchor === undefined) continue;
      const headings = [...body.replace(/```[\s\S]*?```/g, "").matchAll(/^#+ (.+)$/gm)]
        .map((m) => slug(m[1]));
      assert.ok(headings.includes(anchor), `${file}: no heading #${anchor} in ${resolved}`);
    }
  }
  assert.ok(NARROWED || checked >= 50, `only ${checked} links checked`);
});

/** The ```ts blocks of the docs (a first line `// name.ts` names the file the block is). */
function typescriptBlocks(): { file: string; line: number; name: string; text: string }[] {
  const out: { file: string; line: number; name: string; text: string }[] = [];
  for (const file of FILES) {
    const lines = Deno.readTextFileSync(new URL(file, ROOT)).split("\n");
    lines.forEach((l, i) => {
      if (l.trim() !== "```ts") return;
      const end = lines.findIndex((x, j) => j > i && x.trim() === "```");
      const text = lines.slice(i + 1, end).join("\n");
      const named = /^\/\/ ([\w-]+\.ts)$/.exec(lines[i + 1].trim());
      out.push({ file, line: i + 1, name: named?.[1] ?? `example_${out.length}.ts`, text });
    });
  }
  return out;
}

Deno.test({
  name: "docs: the TypeScript examples type-check against the project",
  sanitizeResources: false,
  async fn() {
    const blocks = typescriptBlocks();
    assert.ok(NARROWED || blocks.length >= 5, `only ${blocks.length} TypeScript examples`);
    if (blocks.length === 0) return;
    // Where `./src/mod.ts` and `./config/...` resolve as they do from the project's root.
    const dir = await Deno.makeTempDir({ prefix: "restsvc-docs-ts-" });
    try {
      for (const name of PROJECT_ENTRIES) {
        await Deno.symlink(new URL(name, ROOT).pathname, `${dir}/${name}`);
      }
      for (const block of blocks) await Deno.writeTextFile(`${dir}/${block.name}`, block.text);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["check", "--quiet", ...blocks.map((b) => b.name)],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(120_000),
      }).output();
      const where = blocks.map((b) => `${b.name}: ${b.file}:${b.line}`).join("\n");
      assert.equal(out.code, 0, `${new TextDecoder().decode(out.stderr)}\n${where}`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("docs: the README is a front page, and no page tells the project's history", () => {
  const readme = Deno.readTextFileSync(new URL("README.md", ROOT));
  const lines = readme.split("\n").length;
  assert.ok(lines <= 300, `README.md has ${lines} lines (at most 300: move detail into docs/)`);
  for (const file of FILES) {
    const text = Deno.readTextFileSync(new URL(file, ROOT));
    const found = /\b(?:the latest session|this session|issue #?\d+)\b/i.exec(text);
    assert.equal(found, null, `${file}: "${found?.[0]}" (no history or tracker numbers in docs)`);
  }
});
