/**
 * Embedded resource serialization: `embedded={"author": 1}` replaces reference values
 * with the referenced documents. One query per relation per page, never one per document.
 */
import { HttpError } from "../http/errors.ts";
import { parseEmbedded } from "../query/paging.ts";
import { EJSON } from "../store/bson.ts";
import type { DataRelation, FieldSchema, ResourceSchema } from "../domain/types.ts";
import type { Doc } from "../store/store.ts";
import { andFilters, notDeleted } from "./filters.ts";
import type { RequestContext, Runtime } from "./runtime.ts";

/** The rules of the field at a dotted path, walking dict and list member schemas. */
export function fieldAt(schema: ResourceSchema, path: string): FieldSchema | undefined {
  let rules: FieldSchema | undefined;
  let current: ResourceSchema | undefined = schema;
  for (const segment of path.split(".")) {
    rules = current?.[segment];
    if (!rules) return undefined;
    current = nestedSchema(rules);
  }
  return rules;
}

function nestedSchema(rules: FieldSchema): ResourceSchema | undefined {
  const inner = rules.schema as FieldSchema | undefined;
  if (!inner) return undefined;
  // A list's `schema` holds member rules; a dict's holds field rules.
  if (rules.type === "list") return (inner.schema as ResourceSchema | undefined) ?? undefined;
  return inner as ResourceSchema;
}

/** The data relation a (possibly list) field points through, if any. */
export function relationOf(rules: FieldSchema): DataRelation | undefined {
  const direct = rules.data_relation as DataRelation | undefined;
  if (direct) return direct;
  const member = rules.type === "list" ? rules.schema as FieldSchema | undefined : undefined;
  return member?.data_relation as DataRelation | undefined;
}

/** Which fields a request embeds: defaults plus `{f: 1}`, minus `{f: 0}`. */
function requestedFields(rt: Runtime, ctx: RequestContext): string[] {
  const raw = ctx.query.get(rt.settings.QUERY_EMBEDDED);
  const { resource } = ctx;
  if (!resource.embedding) {
    if (raw !== null && raw !== "") {
      throw new HttpError(400, "embedding is disabled for this resource");
    }
    return [];
  }
  const asked = raw === null || raw === "" ? {} : parseEmbedded(raw);
  const fields = new Set(resource.embeddedFields);
  for (const [field, on] of Object.entries(asked)) {
    if (on) fields.add(field);
    else fields.delete(field);
  }
  return [...fields];
}

/** Calls `visit` with the container and key of every value at `path` (through lists). */
function eachSlot(
  node: unknown,
  segments: string[],
  visit: (holder: Doc | unknown[], key: string | number) => void,
) {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      if (segments.length === 0) visit(node, i);
      else eachSlot(node[i], segments, visit);
    }
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const [head, ...rest] = segments;
  const doc = node as Doc;
  if (!(head in doc)) return;
  if (rest.length === 0) {
    if (Array.isArray(doc[head])) eachSlot(doc[head], [], visit);
    else visit(doc, head);
  } else eachSlot(doc[head], rest, visit);
}

const keyOf = (value: unknown) => EJSON.stringify(value as Doc, { relaxed: false });

/** Expands the requested references in `docs`, in place. */
export async function embedDocuments(rt: Runtime, ctx: RequestContext, docs: Doc[]) {
  const fields = requestedFields(rt, ctx);
  for (const field of fields) {
    const rules = fieldAt(ctx.resource.schema, field);
    const relation = rules && relationOf(rules);
    if (!relation || !relation.embeddable) {
      throw new HttpError(400, `field "${field}" is not embeddable`);
    }
    const target = rt.domain.get(relation.resource);
    if (!target) continue;
    const relField = relation.field ?? target.idField;
    const slots: Array<[Doc | unknown[], string | number]> = [];
    const values = new Map<string, unknown>();
    for (const doc of docs) {
      eachSlot(doc, field.split("."), (holder, key) => {
        const value = (holder as Record<string | number, unknown>)[key];
        if (value === null || value === undefined) return;
        slots.push([holder, key]);
        values.set(keyOf({ v: value }), value);
      });
    }
    if (values.size === 0) continue;
    const filter = andFilters(
      target.filter,
      { [relField]: { $in: [...values.values()] } },
      target.softDelete ? notDeleted(rt) : undefined,
    );
    const found = await rt.store.collection(target.source).find(filter);
    const byKey = new Map(found.map((d) => [keyOf({ v: d[relField] }), d]));
    for (const [holder, key] of slots) {
      const h = holder as Record<string | number, unknown>;
      h[key] = byKey.get(keyOf({ v: h[key] })) ?? null;
    }
  }
}
