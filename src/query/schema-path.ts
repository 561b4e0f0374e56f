/**
 * Resolution of dotted field paths (`address.city`, `tags.0`, `rows.qty`) against a
 * resource schema, walking `dict` schemas and `list` member schemas.
 */
import type { FieldSchema, ResourceSchema } from "../domain/types.ts";

/** Result of resolving a path: the field's rules, `"free"` (inside a schemaless dict), or null. */
export type ResolvedField = FieldSchema | "free" | null;

/** Finds the rules of a dotted `path` in `schema`; null when the path is not declared. */
export function resolveField(schema: ResourceSchema, path: string): ResolvedField {
  const parts = path.split(".");
  let rules: FieldSchema | undefined = own(schema, parts[0]);
  for (let i = 1; i < parts.length; i++) {
    if (!rules) return null;
    const part = parts[i];
    if (rules.type === "list") {
      const member = listMember(rules);
      if (!member) return "free";
      // `tags.0` addresses a member; `rows.qty` reaches into dict members.
      rules = /^\d+$/.test(part) ? member : childOf(member, part);
    } else {
      rules = childOf(rules, part);
    }
    if (rules === FREE) return "free";
  }
  return rules ?? null;
}

/** Member rules of a list field (`schema` holding one rule set), if declared. */
export function listMember(rules: FieldSchema): FieldSchema | undefined {
  const s = rules.schema;
  return isRules(s) && typeof (s as FieldSchema).type === "string" ? s as FieldSchema : undefined;
}

const FREE: FieldSchema = {};

function childOf(rules: FieldSchema, key: string): FieldSchema | undefined {
  if (rules.type === "list") {
    const member = listMember(rules);
    return member ? childOf(member, key) : FREE;
  }
  if (rules.type !== undefined && rules.type !== "dict") return undefined;
  if (isRules(rules.schema)) {
    const child = own(rules.schema as ResourceSchema, key);
    if (child) return child;
    return rules.allow_unknown === true ? FREE : undefined;
  }
  if (isRules(rules.valuesrules)) return rules.valuesrules as FieldSchema;
  return FREE;
}

function own(schema: ResourceSchema, key: string): FieldSchema | undefined {
  return Object.hasOwn(schema, key) && isRules(schema[key]) ? schema[key] : undefined;
}

function isRules(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
