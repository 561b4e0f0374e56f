/**
 * The README's examples work when pasted: every curl call with `{` or `[` in its URL turns
 * globbing off (`-g`) or sends the query with `--data-urlencode`; the quick start's curl
 * calls (those without placeholders) run, as written, with the real `curl` against a
 * service started with `config/settings.json` and answer 2xx; the Reading examples without
 * placeholders answer what they show (2xx unless a status follows them), after the quick
 * start's POST; and every field they name exists in the example domain (embedded ones are
 * embeddable relations).
 */
import assert from "node:assert/strict";
import { loadSettingsFile } from "../src/settings/load.ts";
import { scenario, startService, STORES } from "./support/harness.ts";
import { skipUnless } from "./support/skip.ts";
import {
  fencedBlocks,
  fieldRule,
  getExamples,
  hasPlaceholder,
  queryFields,
  section,
  shellCommands,
} from "./support/readme.ts";
import type { Json } from "./support/client.ts";

const README = await Deno.readTextFile(new URL("../README.md", import.meta.url));
const { settings } = await loadSettingsFile(
  new URL("../config/settings.json", import.meta.url).pathname,
);
const DOMAIN = settings.DOMAIN as Record<string, { schema: Record<string, Json> }>;

/** The example service's address in the README. */
const README_HOST = "localhost:5000";

/** Options of curl that take a value (the ones the README uses). */
const WITH_VALUE = new Set(["-X", "-H", "-d", "--data", "--data-raw", "--data-urlencode", "-F"]);
const WITH_VALUE_TOO = new Set(["-u", "-o", "-r", "-w", "--json"]);

/** A curl call: its flags, URL, method and JSON body (when `-d` holds JSON). */
function parseCurl(words: string[]) {
  const flags = new Set<string>();
  const values: [string, string][] = [];
  let url: string | null = null;
  for (let i = 1; i < words.length; i++) {
    const w = words[i];
    if (WITH_VALUE.has(w) || WITH_VALUE_TOO.has(w)) values.push([w, words[++i]]);
    else if (/^-[a-zA-Z]+$/.test(w)) { for (const f of w.slice(1)) flags.add(`-${f}`); }
    else if (w.startsWith("--")) flags.add(w);
    else url ??= w;
  }
  const value = (name: string) => values.find(([n]) => n === name)?.[1];
  const data = value("-d") ?? value("--data") ?? value("--data-raw");
  let body: unknown = undefined;
  try {
    body = data === undefined ? undefined : JSON.parse(data);
  } catch { /* not JSON */ }
  return {
    flags,
    url,
    urlencoded: values.some(([n]) => n === "--data-urlencode"),
    method: value("-X") ?? (data === undefined ? "GET" : "POST"),
    body,
  };
}

/** Every curl call of every ```sh block, with its line. */
const CURLS = fencedBlocks(README, "sh").flatMap((block) =>
  shellCommands(block.text).filter((c) => c.words[0] === "curl").map((c) => ({
    ...c,
    line: block.line,
    curl: parseCurl(c.words),
  }))
);

/** The resource an example path addresses (its first segment). */
function resourceOf(path: string): string {
  return path.replace(/^\/+/, "").split(/[/?]/)[0];
}

/** Fails unless every field `target` names exists in its resource of the example domain. */
function checkFields(target: string, body?: unknown) {
  const url = new URL(target.replace(/^\/*/, "/"), "http://example");
  const resource = resourceOf(url.pathname);
  if (resource === "") return;
  assert.ok(Object.hasOwn(DOMAIN, resource), `${target}: no resource "${resource}"`);
  const schema = DOMAIN[resource].schema;
  const named = queryFields(url.searchParams);
  if (body && typeof body === "object") {
    for (const field of Object.keys(body)) named.push({ field, use: "body" });
  }
  for (const { field, use } of named) {
    const rule = fieldRule(schema, field);
    assert.ok(rule, `${target}: ${use} names "${field}", not a field of ${resource}`);
    if (use === "embedded") {
      assert.ok(rule.data_relation?.embeddable, `${target}: "${field}" is not embeddable`);
    }
  }
}

Deno.test("readme: curl calls with { or [ in the URL use -g or --data-urlencode", () => {
  assert.ok(CURLS.length >= 10, `only ${CURLS.length} curl calls found`);
  for (const { curl, source, line } of CURLS) {
    assert.ok(curl.url, `README block at line ${line}: no URL in ${source}`);
    if (!/[{}[\]]/.test(curl.url)) continue;
    assert.ok(
      curl.flags.has("-g") || curl.flags.has("--globoff") || curl.urlencoded,
      `README block at line ${line}: curl globs the braces of ${curl.url} (add -g)`,
    );
  }
});

Deno.test("readme: the fields the examples name exist in the example domain", () => {
  const reading = section(README, "Reading");
  const examples = getExamples(reading);
  assert.ok(examples.length >= 10, `only ${examples.length} GET examples found`);
  for (const { target } of examples) {
    // Settings snippets of other resources (`authors`, ...) stand next to placeholders only.
    if (hasPlaceholder(target) && !Object.hasOwn(DOMAIN, resourceOf(target))) continue;
    checkFields(target.replace(/<[^>]*>/g, "x"));
  }
  const quickStart = CURLS.filter((c) => c.curl.url?.startsWith(README_HOST));
  for (
    const { curl } of quickStart.filter((c) => section(README, "Quick start").includes(c.source))
  ) {
    checkFields(curl.url!.slice(README_HOST.length), curl.body);
  }
});

const CURL_MISSING = await new Deno.Command("curl", { args: ["--version"], stdout: "null" })
  .output().then(() => null, () => "curl is not installed");

/** The quick start's curl calls without placeholders. */
const QUICK_START = CURLS.filter((c) =>
  section(README, "Quick start").includes(c.source) && !hasPlaceholder(c.source)
);

for (const kind of STORES) {
  Deno.test({
    ...skipUnless(`[${kind}] readme: the quick start's curl calls run as pasted`, CURL_MISSING),
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      assert.ok(QUICK_START.length >= 3, `only ${QUICK_START.length} runnable quick-start calls`);
      const running = await startService(settings, kind);
      try {
        const host = new URL(running.url).host;
        for (const { source } of QUICK_START) {
          // As pasted, with a wrapper that prints the status after the answer.
          const script = `curl() { command curl -w '\\n%{http_code}' "$@"; }\n` +
            source.replaceAll(README_HOST, host);
          const out = await new Deno.Command("bash", {
            args: ["-c", script],
            stdout: "piped",
            stderr: "piped",
            signal: AbortSignal.timeout(30_000),
          }).output();
          const text = new TextDecoder().decode(out.stdout);
          const status = Number(text.trim().split("\n").at(-1));
          assert.equal(out.code, 0, `${source}: ${new TextDecoder().decode(out.stderr)}`);
          assert.ok(status >= 200 && status < 300, `${source}: answered ${text}`);
        }
      } finally {
        await running.stop();
      }
    },
  });
}

scenario(
  "readme: the Reading examples answer what they show",
  settings,
  async (api) => {
    // The document the quick start's POST creates.
    await api.create("people", QUICK_START.find((c) => c.curl.method === "POST")!.curl.body);
    for (const { target, status } of getExamples(section(README, "Reading"))) {
      if (hasPlaceholder(target)) continue;
      const res = await api.get(target.slice(1));
      if (status !== null) assert.equal(res.status, status, `${target}: ${res.text}`);
      else assert.ok(res.status >= 200 && res.status < 300, `${target}: ${res.text}`);
    }
    // The examples that show results find that document.
    const found = await api.get(
      'people?where={"location.city": "London", "born": {"$lt": "Mon, 01 Jan 1900 00:00:00 GMT"}}',
    );
    assert.equal(found.body._items?.[0]?.lastname, "Lovelace", found.text);
  },
);
