import { parseExpression } from "/work/wt/eve-a/src/query/expression.ts";
for (const e of ["a == process.exit(1)", "ref == abc", "role == agent and x.y == z.w"]) {
try { console.log(JSON.stringify(parseExpression(e, {parseDate: () => null, dateFormat: "", maxDepth: 32}))); } catch (err) { console.log(String(err)); }
}
