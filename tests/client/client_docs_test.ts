/**
 * docs/client.md runs: every `ts` block is written next to the repository root (so its
 * `./src/client/mod.ts` imports resolve), type-checked, and run in order against a service
 * started with config/settings.json (blocks marked `ts media`: with the media settings of
 * the doc's `json` block), on both stores. Each `// -> text` comment is a line the block
 * must print, in order.
 */
import assert from "node:assert/strict";
import { startService, STORES } from "../support/harness.ts";

const ROOT = new URL("../../", import.meta.url);
const DOC = Deno.readTextFileSync(new URL("docs/client.md", ROOT));
const SHIPPED = JSON.parse(Deno.readTextFileSync(new URL("config/settings.json", ROOT)));
const DOC_URL = "http://localhost:5000/";

interface Block {
  code: string;
  media: boolean;
  expected: string[];
}

const blocks: Block[] = [...DOC.matchAll(/```ts( media)?\n([^]*?)```/g)].map((m) => ({
  code: m[2],
  media: Boolean(m[1]),
  expected: [...m[2].matchAll(/\/\/ -> (.*)$/gm)].map((e) => e[1]),
}));
const MEDIA = JSON.parse(/```json\n([^]*?)```/.exec(DOC)![1]);

/** Writes each block to a file at the root with `url` (or the media url) for the doc's. */
function writeBlocks(urls: { shipped: string; media: string }): string[] {
  const tag = Math.random().toString(36).slice(2, 8);
  return blocks.map((block, i) => {
    const path = new URL(`.client_doc_${tag}_${i}.ts`, ROOT).pathname;
    Deno.writeTextFileSync(
      path,
      block.code.replaceAll(DOC_URL, block.media ? urls.media : urls.shipped),
    );
    return path;
  });
}

async function deno(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT.pathname,
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

Deno.test("client docs: the examples are there and say what they print", () => {
  assert.ok(blocks.length >= 7, `${blocks.length} ts blocks`);
  assert.ok(blocks.some((b) => b.media));
  for (const block of blocks) assert.ok(block.expected.length > 0, block.code.slice(0, 200));
});

Deno.test("client docs: every example type-checks", async () => {
  const files = writeBlocks({ shipped: DOC_URL, media: DOC_URL });
  try {
    const checked = await deno(["check", ...files]);
    assert.equal(checked.code, 0, checked.stdout + checked.stderr);
  } finally {
    for (const file of files) Deno.removeSync(file);
  }
});

for (const kind of STORES) {
  Deno.test({
    name: `[${kind}] client docs: every example runs and prints what it says`,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const shipped = await startService(SHIPPED, kind);
      const media = await startService(MEDIA, kind);
      const files = writeBlocks({ shipped: shipped.url, media: media.url });
      try {
        for (const [i, file] of files.entries()) {
          const run = await deno(["run", "--allow-net", "--no-check", file]);
          const where = `docs/client.md ts block ${i + 1}:\n${blocks[i].code}\n${run.stderr}`;
          assert.equal(run.code, 0, where);
          assert.deepEqual(run.stdout.trimEnd().split("\n"), blocks[i].expected, where);
        }
      } finally {
        for (const file of files) Deno.removeSync(file);
        await shipped.stop();
        await media.stop();
      }
    },
  });
}
