import assert from "node:assert/strict";
import { parseWhere } from "../../src/query/where.ts";
import { QueryError } from "../../src/query/errors.ts";
import { opts } from "./helpers.ts";

function refused(where: unknown, pattern: RegExp, o = opts()): void {
  const raw = typeof where === "string" ? where : JSON.stringify(where);
  const t0 = performance.now();
  assert.throws(() => parseWhere(raw, o), (e: unknown) => {
    assert.ok(e instanceof QueryError, `expected QueryError for ${raw}, got ${e}`);
    assert.equal(e.status, 400);
    assert.match(e.message, pattern);
    return true;
  });
  assert.ok(performance.now() - t0 < 100, "refused quickly");
}

const expr = (e: unknown) => ({ $expr: e });

Deno.test("sandbox: ordinary $expr passes", () => {
  const ok = [
    expr({ $gt: ["$age", 3] }),
    expr({ $eq: [{ $size: { $range: [0, 10] } }, 10] }),
    expr({ $in: ["a", { $map: { input: "$tags", in: { $toLower: "$$this" } } }] }),
    expr({
      $gt: [{
        $reduce: {
          input: { $range: [0, 100] },
          initialValue: 0,
          in: { $add: ["$$value", "$$this"] },
        },
      }, 1],
    }),
    expr({ $let: { vars: { x: 1 }, in: { $eq: ["$$x", { $literal: { $function: 1 } }] } } }),
  ];
  for (const w of ok) parseWhere(JSON.stringify(w), opts());
});

Deno.test("sandbox: operators outside the allowlist are refused by name", () => {
  refused(expr({ $function: { body: "x", args: [], lang: "js" } }), /\$function is not allowed/);
  refused(expr({ $accumulator: {} }), /\$accumulator/);
  refused(expr({ $eq: [{ $madeUp: 1 }, 1] }), /operator \$madeUp is not allowed in \$expr/);
  refused({ name: { $madeUp: 1 } }, /unknown operator \$madeUp/);
  refused({ loc: { $near: { $evil: 1 } } }, /unknown operator \$evil/);
});

Deno.test("sandbox: regex expression operators count as $regex", () => {
  for (const op of ["$regexMatch", "$regexFind", "$regexFindAll"]) {
    const w = expr({ [op]: { input: "$name", regex: "^(a+)+$" } });
    refused(w, new RegExp(`\\${op} is not allowed`));
    parseWhere(JSON.stringify(w), opts({ blacklist: ["$where"] }));
  }
});

Deno.test("sandbox: $range is bounded and needs literal bounds", () => {
  refused(expr({ $gt: [{ $size: { $range: [0, 1_000_000] } }, 0] }), /QUERY_MAX_RANGE/);
  refused(expr({ $gt: [{ $size: { $range: [0, "$age"] } }, 0] }), /literal integer bounds/);
  refused(
    expr({
      $gt: [{
        $reduce: { input: { $range: [0, 1e6] }, initialValue: 0, in: { $add: ["$$value", 1] } },
      }, 0],
    }),
    /QUERY_MAX_RANGE/,
  );
  parseWhere(
    JSON.stringify(expr({ $gt: [{ $size: { $range: [0, 5000] } }, 0] })),
    opts({ expressionLimits: { maxRange: 5000, maxElements: 100_000 } }),
  );
});

Deno.test("sandbox: nesting that multiplies is refused", () => {
  refused(
    expr({
      $gt: [{ $size: { $map: { input: { $range: [0, 500] }, in: { $range: [0, 1000] } } } }, 0],
    }),
    /QUERY_EXPR_MAX_ELEMENTS/,
  );
  refused(
    expr({
      $gt: [{ $size: { $map: { input: "$tags", in: { $concatArrays: ["$tags", "$tags"] } } } }, 0],
    }),
    /QUERY_EXPR_MAX_ELEMENTS/,
  );
  refused(
    expr({
      $gt: [{
        $size: {
          $reduce: {
            input: { $range: [0, 100] },
            initialValue: [1],
            in: { $concatArrays: ["$$value", "$$value"] },
          },
        },
      }, 0],
    }),
    /\$\$value may be used only once/,
  );
  refused(
    expr({
      $gt: [{
        $strLenCP: {
          $reduce: {
            input: { $range: [0, 100] },
            initialValue: "ab",
            in: { $replaceAll: { input: "$$value", find: "a", replacement: "aa" } },
          },
        },
      }, 0],
    }),
    /\$\$value may not be multiplied/,
  );
});

Deno.test("regex: $regex patterns must be linear-time", () => {
  const o = opts({ blacklist: [] });
  assert.deepEqual(parseWhere('{"name": {"$regex": "^(a+)+$"}}', o), {
    name: { $regex: "^(a+)+$" },
  });
  refused(
    '{"name": {"$regex": "(a)\\\\1"}}',
    /\$regex on 'name': unsupported regular expression/,
    o,
  );
  refused('{"name": {"$regex": "(?=a)"}}', /unsupported regular expression/, o);
  refused('{"name": {"$regex": "a", "$options": "x"}}', /unsupported regex option 'x'/, o);
  refused('{"name": {"$options": "i"}}', /\$options on 'name' needs \$regex/, o);
  parseWhere('{"name": {"$regex": "^A", "$options": "im"}}', o);
});
