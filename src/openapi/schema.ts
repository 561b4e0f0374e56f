/**
 * Translates a resource's compiled validation schema (the JSON Schema the validator gives
 * ajv, with its `eve*` keywords, and the field tree beside it: see
 * `CompiledSchema.model()`) into OpenAPI 3.1 (JSON Schema 2020-12) schemas for requests and
 * responses. The one place that knows both vocabularies: when the domain gets a compiled
 * schema model of its own, only this module changes.
 */
import type { DataRelation } from "../domain/types.ts";
import type { DictNode, FieldNode } from "../validation/compiler.ts";
import { GEO_TYPES } from "../validation/mod.ts";
import { setOwn } from "../domain/keys.ts";

/** A JSON Schema object. */
export type Json = Record<string, unknown>;

/**
 * What the schema is for: a create or replace body (`input`), a PATCH body (`patch`: nothing
 * required), or a stored document as answered (`output`).
 */
export type Mode = "input" | "patch" | "output";

/** How a media field looks in answers (RETURN_MEDIA_AS_URL, EXTENDED_MEDIA_INFO ...). */
export interface MediaOutput {
  asUrl: boolean;
  asBase64: boolean;
  /** EXTENDED_MEDIA_INFO names: the field becomes `{file, <name>...}`. */
  info: string[];
}

export interface TranslateOptions {
  mode: Mode;
  /**
   * Request bodies only: where media fields go. `binary` for multipart bodies, `omit` for
   * JSON bodies (files can't travel in JSON).
   */
  media?: "binary" | "omit";
  mediaOutput: MediaOutput;
  /** Data relations by dotted field path (list members share their list's path). */
  relations: Readonly<Record<string, DataRelation>>;
  /** The item schema reference of an embeddable relation's target, or null (answers only). */
  embeddedRef(resource: string): string | null;
  /** DATE_FORMAT, named in the description of date fields. */
  dateFormat: string;
}

type Node = FieldNode | undefined;

const LENGTHS: Record<string, [string, string]> = {
  string: ["minLength", "maxLength"],
  list: ["minItems", "maxItems"],
  dict: ["minProperties", "maxProperties"],
};
const COPIED = ["minimum", "maximum", "enum", "title", "description"];

/**
 * The object schema of a resource's documents: `properties` translated, `required` kept
 * for `input` only. Fields the options leave out (media in JSON bodies) are dropped.
 */
export function documentSchema(
  model: { json: Readonly<Json>; root: DictNode },
  options: TranslateOptions,
): Json {
  return new Translator(options).dict(model.json, model.root, "");
}

class Translator {
  constructor(private readonly options: TranslateOptions) {}

  /** A dict level: `properties`, `required`, unknown fields. */
  dict(json: Readonly<Json>, node: DictNode | undefined, path: string): Json {
    const out: Json = { type: "object" };
    const properties: Json = {};
    const props = (json.properties ?? {}) as Record<string, Json>;
    for (const [name, wrapper] of Object.entries(props)) {
      const field = path ? `${path}.${name}` : name;
      const schema = this.field(wrapper, node?.fields.get(name), field);
      if (schema !== null) setOwn(properties, name, schema);
    }
    if (Object.keys(properties).length) out.properties = properties;
    const required = ((json.required ?? []) as string[]).filter((n) =>
      Object.hasOwn(properties, n)
    );
    if (this.options.mode === "input" && required.length) out.required = required;
    const extra = json.additionalProperties;
    if (extra === false) {
      // A purging dict drops unknown names from requests instead of refusing them.
      if (this.options.mode !== "output" && !node?.purge) out.additionalProperties = false;
    } else if (isObject(extra)) {
      const unknown = node?.unknown;
      const schema = this.field(extra, typeof unknown === "object" ? unknown : undefined, path);
      if (schema !== null) out.additionalProperties = schema;
    }
    return out;
  }

  /**
   * A field: the compiler wraps its rules as `if null then (nullable) else rules`. Null when
   * the field is left out.
   */
  private field(wrapper: Readonly<Json>, node: Node, path: string): Json | null {
    const rules = isObject(wrapper.else) ? wrapper.else : wrapper;
    const nullable = wrapper.then === true;
    if (node?.rename !== undefined || node?.renameHandler) {
      // Only requests carry it: its value is stored under the new name.
      if (this.options.mode === "output") return null;
      const description = node.rename !== undefined
        ? `Stored as '${node.rename}'.`
        : `Renamed by ${chainNames(node.renameHandler!)} first.`;
      return { writeOnly: true, description };
    }
    if (node?.coerce?.length && this.options.mode !== "output") {
      // A request may send any value: the coercers make it what the rules then check.
      return {
        description: `Coerced by ${chainNames(node.coerce)} before the field's rules apply.`,
      };
    }
    const types = (rules.eveType ?? []) as string[];
    if (types.length && types.every((t) => t === "media")) {
      if (this.options.mode !== "output" && this.options.media !== "binary") return null;
    }
    let schema = this.rules(rules, node, path);
    const relation = node?.relation ?? this.options.relations[path];
    if (relation) schema = this.relation(schema, relation);
    if (node?.default !== undefined && this.options.mode !== "output") {
      schema.default = node.default.value;
    }
    if (node?.readonly) schema.readOnly = true;
    if (nullable) schema = orNull(schema);
    return schema;
  }

  /** A rule set (no null wrapper): types, bounds, nested fields, *of branches. */
  private rules(rules: Readonly<Json>, node: Node, path: string): Json {
    const types = (rules.eveType ?? []) as string[];
    const typed = types.map((t) => this.type(t));
    const out: Json = typed.length === 1 ? { ...typed[0] } : typed.length ? { anyOf: typed } : {};
    // Bounds: JSON Schema's keywords are per instance type; keep the ones the types can use.
    for (const [type, keys] of Object.entries(LENGTHS)) {
      if (types.length && !types.includes(type)) continue;
      if (rules[keys[0]] !== undefined) out[keys[0]] = rules[keys[0]];
      if (rules[keys[1]] !== undefined) out[keys[1]] = rules[keys[1]];
    }
    for (const key of COPIED) if (rules[key] !== undefined) out[key] = rules[key];
    if (rules.eveNotEmpty) {
      for (const [type, keys] of Object.entries(LENGTHS)) {
        if (types.includes(type) && out[keys[0]] === undefined) out[keys[0]] = 1;
      }
    }
    const regex = rules.eveRegex as { source: string; flags: string; shown: string } | undefined;
    if (regex) {
      // ECMAScript has no inline flags: a pattern with flags is only described.
      if (regex.flags === "") out.pattern = regex.source;
      else appendDescription(out, `matches ${regex.shown}`);
    }
    if (Array.isArray(rules.eveForbidden)) out.not = { enum: rules.eveForbidden };
    const all: Json[] = [];
    if (Array.isArray(rules.eveContains)) {
      for (const value of rules.eveContains) all.push({ contains: { const: value } });
    }
    if (isObject(rules.properties) || isObject(rules.additionalProperties)) {
      const dict = this.dict(rules, node?.dict, path);
      delete dict.type;
      Object.assign(out, dict);
    } else if (rules.additionalProperties === false && this.options.mode !== "output") {
      out.additionalProperties = false;
    }
    if (isObject(rules.patternProperties) && isObject(rules.patternProperties[""])) {
      const values = this.field(rules.patternProperties[""] as Json, node?.values, path);
      if (values !== null) out.additionalProperties = values;
    }
    if (isObject(rules.propertyNames)) {
      out.propertyNames = this.rules(rules.propertyNames, undefined, path);
    }
    this.items(rules, { node, path, out });
    if (Array.isArray(rules.eveAllowedMembers)) {
      out.items = { ...(out.items as Json | undefined), enum: rules.eveAllowedMembers };
    }
    for (const key of ["anyOf", "oneOf"]) {
      if (Array.isArray(rules[key])) {
        const branches = (rules[key] as Json[]).map((b) => this.rules(b, undefined, path));
        if (out[key]) all.push({ [key]: branches });
        else out[key] = branches;
      }
    }
    if (Array.isArray(rules.allOf)) {
      for (const b of rules.allOf as Json[]) all.push(this.rules(b, undefined, path));
    }
    if (isObject(rules.not) && Array.isArray(rules.not.anyOf)) {
      const branches = (rules.not.anyOf as Json[]).map((b) => this.rules(b, undefined, path));
      all.push({ not: { anyOf: branches } });
    }
    if (all.length) out.allOf = all;
    this.dependencies(rules, out);
    return out;
  }

  /** List members (`schema` of a list) and fixed positions (`items` rule). */
  private items(rules: Readonly<Json>, at: { node: Node; path: string; out: Json }) {
    const { node, path, out } = at;
    if (isObject(rules.items)) {
      const member = this.field(rules.items, node?.member, path);
      if (member !== null) out.items = member;
    } else if (Array.isArray(rules.items)) {
      out.prefixItems = (rules.items as Json[]).map((w, i) =>
        this.field(w, node?.items?.[i], path) ?? {}
      );
      out.minItems = out.maxItems = rules.items.length;
    }
  }

  /** Eve's `dependencies` (which may name values and other levels): described. */
  private dependencies(rules: Readonly<Json>, out: Json) {
    const deps = rules.eveDependencies as
      | Array<{ path: string[]; root: boolean; name: string; values?: unknown[] }>
      | undefined;
    if (!deps?.length) return;
    const names = deps.map((d) => d.name);
    appendDescription(out, `needs ${names.join(", ")}`);
  }

  /** The schema of one type name. */
  private type(name: string): Json {
    const o = this.options;
    switch (name) {
      case "string":
        return { type: "string" };
      case "integer":
        return { type: "integer" };
      case "float":
      case "number":
        return { type: "number" };
      case "boolean":
        return { type: "boolean" };
      case "list":
        return { type: "array" };
      case "dict":
        return { type: "object" };
      case "datetime":
      case "date":
        return { type: "string", description: `a date in DATE_FORMAT "${o.dateFormat}"` };
      case "objectid":
        return { type: "string", pattern: "^[0-9a-fA-F]{24}$" };
      case "decimal128":
      case "decimal":
        return o.mode === "output"
          ? { type: "string", description: "a decimal number" }
          : { type: ["string", "number"], description: "a decimal number" };
      case "uuid":
        return { type: "string", format: "uuid" };
      case "dbref":
        return {
          type: "object",
          properties: {
            $ref: { type: "string" },
            $id: { type: ["string", "number"] },
            $db: { type: "string" },
          },
          required: ["$ref", "$id"],
        };
      case "media":
        return o.mode === "output"
          ? mediaOutput(o.mediaOutput)
          : { type: "string", format: "binary", contentMediaType: "application/octet-stream" };
    }
    const geo = GEO_TYPES[name];
    if (geo) {
      return {
        type: "object",
        description: `GeoJSON ${geo}`,
        properties: { type: { const: geo } },
        required: ["type"],
      };
    }
    return { description: `custom type ${name}` };
  }

  /** A data relation: the referenced value, or in answers the embedded document too. */
  private relation(schema: Json, relation: DataRelation): Json {
    const out = { ...schema };
    appendDescription(
      out,
      `${relation.field} of a ${relation.resource} document` +
        (relation.version ? " and its version" : ""),
    );
    if (this.options.mode !== "output" || !relation.embeddable) return out;
    const ref = this.options.embeddedRef(relation.resource);
    if (!ref) return out;
    // Embedded, a reference to a document that is gone (or not readable) becomes null.
    return {
      anyOf: [out, { $ref: ref }, { type: "null" }],
      description: `embeddable: ${relation.resource} (null when embedded and not found)`,
    };
  }
}

function mediaOutput(m: MediaOutput): Json {
  const file: Json = m.asUrl
    ? { type: "string", format: "uri-reference", description: "URL of the file" }
    : m.asBase64
    ? { type: "string", contentEncoding: "base64", description: "the file, Base64" }
    : { type: "null", description: "file content omitted (RETURN_MEDIA_AS_BASE64_STRING)" };
  if (!m.info.length) return file;
  const properties: Json = { file };
  for (const name of m.info) properties[name] = {};
  return { type: "object", properties };
}

/** `schema` or null. */
export function orNull(schema: Json): Json {
  if (Array.isArray(schema.enum)) schema = { ...schema, enum: [...schema.enum, null] };
  if (typeof schema.type === "string" && !schema.anyOf && !schema.$ref) {
    return { ...schema, type: [schema.type, "null"] };
  }
  if (Array.isArray(schema.type) && !schema.anyOf && !schema.$ref) {
    return schema.type.includes("null") ? schema : { ...schema, type: [...schema.type, "null"] };
  }
  return { anyOf: [schema, { type: "null" }] };
}

function appendDescription(schema: Json, text: string) {
  schema.description = schema.description ? `${schema.description}; ${text}` : text;
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The names of a chain of coercers, as the description shows them (`'int' then 'positive'`). */
function chainNames(coercers: ReadonlyArray<{ name: string }>): string {
  return coercers.map((c) => `'${c.name}'`).join(" then ");
}
