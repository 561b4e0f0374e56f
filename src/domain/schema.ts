/**
 * The compiled schema model of a resource: built once at start-up from its Eve/Cerberus
 * schema, frozen, and asked by everything that needs to know about fields (query checks,
 * embedding, media, links, versioning, the validation compiler). It resolves type aliases
 * once, and knows every field's nesting (dict fields, list members and items, value
 * rules), relation, default, nullability and read-only flag.
 *
 * It interprets well-formed rules only: malformed ones are left out here and reported, with
 * their path, by the validation compiler, which stops the start-up.
 */
import type { FieldType, TypeTable } from "./field-types.ts";
import { forbiddenSegment } from "./keys.ts";

/** One field rule set in the spec's (Eve/Cerberus) schema vocabulary. */
export type FieldSchema = Record<string, unknown>;

/** A resource schema: field name -> rules. */
export type ResourceSchema = Record<string, FieldSchema>;

export interface DataRelation {
  resource: string;
  field: string;
  embeddable: boolean;
  version: boolean;
}

/** One rule set of the schema: a field, a list member or item, value or key rules, a branch. */
export interface SchemaField {
  /** Dotted document path; list members and items share their list's path. */
  readonly path: string;
  /** The rules as written (shorthands expanded). */
  readonly rules: Readonly<FieldSchema>;
  /** Its known types, aliases resolved; empty when it names none. */
  readonly types: readonly FieldType[];
  /** A list whose `schema` holds its members' rules (a dict's holds its fields). */
  readonly isList: boolean;
  /** Outside rule branches, key and value rules: it may hold read-only, defaults, relations. */
  readonly plain: boolean;
  readonly nullable: boolean;
  readonly readonly: boolean;
  /**
   * A dict field the document must hold (POST and PUT): its own `required`, else its dict's
   * `require_all` (a field renamed to another name is not required by it).
   */
  readonly required: boolean;
  /** A dict field's `rename`: the name its value is moved to before anything else. */
  readonly rename?: string;
  /** A field of a dict (not a list's member or item, value or key rules, or a branch). */
  readonly inDict: boolean;
  readonly default?: { readonly value: unknown };
  /** Its own `data_relation`. */
  readonly relation?: DataRelation;
  /** `versioned: false` keeps the field out of stored versions. */
  readonly versioned: boolean;
  /** Fields of a dict (`schema`, or only `allow_unknown` rules). */
  readonly dict?: SchemaDict;
  /** Rules of a list's members (`schema`). */
  readonly member?: SchemaField;
  /** Rules of a list's members by position (`items`). */
  readonly items?: readonly SchemaField[];
  /** Rules of a dict's values (`valuesrules`). */
  readonly values?: SchemaField;
  /** Rules of a dict's keys (`keysrules`). */
  readonly keys?: SchemaField;
  /** The `anyof` / `oneof` / `allof` / `noneof` rules (and their `anyof_<rule>` forms). */
  readonly branches: readonly SchemaBranch[];
}

/** One `*of` rule: its kind and its alternative rule sets. */
export interface SchemaBranch {
  /** The rule as written (`anyof`, `oneof_type` ...). */
  readonly rule: string;
  readonly kind: "anyof" | "oneof" | "allof" | "noneof";
  /** One rule set per alternative; absent where the alternative is not an object. */
  readonly sets: readonly (SchemaField | undefined)[];
}

/** A dict level: its declared fields and what it does with other names. */
export interface SchemaDict {
  readonly fields: ReadonlyMap<string, SchemaField>;
  /** false: refused; true: kept unchecked; rules: checked by them. */
  readonly unknown: boolean | SchemaField;
  /**
   * `purge_unknown` where unknown names are refused: they are dropped instead (before the
   * document is validated).
   */
  readonly purge: boolean;
}

/** Where media values sit in a document: field names, `[]` for list members. */
export type MediaPath = readonly string[];

/** What a path resolves to: a field, `"free"` (inside a schemaless dict or list), or undefined. */
export type FieldAt = SchemaField | "free" | undefined;

/** The compiled schema of one resource. */
export interface SchemaModel {
  /** The document level: declared fields plus the id field (`objectid` unless declared). */
  readonly root: SchemaDict;
  /** The fields the service writes (`_created`, `_updated`, `_etag`, `_deleted`), typed. */
  readonly meta: ReadonlyMap<string, SchemaField>;
  /** Data relations by dotted path (list members through their list's path). */
  readonly relations: Readonly<Record<string, DataRelation>>;
  /** Where media values sit. */
  readonly mediaPaths: readonly MediaPath[];
  /** Top-level fields declared `versioned: false`. */
  readonly unversioned: readonly string[];
  /**
   * The field at a dotted path (`address.city`, `tags.0`, `rows.qty`): through dict fields,
   * list members (a number addresses a member), value rules and rules for unknown names.
   * `"free"` inside a dict or list that declares no rules; undefined when not declared.
   */
  fieldAt(path: string): FieldAt;
}

export interface SchemaModelOptions {
  types: TypeTable;
  /** ID_FIELD: typed `objectid` unless the schema declares it. */
  idField: string;
  /** Resource-level allow_unknown; nested dicts may set their own. */
  allowUnknown: boolean;
  /** The service-written fields and their type names. */
  metaFields?: Record<string, string>;
}

const OF_RULE = /^(anyof|oneof|allof|noneof)(?:_(.+))?$/;

/** Where a top-level rule set sits, before its own rules. */
const TOP = { purge: false, requireAll: false, inDict: false } as const;

interface Where {
  path: string;
  plain: boolean;
  allowUnknown: boolean;
  /** `purge_unknown` in effect (a dict's own, else the one above it). */
  purge: boolean;
  /** `require_all` in effect (a dict's own, else the one above it). */
  requireAll: boolean;
  /** A field of a dict (not a list's member or item, value or key rules, or a branch). */
  inDict: boolean;
}

/** Builds the frozen model of a resource schema (shorthands already expanded). */
export function buildSchemaModel(schema: ResourceSchema, options: SchemaModelOptions): SchemaModel {
  const { idField } = options;
  const declared = isRules(schema) ? schema : {};
  const withId = Object.hasOwn(declared, idField)
    ? declared
    : { ...declared, [idField]: { type: "objectid" } };
  const empty = Object.keys(declared).length === 0;
  const builder = new Builder(options.types, idField);
  const root = builder.dict(withId, {
    path: "",
    plain: true,
    allowUnknown: options.allowUnknown || empty,
    purge: false,
    requireAll: false,
    inDict: true,
  });
  const meta = new Map<string, SchemaField>();
  for (const [name, type] of Object.entries(options.metaFields ?? {})) {
    meta.set(
      name,
      builder.field({ type }, { ...TOP, path: name, plain: false, allowUnknown: false }),
    );
  }
  const mediaPaths: MediaPath[] = [];
  collectMedia(root, [], mediaPaths);
  const unversioned = [...root.fields.values()].filter((f) => !f.versioned).map((f) => f.path);
  return deepFreeze({
    root,
    meta,
    relations: builder.relations,
    mediaPaths,
    unversioned,
    fieldAt: (path: string) => fieldAt(root, meta, path),
  });
}

class Builder {
  readonly relations: Record<string, DataRelation> = {};

  constructor(private readonly types: TypeTable, private readonly idField: string) {}

  dict(fields: Record<string, unknown>, w: Where): SchemaDict {
    const out = new Map<string, SchemaField>();
    for (const [name, rules] of Object.entries(fields)) {
      if (name === "" || name.startsWith("$") || name.includes(".") || !isRules(rules)) continue;
      const path = w.path ? `${w.path}.${name}` : name;
      out.set(name, this.field(rules, { ...w, path, inDict: true }));
    }
    return { fields: out, unknown: w.allowUnknown, purge: w.purge && w.allowUnknown === false };
  }

  field(rules: FieldSchema, w: Where): SchemaField {
    const names = typeof rules.type === "string" ? [rules.type] : rules.type;
    const types = Array.isArray(names)
      ? names.map((n) => typeof n === "string" ? this.types.get(n) : undefined)
        .filter((t): t is FieldType => t !== undefined)
      : [];
    const bases = types.map((t) => t.base);
    const isList = bases.includes("list") && !bases.includes("dict");
    const allowUnknown = typeof rules.allow_unknown === "boolean"
      ? rules.allow_unknown
      : w.allowUnknown;
    // Cerberus's normalization rules apply to the dicts below the field (plain ones only).
    const purge = w.plain && typeof rules.purge_unknown === "boolean"
      ? rules.purge_unknown
      : w.purge;
    const requireAll = w.plain && typeof rules.require_all === "boolean"
      ? rules.require_all
      : w.requireAll;
    const rename = w.plain && w.inDict && isFieldName(rules.rename) ? rules.rename : undefined;
    const inner: Where = { ...w, allowUnknown, purge, requireAll, inDict: false };
    const branchOf: Where = { ...inner, plain: false };
    const field: {
      -readonly [K in keyof SchemaField]: SchemaField[K];
    } = {
      path: w.path,
      rules,
      types,
      isList,
      plain: w.plain,
      nullable: rules.nullable === true,
      readonly: w.plain && rules.readonly === true,
      inDict: w.inDict,
      required: w.plain &&
        (typeof rules.required === "boolean"
          ? rules.required
          : w.inDict && w.requireAll && rename === undefined),
      versioned: rules.versioned !== false,
      branches: [],
    };
    if (rename !== undefined) field.rename = rename;
    if (w.plain && Object.hasOwn(rules, "default")) {
      field.default = { value: structuredClone(rules.default) };
    }
    const relation = w.plain ? this.relation(rules.data_relation) : undefined;
    if (relation) {
      field.relation = relation;
      this.relations[w.path] = relation;
    }
    if (isRules(rules.schema)) {
      if (isList) field.member = this.field(rules.schema, inner);
      else field.dict = this.dict(rules.schema, inner);
    }
    if (Array.isArray(rules.items) && rules.items.every(isRules)) {
      field.items = rules.items.map((r) => this.field(r, inner));
    }
    const values = rules.valuesrules ?? rules.valueschema;
    if (isRules(values)) field.values = this.field(values, branchOf);
    const keys = rules.keysrules ?? rules.keyschema;
    if (isRules(keys)) field.keys = this.field(keys, branchOf);
    if (isRules(rules.allow_unknown)) {
      const unknown = this.field(rules.allow_unknown, branchOf);
      field.dict = { fields: field.dict?.fields ?? new Map(), unknown, purge: false };
    }
    for (const [rule, arg] of Object.entries(rules)) {
      const m = OF_RULE.exec(rule);
      if (!m || !Array.isArray(arg)) continue;
      const sets = m[2] ? arg.map((v) => ({ [m[2]]: v })) : arg;
      field.branches = [...field.branches, {
        rule,
        kind: m[1] as SchemaBranch["kind"],
        sets: sets.map((s) => isRules(s) ? this.field(s, branchOf) : undefined),
      }];
    }
    return field;
  }

  /** A well-formed `data_relation`; undefined otherwise (the compiler names the problem). */
  private relation(arg: unknown): DataRelation | undefined {
    if (!isRules(arg)) return undefined;
    const { resource, field = this.idField, embeddable = false, version = false } = arg;
    if (typeof resource !== "string" || resource === "" || typeof field !== "string") {
      return undefined;
    }
    if (typeof embeddable !== "boolean" || typeof version !== "boolean") return undefined;
    return { resource, field, embeddable, version };
  }
}

function fieldAt(
  root: SchemaDict,
  meta: ReadonlyMap<string, SchemaField>,
  path: string,
): FieldAt {
  const dot = path.indexOf(".");
  const head = dot < 0 ? path : path.slice(0, dot);
  // At the document level only declared names count (Eve's rule for filters).
  const field = root.fields.get(head) ?? meta.get(head);
  return field && dot >= 0 ? fieldBelow(field, path.slice(dot + 1)) : field;
}

/**
 * The field at a dotted path below `field` (`qty` below a list of dicts, `0` below a list),
 * resolved as {@link SchemaModel.fieldAt} does.
 */
export function fieldBelow(field: SchemaField, path: string): FieldAt {
  let at: FieldAt = field;
  for (const part of path.split(".")) {
    if (at === undefined || at === "free") return at;
    if (at.isList) {
      if (!at.member) {
        if (!at.items) return "free";
        at = /^\d+$/.test(part) ? at.items[Number(part)] : itemsChild(at.items, part);
      } else at = /^\d+$/.test(part) ? at.member : childOf(at.member, part);
    } else at = childOf(at, part);
  }
  return at;
}

/**
 * A name below a fixed-size list (`items`): the first item rules that declare it (as Eve
 * tries each item's dict schema); undefined when none does.
 */
function itemsChild(items: readonly SchemaField[], key: string): FieldAt {
  let found: FieldAt;
  for (const item of items) {
    const child = childOf(item, key);
    if (child !== undefined && child !== "free") return child;
    found ??= child;
  }
  return found;
}

function childOf(field: SchemaField, key: string): FieldAt {
  if (field.isList) {
    if (field.member) return childOf(field.member, key);
    return field.items ? itemsChild(field.items, key) : "free";
  }
  const dictOnly = field.types.every((t) => t.base === "dict");
  if (field.types.length > 0 && !dictOnly) return undefined;
  if (field.dict) {
    const child = field.dict.fields.get(key);
    if (child) return child;
    const unknown = field.dict.unknown;
    return typeof unknown === "object" ? unknown : unknown ? "free" : undefined;
  }
  return field.values ?? "free";
}

/** The Eve type of a field that names exactly one (aliases resolved); undefined otherwise. */
export function singleType(field: FieldAt): string | undefined {
  return field && field !== "free" && field.types.length === 1 ? field.types[0].base : undefined;
}

function collectMedia(dict: SchemaDict, prefix: string[], out: MediaPath[]) {
  for (const [name, field] of dict.fields) visitMedia(field, [...prefix, name], out);
}

function visitMedia(field: SchemaField, path: string[], out: MediaPath[]) {
  if (field.types.some((t) => t.base === "media")) out.push(path);
  if (field.member) visitMedia(field.member, [...path, "[]"], out);
  else if (field.dict && isRules(field.rules.schema)) collectMedia(field.dict, path, out);
}

/** Eve's shorthand `"price": "integer"` is `"price": {"type": "integer"}`, at any depth. */
export function expandShorthand(schema: Record<string, unknown>): ResourceSchema {
  return Object.fromEntries(
    Object.entries(schema).map(([field, rules]) => [field, rulesOf(rules)]),
  );
}

function rulesOf(rules: unknown): FieldSchema {
  if (typeof rules === "string") return { type: rules };
  if (!isRules(rules)) return rules as FieldSchema;
  const inner = rules.schema;
  const type = rules.type;
  const list = type === "list" ||
    (Array.isArray(type) && type.includes("list") && !type.includes("dict"));
  if (typeof inner === "string") return { ...rules, schema: { type: inner } };
  if (!isRules(inner)) return rules;
  // A list's `schema` holds its members' rules; a dict's holds its fields.
  return { ...rules, schema: list ? rulesOf(inner) : expandShorthand(inner) };
}

/**
 * A name a `rename` may give: not empty, not starting with `$`, without `.`, and none of the
 * names a client may not send (`__proto__` ...).
 */
export function isFieldName(v: unknown): v is string {
  return typeof v === "string" && v !== "" && !v.startsWith("$") && !v.includes(".") &&
    forbiddenSegment(v) === undefined;
}

function isRules(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Freezes the model's own objects (rules stay as the settings hold them). */
function deepFreeze<T>(v: T, seen = new Set<unknown>()): T {
  if (typeof v !== "object" || v === null || seen.has(v)) return v;
  seen.add(v);
  if (v instanceof Map) {
    for (const x of v.values()) deepFreeze(x, seen);
  } else {
    for (const [key, x] of Object.entries(v)) if (key !== "rules") deepFreeze(x, seen);
  }
  return Object.freeze(v);
}
