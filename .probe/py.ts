import { readPythonSettings } from "../src/settings/python.ts";
const text = Deno.readTextFileSync(Deno.args[0]);
try { console.log(JSON.stringify(readPythonSettings(text, { env: Deno.env }), null, 1).slice(0, 1500)); } catch (e) { console.log(String(e)); }
