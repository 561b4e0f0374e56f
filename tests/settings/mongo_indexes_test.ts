/**
 * `mongo_indexes` is read as Eve reads it (keys, or keys and options) and checked before the
 * service starts: every problem is listed, an unknown option with the name it is nearest to.
 */
import assert from "node:assert/strict";
import { prepare, SettingsError } from "../../src/mod.ts";

function problemsOf(indexes: unknown): string[] {
  try {
    prepare({
      STORE: "embedded",
      DOMAIN: { people: { schema: { email: { type: "string" } }, mongo_indexes: indexes } },
    }, { env: false });
    return [];
  } catch (error) {
    assert.ok(error instanceof SettingsError, String(error));
    return error.problems;
  }
}

Deno.test("mongo_indexes: keys alone, or keys and MongoDB's options, are accepted", () => {
  assert.deepEqual(
    problemsOf({
      email_1: [["email", 1]],
      seen_ttl: [[["seen", -1]], { expireAfterSeconds: 3600 }],
      code: [[["code", 1]], { unique: true, sparse: true, collation: { locale: "fr" } }],
      loc: [["loc", "2dsphere"], ["kind", 1]],
      spot: [[["spot", "2d"]], { bits: 26, min: -500, max: 500 }],
      words: [[["title", "text"], ["body", "text"]], { weights: { title: 3 } }],
      shard: [["owner", "hashed"]],
      everything: [["$**", 1]],
    }),
    [],
  );
});

Deno.test("mongo_indexes: every problem is listed, with its index", () => {
  const at = "DOMAIN.people.mongo_indexes";
  assert.deepEqual(
    problemsOf({
      typo: [[["email", 1]], { uniqe: true }],
      kind: [["email", "ascending"]],
      pair: [["email"]],
      operator: [["$where", 1]],
      twice: [["email", 1], ["email", -1]],
      flag: [[["email", 1]], { unique: "yes" }],
      ttl: [[["a", 1], ["b", 1]], { expireAfterSeconds: 60 }],
      negative: [[["seen", 1]], { expireAfterSeconds: -1 }],
      empty: [],
      title: [["title", "text"]],
      body: [["body", "text"]],
    }),
    [
      `${at}.typo: unknown index option "uniqe" (did you mean unique?)`,
      `${at}.kind: the key "email" has the kind "ascending" (1, -1, "2d", "2dsphere", "text" or "hashed")`,
      `${at}.pair: ["email"] is not a [field, kind] pair`,
      `${at}.operator: "$where" is not a field name`,
      `${at}.twice: the key "email" is given twice`,
      `${at}.flag: the option "unique" must be a boolean`,
      `${at}.ttl: a TTL index (expireAfterSeconds) has one ascending or descending key`,
      `${at}.negative: expireAfterSeconds must be a whole number of 0 or more`,
      `${at}.empty: must be a list of [field, kind] pairs, or that list and an object of options`,
      `${at}: a collection has at most one text index (title, body)`,
    ],
  );
  assert.deepEqual(problemsOf([["email", 1]]), [`${at}: must be an object`]);
});

Deno.test("mongo_indexes: prototype names are unknown options, not a crash", () => {
  assert.deepEqual(problemsOf({ a: [[["email", 1]], { constructor: true }] }), [
    'DOMAIN.people.mongo_indexes.a: unknown index option "constructor" (did you mean collation?)',
  ]);
});
