/**
 * Generated settings: random mutations (seeded) of a full settings object, as users write
 * them by hand, are either accepted or refused with a SettingsError listing problems; never
 * another error (a TypeError from a value of the wrong shape).
 */
import assert from "node:assert/strict";
import { prepare, SettingsError } from "../../src/mod.ts";
import { fuzzSeed, pick, random } from "../support/random.ts";

const BASE = {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  PAGINATION_LIMIT: 50,
  PAGINATION_DEFAULT: 25,
  DATE_FORMAT: "%a, %d %b %Y %H:%M:%S GMT",
  X_DOMAINS: ["https://ok.example"],
  AUTH_SCHEMES: ["basic"],
  AUTH_USERS: [{ username: "root", password: "x".repeat(60), roles: ["admin"] }],
  OPLOG: true,
  RATE_LIMIT_GET: [100, 60],
  DOMAIN: {
    people: {
      url: "people",
      additional_lookup: { url: 'regex("[a-z]+")', field: "name" },
      soft_delete: true,
      versioning: true,
      allowed_roles: ["admin"],
      mongo_indexes: { name_1: [["name", 1]] },
      datasource: {
        projection: { name: 1, age: 1, tags: 1, address: 1 },
        default_sort: [["age", 1]],
      },
      schema: {
        name: { type: "string", unique: true, minlength: 1, maxlength: 50, regex: "^[a-z]+$" },
        age: { type: "integer", min: 0, max: 150, default: 3 },
        tags: { type: "list", schema: { type: "string", allowed: ["a", "b"] } },
        address: { type: "dict", schema: { city: { type: "string", required: true } } },
        friend: { type: "objectid", data_relation: { resource: "people", embeddable: true } },
      },
    },
    picked: {
      datasource: { source: "people", aggregation: { pipeline: [{ $match: { age: "$age" } }] } },
    },
  },
};

const ODD: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  "",
  "x",
  "$gt",
  "__proto__",
  "people",
  "GET",
  [],
  [null],
  ["x"],
  [[]],
  {},
  { a: 1 },
  { type: "string" },
  { resource: "nowhere" },
  { $gt: 1 },
  'regex("(")',
  "%Q",
  [["age", 2]],
  { __proto__: 1 },
];

/** Every path to a value in `v` (objects and arrays), the root excluded. */
function paths(v: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (v === null || typeof v !== "object") return [];
  const out: Array<Array<string | number>> = [];
  for (const [k, child] of Object.entries(v)) {
    const path = [...at, Array.isArray(v) ? Number(k) : k];
    out.push(path, ...paths(child, path));
  }
  return out;
}

/** Sets (or, one time in five, deletes) the value at `path`. */
function mutate(root: Record<string, unknown>, path: Array<string | number>, rnd: () => number) {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (rnd() < 0.2 && !Array.isArray(node)) delete node[last];
  else node[last] = structuredClone(pick(rnd, ODD));
}

Deno.test("generated settings are accepted or refused with a SettingsError, never a crash", () => {
  const seed = fuzzSeed();
  const rounds = Number(Deno.env.get("FUZZ_REQUESTS") ?? 300);
  const rnd = random(seed);
  const all = paths(BASE);
  let refused = 0;
  for (let i = 0; i < rounds; i++) {
    const settings = structuredClone(BASE) as Record<string, unknown>;
    const count = 1 + Math.floor(rnd() * 3);
    for (let m = 0; m < count; m++) {
      // Paths come from the unmutated settings: one may have gone with an earlier mutation.
      try {
        mutate(settings, pick(rnd, all), rnd);
      } catch { /* the parent was replaced */ }
    }
    if (rnd() < 0.1) settings[`PAGINATON_${i}`] = 1;
    try {
      prepare(settings, { env: false });
    } catch (error) {
      if (!(error instanceof SettingsError)) {
        assert.fail(`round ${i} (seed ${seed}): ${String(error)}\n${JSON.stringify(settings)}`);
      }
      assert.ok(error.problems.length > 0);
      refused++;
    }
  }
  assert.ok(refused > rounds / 4, `only ${refused} of ${rounds} refused: the mutations miss`);
});
