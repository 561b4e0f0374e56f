// Node: node node_runner.mjs <baseUrl> <tag>, from the directory holding client.mjs.
import { smoke } from "./smoke.mjs";

const [baseUrl, tag] = process.argv.slice(2);
console.log(JSON.stringify(await smoke(baseUrl, tag)));
