/** Test support: reading and validating the service's OpenAPI description. */
import assert from "node:assert/strict";
import { Validator } from "./test_deps.ts";
import type { Client, Json } from "./client.ts";

/** The description a service serves at `path`, checked valid against the OpenAPI 3.1 schema. */
export async function validDescription(api: Client, path = "openapi.json"): Promise<Json> {
  const res = await api.get(path);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get("content-type"), "application/json");
  const doc = res.body;
  assert.equal(doc.openapi, "3.1.0");
  const result = await new Validator().validate(structuredClone(doc));
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  return doc;
}

const VERBS = ["get", "head", "post", "put", "patch", "delete"];

/** Every operation of a description as `"GET /people/{_id}"`, sorted. */
export function operations(doc: Json): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const verb of VERBS) if (item[verb]) out.push(`${verb.toUpperCase()} ${path}`);
  }
  return out.sort();
}

/** Resolves a local `$ref` (`#/components/...`) of `doc`; other values are returned as they are. */
export function deref(doc: Json, value: Json): Json {
  if (!value || typeof value.$ref !== "string") return value;
  return value.$ref.slice(2).split("/").reduce((at: Json, key: string) => at[key], doc);
}

/** The parameters of an operation, references resolved, by `in` and name: `"query where"`. */
export function parameters(doc: Json, op: Json): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const p of op.parameters ?? []) {
    const param = deref(doc, p);
    out.set(`${param.in} ${param.name}`, param);
  }
  return out;
}
