/**
 * The reader of the docs' shell examples (tests/support/doc_examples.ts): expected output and
 * statuses after commands, markers, and the split of a script's output by command.
 */
import assert from "node:assert/strict";
import {
  commandRuns,
  exampleBlocks,
  exampleCommands,
  missingPiece,
  script,
  withSettings,
} from "./support/doc_examples.ts";

Deno.test("doc examples: comment lines after a command are its output and status", () => {
  const commands = exampleCommands(
    [
      "curl -s localhost:5000/a   # an explanation, not output",
      '# 404 {"code":404,...}',
      "curl -si localhost:5000/b \\",
      "  -H 'x: y'",
      "# HTTP/1.1 206 Partial Content",
      "# ...content-range: bytes 0-4/38...",
      "X=$(curl -s localhost:5000/c)",
    ].join("\n"),
  );
  assert.equal(commands.length, 3);
  assert.equal(commands[0].status, 404);
  assert.deepEqual(commands[0].expected, ['{"code":404,', "}"]);
  assert.equal(commands[1].status, 206);
  assert.deepEqual(commands[1].expected, [
    "HTTP/1.1 206 Partial Content",
    "content-range: bytes 0-4/38",
  ]);
  assert.equal(commands[2].status, null);
  assert.deepEqual(commands[2].expected, []);
});

Deno.test("doc examples: pieces must appear in order", () => {
  assert.equal(missingPiece(["a", "c"], "abc"), null);
  assert.equal(missingPiece(["c", "a"], "abc"), "a");
  assert.equal(missingPiece(["x"], "abc"), "x");
});

Deno.test("doc examples: markers set settings, skip with a reason, and refuse bad ones", () => {
  const doc = [
    "<!-- example-settings: extra -->",
    "```json",
    '{"SOFT_DELETE": true}',
    "```",
    "<!-- settings: extra -->",
    "```sh",
    "curl -s localhost:5000/people",
    "```",
    "```sh",
    "curl -s localhost:5000/works",
    "```",
    "<!-- not-run: serves until stopped -->",
    "```sh",
    "deno task start",
    "```",
    "<!-- settings: shipped -->",
    "```sh",
    "curl -s localhost:5000/",
    "```",
  ].join("\n");
  const blocks = exampleBlocks("docs/x.md", doc);
  assert.equal(blocks.length, 4);
  assert.deepEqual(blocks[0].settings, { SOFT_DELETE: true });
  assert.equal(blocks[1].settings, blocks[0].settings, "settings carry to the next block");
  assert.equal(blocks[2].notRun, "serves until stopped");
  assert.deepEqual(blocks[3].settings, {});
  assert.throws(() => exampleBlocks("x.md", "<!-- not-run: x -->\n```sh\nls\n```"), /reason/);
  assert.throws(() => exampleBlocks("x.md", "<!-- settings: nope -->\n```sh\nls\n```"), /nope/);
  const docker = "```sh\ndocker build -t restsvc .\n```";
  assert.ok(exampleBlocks("docs/deployment.md", docker)[0].notRun);
  assert.equal(exampleBlocks("docs/other.md", docker)[0].notRun, null);
});

Deno.test("doc examples: settings are added to the shipped ones, resource by resource", () => {
  const shipped = { A: 1, DOMAIN: { people: { x: 1 }, works: { y: 1 } } };
  assert.deepEqual(withSettings(shipped, { B: 2, DOMAIN: { works: { z: 1 } } }), {
    A: 1,
    B: 2,
    DOMAIN: { people: { x: 1 }, works: { z: 1 } },
  });
});

Deno.test("doc examples: a script's output is split by command, with statuses and codes", async () => {
  const text = script([
    "curl() { echo body-$1; echo '\n@@status 201' >&2; }",
    "curl one",
    "false",
  ]);
  const out = await new Deno.Command("bash", {
    args: ["-c", text],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  const runs = commandRuns(decode(out.stdout), decode(out.stderr), 3);
  assert.match(runs[1].stdout, /body-one/);
  assert.deepEqual(runs[1].statuses, [201]);
  assert.equal(runs[1].code, 0);
  assert.equal(runs[2].code, 1);
});
