/** The byte-level body budget scan (src/http/body/budget.ts). */
import assert from "node:assert/strict";
import { type BodyBudget, scanJson } from "../../src/http/body/budget.ts";
import { HttpError } from "../../src/http/errors.ts";

const BUDGET: BodyBudget = {
  maxFields: 4,
  maxBodyFields: 6,
  maxListLength: 3,
  maxDepth: 3,
  maxDocuments: 2,
  maxParts: 2,
};
const bytes = (s: string) => new TextEncoder().encode(s);

function refused(text: string, setting: string, options = {}) {
  assert.throws(
    () => scanJson(bytes(text), BUDGET, options),
    (e) => e instanceof HttpError && e.status === 413 && e.message.includes(setting),
    text,
  );
}

Deno.test("scanJson: within the budget", () => {
  for (
    const text of [
      '{"a":1,"b":{"c":[1,2,3]},"d":2}',
      '[{"a":1,"b":2,"c":3,"d":4},{"a":1,"b":2}]',
      '{"a":"::::,,,,{{{{[[[[","b":"\\"\\\\:,"}',
      '{"a":{"b":{"c":1}}}',
      "[]",
      "not json at all }}}]]]",
    ]
  ) scanJson(bytes(text), BUDGET);
});

Deno.test("scanJson: each budget names its setting", () => {
  refused('{"a":1,"b":2,"c":3,"d":4,"e":5}', "MAX_DOCUMENT_FIELDS");
  refused('{"a":{"b":1,"c":2,"d":3,"e":4}}', "MAX_DOCUMENT_FIELDS");
  refused('[{"a":1,"b":2,"c":3},{"a":1,"b":2,"c":3,"d":4}]', "MAX_BODY_FIELDS");
  refused('{"a":[1,2,3,4]}', "MAX_LIST_LENGTH");
  refused('{"a":[[1],[2],[3],[4]]}', "MAX_LIST_LENGTH");
  refused('{"a":{"b":{"c":{"d":1}}}}', "MAX_DOCUMENT_DEPTH");
  refused('[{"a":{"b":{"c":{}}}}]', "MAX_DOCUMENT_DEPTH");
  refused("[{},{},{}]", "documents per request");
  refused("[1,2,3,4]", "MAX_LIST_LENGTH", { field: true });
  refused('{"a":{"b":{"c":1}}}', "MAX_DOCUMENT_DEPTH", { field: true });
});

Deno.test("scanJson: a 16 MB body is scanned in well under a second", () => {
  const big = bytes(`{"a":"${"x".repeat(16 * 1024 * 1024 - 10)}"}`);
  const started = performance.now();
  scanJson(big, BUDGET);
  const took = performance.now() - started;
  assert.ok(took < 1000, `took ${took.toFixed(0)} ms`);
});
