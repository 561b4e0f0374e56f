/**
 * Aggregation pipelines on the embedded store: an operator its engine does not run is a
 * settings problem at start-up (with a suggestion when one is near), not a 400 that waits for
 * the first documents. With MongoDB the server judges its own operators.
 */
import assert from "node:assert/strict";
import { prepare, SettingsError } from "../../src/mod.ts";

function settings(pipeline: unknown[], store: Record<string, unknown> = { STORE: "embedded" }) {
  return {
    ...store,
    DOMAIN: {
      rows: { schema: { a: { type: "list" }, s: { type: "string" } } },
      summary: { datasource: { source: "rows", aggregation: { pipeline } } },
    },
  };
}

function problemsOf(raw: Record<string, unknown>): string[] {
  try {
    prepare(raw, { env: false });
    return [];
  } catch (error) {
    assert.ok(error instanceof SettingsError, String(error));
    return error.problems;
  }
}

Deno.test("pipeline operators: every unknown one is listed, with its place and a near name", () => {
  const problems = problemsOf(settings([
    { $match: { s: { $regex: "^a", $options: "i" } } },
    { $project: { x: { $sortArry: { input: "$a", sortBy: 1 } }, y: { $firstN: { n: 1 } } } },
    { $bogus: {} },
  ]));
  assert.deepEqual(problems, [
    "DOMAIN.summary.datasource.aggregation.pipeline[1].$project.x: $sortArry is not an " +
    "operator the embedded store runs (did you mean $sortArray?)",
    "DOMAIN.summary.datasource.aggregation.pipeline[2]: $bogus is not an operator the " +
    "embedded store runs",
  ]);
});

Deno.test("pipeline operators: literals, DBRefs and placeholders are data", () => {
  assert.deepEqual(
    problemsOf(settings([
      { $match: { s: "$name", owner: { $ref: "users", $id: 1 } } },
      { $project: { raw: { $literal: { $anything: 1 } }, same: { $const: { $too: 2 } } } },
      {
        $group: {
          _id: "$s",
          n: { $sum: 1 },
          top: { $topN: { n: 2, output: "$a", sortBy: { a: 1 } } },
        },
      },
      { $setWindowFields: { sortBy: { n: 1 }, output: { r: { $rank: {} } } } },
    ])),
    [],
  );
});

Deno.test("pipeline operators: a MongoDB operator the embedded store lacks is a warning", () => {
  const pipeline = [{ $project: { u: { $toUUID: "$s" } } }];
  assert.deepEqual(problemsOf(settings(pipeline)), []);
  assert.deepEqual(prepare(settings(pipeline), { env: false }).warnings, [
    "DOMAIN.summary.datasource.aggregation.pipeline[0].$project.u: $toUUID runs on MongoDB " +
    "only: on the embedded store the endpoint answers 400",
  ]);
  // With MongoDB the server judges every name, typos included.
  const mongo = { STORE: "mongo", MONGO_URI: "mongodb://127.0.0.1:1/db" };
  assert.deepEqual(prepare(settings(pipeline, mongo), { env: false }).warnings, []);
  assert.deepEqual(problemsOf(settings([{ $project: { u: { $toUUUID: "$s" } } }], mongo)), []);
});

Deno.test("pipeline operators: server-side JavaScript is refused by name", () => {
  const problems = problemsOf(settings([
    { $project: { f: { $function: { body: "function () { return 1 }", args: [], lang: "js" } } } },
  ]));
  assert.deepEqual(problems, [
    "DOMAIN.summary.datasource.aggregation.pipeline[0].$project.f: $function runs server-side " +
    "JavaScript, which this service does not",
  ]);
});

Deno.test("aggregation options: MongoDB's are checked, an unknown one is named", () => {
  const raw = (options: unknown) => ({
    STORE: "embedded",
    DOMAIN: {
      rows: { schema: { a: { type: "integer" } } },
      summary: {
        datasource: { source: "rows", aggregation: { pipeline: [{ $match: {} }], options } },
      },
    },
  });
  const at = "DOMAIN.summary.datasource.aggregation.options";
  assert.deepEqual(
    problemsOf(raw({ let: { min: 2 }, allowDiskUse: true, collation: { locale: "fr" } })),
    [],
  );
  assert.deepEqual(problemsOf(raw({ alowDiskUse: true, maxTimeMS: -1, constructor: 1 })), [
    `${at}.alowDiskUse: unknown aggregate option (did you mean allowDiskUse?)`,
    `${at}.maxTimeMS: must be a whole number of 0 or more`,
    `${at}.constructor: unknown aggregate option (did you mean collation?)`,
  ]);
  assert.deepEqual(problemsOf(raw(5)), [`${at}: must be an object`]);
});
