/**
 * The layering of `src/`: every file's imports point down the layer order (README
 * "Architecture"), and no file imports itself back through others (no cycles). A failure
 * names the offending edge (importer -> imported) or the files of the cycle.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";

const SRC = normalize(join(dirname(new URL(import.meta.url).pathname), "..", "src"));

/**
 * The layers, top first: a file may import files of its own layer or of a lower one. A
 * layer is a folder of `src/` (or a top-level file).
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["main.ts", "mod.ts"],
  // The typed client stands alone (see the test below): it is in the top layer only so
  // that mod.ts may re-export it.
  ["client"],
  ["http"],
  ["routes", "openapi"],
  ["auth"],
  ["services"],
  ["query", "validation", "render", "ratelimit", "metrics", "events.ts"],
  ["domain"],
  ["store"],
  ["settings", "log.ts"],
  // Documents and queries in MongoDB dialect (types, BSON values, the matcher, the clone):
  // the vocabulary of every layer above, tied to no store.
  ["doc"],
  ["util"],
];

/** The layer index of a `src/`-relative path (0 is the top). */
function layerOf(path: string): number {
  const unit = path.split("/")[0];
  const index = LAYERS.findIndex((layer) => layer.includes(unit));
  assert.notEqual(index, -1, `${path}: ${unit} is in no layer of tests/architecture_test.ts`);
  return index;
}

/** Every `.ts` file under `dir`, `src/`-relative. */
function sourceFiles(dir = SRC): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...sourceFiles(path));
    else if (entry.name.endsWith(".ts")) out.push(relative(SRC, path));
  }
  return out.sort();
}

/** Static, re-export, side-effect and dynamic imports with a relative specifier. */
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["'](\.[^"']+)["']|(?:^|\n)\s*import\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;

/** The `src/`-relative files `file` imports. */
export function importsOf(file: string, text: string): string[] {
  const out = new Set<string>();
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    out.add(relative(SRC, normalize(join(SRC, dirname(file), specifier))));
  }
  return [...out].sort();
}

/** The import graph of `src/`: file -> the files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles()) {
    graph.set(file, importsOf(file, Deno.readTextFileSync(join(SRC, file))));
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), each sorted. */
export function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    const selfLoop = (graph.get(node) ?? []).includes(node);
    if (component.length > 1 || selfLoop) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

Deno.test("architecture: every import of src/ resolves to a file of src/", () => {
  const graph = importGraph();
  const missing = [...graph].flatMap(([file, imports]) =>
    imports.filter((to) => !graph.has(to)).map((to) => `${file} -> ${to}`)
  );
  assert.deepEqual(missing, []);
});

Deno.test("architecture: no file imports from a higher layer", () => {
  const upward: string[] = [];
  for (const [file, imports] of importGraph()) {
    for (const to of imports) {
      if (layerOf(to) < layerOf(file)) upward.push(`${file} -> ${to}`);
    }
  }
  assert.deepEqual(upward, [], "imports that point up the layer order (README Architecture)");
});

Deno.test("architecture: src/client imports nothing outside src/client", () => {
  // The client runs in browsers and Node too: no server code, no Deno API, no packages.
  const outside: string[] = [];
  for (const [file, imports] of importGraph()) {
    if (!file.startsWith("client/")) continue;
    for (const to of imports) if (!to.startsWith("client/")) outside.push(`${file} -> ${to}`);
    const text = Deno.readTextFileSync(join(SRC, file));
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']([^".'][^"']*)["']/g)) {
      outside.push(`${file} -> ${match[1]}`);
    }
    if (/\bDeno\./.test(text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ""))) {
      outside.push(`${file} -> Deno`);
    }
  }
  assert.deepEqual(outside, [], "the client must stay standalone");
});

/** The imports of `src/` that cross one of the boundaries below, as `importer -> imported`. */
function crossing(from: (file: string) => boolean, to: (file: string) => boolean): string[] {
  const found: string[] = [];
  for (const [file, imports] of importGraph()) {
    if (!from(file)) continue;
    for (const target of imports) if (to(target)) found.push(`${file} -> ${target}`);
  }
  return found;
}

Deno.test("architecture: only the data layer reaches into a store", () => {
  // Code above the data layer sees the interface (store/store.ts); what a store is made of
  // (store/embedded/, store/mongo/) stays behind it.
  const inner = (file: string) => /^store\/(embedded|mongo)\//.test(file);
  assert.deepEqual(crossing((file) => !file.startsWith("store/"), inner), []);
});

Deno.test("architecture: the resource domain does not import the data layer", () => {
  assert.deepEqual(
    crossing((file) => file.startsWith("domain/"), (to) => to.startsWith("store/")),
    [],
  );
});

Deno.test("architecture: the OpenAPI document does not import the routes", () => {
  // Both are built from the domain's endpoint table (domain/endpoints.ts).
  assert.deepEqual(
    crossing((file) => file.startsWith("openapi/"), (to) => to.startsWith("routes/")),
    [],
  );
});

Deno.test("architecture: no import cycle between files", () => {
  assert.deepEqual(cycles(importGraph()), []);
});

Deno.test("architecture: the cycle finder and the import reader", () => {
  const graph = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]], ["e", ["e"]]]);
  assert.deepEqual(cycles(graph), [["a", "b", "c"], ["e"]]);
  assert.deepEqual(cycles(new Map([["a", ["b"]], ["b", []]])), []);
  const text = [
    'import { a } from "./a.ts";',
    'import type {\n  B,\n} from "../store/b.ts";',
    'export { c } from "./c.ts";',
    'import "./d.ts";',
    'const e = await import("./e.ts");',
    'import { f } from "npm-package";',
  ].join("\n");
  assert.deepEqual(importsOf("http/x.ts", text), [
    "http/a.ts",
    "http/c.ts",
    "http/d.ts",
    "http/e.ts",
    "store/b.ts",
  ]);
});
