import { startService } from "../tests/support/harness.ts";
const settings = JSON.parse(Deno.readTextFileSync(Deno.args[0]));
const r = await startService(settings, "embedded");
try {
  const script = Deno.readTextFileSync(Deno.args[1]);
  const fn = new Function("api", "r", `return (async () => { ${script} })()`);
  await fn(r.api, r);
} finally { await r.stop(); }
