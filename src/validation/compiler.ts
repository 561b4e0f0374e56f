/**
 * Turns an Eve/Cerberus resource schema into (1) a JSON Schema for ajv, using the custom
 * keywords of keywords.ts, and (2) a tree of field nodes driving coercion, defaults and the
 * checks ajv cannot do (read-only, unique, data relations, custom rules).
 */
import type { DataRelation, ResourceSchema } from "../domain/types.ts";
import { isPlainObject, type TypeChecker } from "./typecheck.ts";
import type { CompileOptions } from "./types.ts";
import { compileLinear } from "../store/regex.ts";

/** Rules of one field, resolved. */
export interface FieldNode {
  /** Dotted path, list members share their list's path. */
  path: string;
  types: string[];
  /** Types to coerce to: `types` plus the types named in *of branches. */
  coerceTypes: string[];
  nullable: boolean;
  readonly: boolean;
  required: boolean;
  unique: boolean;
  default?: { value: unknown };
  relation?: DataRelation;
  /** Custom rules as [name, argument]. */
  custom: Array<[string, unknown]>;
  dict?: DictNode;
  member?: FieldNode;
  items?: FieldNode[];
  values?: FieldNode;
}

/** A dict level: its fields and what it does with unknown fields. */
export interface DictNode {
  fields: Map<string, FieldNode>;
  /** false: refused; true: kept unchecked; a node: checked by those rules. */
  unknown: boolean | FieldNode;
}

type Json = Record<string, unknown>;

/** Where a rule set sits; branches and key rules cannot hold stateful rules. */
interface Where {
  path: string; // schema path for messages
  field: string; // dotted document path
  plain: boolean; // not inside *of / keysrules / valuesrules / allow_unknown rules
  inList: boolean;
  allowUnknown: boolean;
}

const OF_RULES = ["anyof", "oneof", "allof", "noneof"];
const OF_JSON: Record<string, string> = { anyof: "anyOf", oneof: "oneOf", allof: "allOf" };
const ANNOTATIONS = new Set(["meta", "versioned"]);

/** Compiles schemas; collects every problem instead of stopping at the first. */
export class SchemaCompiler {
  readonly problems: string[] = [];
  readonly uniqueFields: string[] = [];
  readonly scopedUniqueFields: string[] = [];
  readonly relations: Record<string, DataRelation> = {};

  constructor(private readonly opts: CompileOptions, private readonly tc: TypeChecker) {}

  private bad(path: string, msg: string) {
    this.problems.push(`${path}: ${msg}`);
  }

  /** Compiles the resource schema; returns the root dict node and its JSON Schema. */
  compileRoot(schema: ResourceSchema): { node: DictNode; json: Json } {
    const opts = this.opts;
    if (!isPlainObject(schema)) {
      this.bad(opts.path, "schema must be an object");
      return { node: { fields: new Map(), unknown: true }, json: {} };
    }
    const empty = Object.keys(schema).length === 0;
    const where = {
      path: opts.path,
      field: "",
      plain: true,
      inList: false,
      allowUnknown: opts.allowUnknown || empty,
    };
    const withId = Object.hasOwn(schema, opts.idField)
      ? schema
      : { ...schema, [opts.idField]: { type: "objectid" } };
    return this.dict(withId, where);
  }

  /** A dict level from `fields` (name -> rules). */
  private dict(fields: Record<string, unknown>, w: Where): { node: DictNode; json: Json } {
    const node: DictNode = { fields: new Map(), unknown: w.allowUnknown };
    const properties: Json = {};
    const required: string[] = [];
    const requiredUnless: Array<{ field: string; unless: string[] }> = [];
    for (const [name, rules] of Object.entries(fields)) {
      const path = `${w.path}.${name}`;
      if (name === "" || name.startsWith("$") || name.includes(".")) {
        this.bad(path, "field names may not be empty, start with '$' or contain '.'");
        continue;
      }
      if (!isPlainObject(rules)) {
        this.bad(path, "field rules must be an object");
        continue;
      }
      const field = w.field ? `${w.field}.${name}` : name;
      const { node: f, json } = this.field(rules, { ...w, path, field });
      node.fields.set(name, f);
      properties[name] = json;
      if (f.required) {
        const ex = rules.excludes;
        if (ex === undefined) required.push(name);
        else {requiredUnless.push({
            field: name,
            unless: typeof ex === "string" ? [ex] : ex as string[],
          });}
      }
    }
    const json: Json = { properties };
    if (required.length) json.required = required;
    if (requiredUnless.length) json.eveRequiredUnless = requiredUnless;
    if (w.allowUnknown === false) json.additionalProperties = false;
    return { node, json };
  }

  /** A field's rules, wrapped so that null is checked by `nullable` only. */
  private field(rules: Record<string, unknown>, w: Where): { node: FieldNode; json: Json } {
    const { node, json } = this.rules(rules, w);
    const then = node.nullable ? true : { eveNull: true };
    return { node, json: { if: { type: "null" }, then, else: json } };
  }

  /** Compiles one rule set into a node and the JSON Schema applied to non-null values. */
  private rules(rules: Record<string, unknown>, w: Where): { node: FieldNode; json: Json } {
    const node: FieldNode = {
      path: w.field,
      types: [],
      coerceTypes: [],
      nullable: false,
      readonly: false,
      required: false,
      unique: false,
      custom: [],
    };
    const json: Json = {};
    const t = rules.type;
    if (t !== undefined) node.types = this.typeNames(t, `${w.path}.type`);
    const isList = node.types.includes("list") && !node.types.includes("dict");
    if (node.types.length) json.eveType = node.types;
    node.coerceTypes = [...node.types];
    let allowUnknown = w.allowUnknown;
    if (rules.allow_unknown !== undefined) {
      const a = rules.allow_unknown;
      if (typeof a === "boolean") allowUnknown = a;
      else if (!isPlainObject(a)) this.bad(`${w.path}.allow_unknown`, "must be a boolean or rules");
    }
    for (const [rule, arg] of Object.entries(rules)) {
      const p = `${w.path}.${rule}`;
      const bool = () => typeof arg === "boolean" ? arg : (this.bad(p, "must be a boolean"), false);
      const count = () => {
        if (Number.isInteger(arg) && (arg as number) >= 0) return arg as number;
        this.bad(p, "must be a non-negative integer");
        return 0;
      };
      const plainOnly = () => w.plain || (this.bad(p, "not allowed inside rule branches"), false);
      switch (rule) {
        case "type":
        case "allow_unknown":
          break;
        case "required":
          node.required = bool() && plainOnly();
          break;
        case "nullable":
          node.nullable = bool();
          break;
        case "readonly":
          node.readonly = bool() && plainOnly();
          break;
        case "unique":
        case "unique_within_resource":
          // Checked by query (list members: no other document holds the member); `unique`
          // outside lists also gets a unique index, `unique_within_resource` (Eve: unique
          // among the resource's own documents, its datasource filter applied) does not.
          if (bool() && plainOnly()) {
            node.unique = true;
            if (!w.inList) {
              (rule === "unique" ? this.uniqueFields : this.scopedUniqueFields).push(w.field);
            }
          }
          break;
        case "empty":
          if (!bool()) json.eveNotEmpty = true;
          break;
        case "minlength": {
          const n = count();
          Object.assign(json, { minLength: n, minItems: n, minProperties: n });
          break;
        }
        case "maxlength": {
          const n = count();
          Object.assign(json, { maxLength: n, maxItems: n, maxProperties: n });
          break;
        }
        case "min":
        case "max":
          if (typeof arg !== "number" || !Number.isFinite(arg)) this.bad(p, "must be a number");
          else json[rule === "min" ? "minimum" : "maximum"] = arg;
          break;
        case "allowed":
          if (!Array.isArray(arg)) this.bad(p, "must be a list");
          else if (isList) json.eveAllowedMembers = arg;
          else json.enum = arg;
          break;
        case "forbidden":
          if (!Array.isArray(arg)) this.bad(p, "must be a list");
          else json.eveForbidden = arg;
          break;
        case "contains":
          json.eveContains = Array.isArray(arg) ? arg : [arg];
          break;
        case "regex":
          this.regex(arg, p, json);
          break;
        case "default":
          if (plainOnly()) node.default = { value: structuredClone(arg) };
          break;
        case "schema":
          this.schemaRule(arg, isList, { ...w, path: p, allowUnknown }, node, json);
          break;
        case "items":
          this.itemsRule(arg, { ...w, path: p, inList: true, allowUnknown }, node, json);
          break;
        case "keysrules":
        case "keyschema":
          if (!isPlainObject(arg)) this.bad(p, "must be rules (an object)");
          else json.propertyNames = this.rules(arg, { ...w, path: p, plain: false }).json;
          break;
        case "valuesrules":
        case "valueschema":
          if (!isPlainObject(arg)) this.bad(p, "must be rules (an object)");
          else {
            const v = this.field(arg, { ...w, path: p, plain: false });
            node.values = v.node;
            json.patternProperties = { "": v.json };
          }
          break;
        case "dependencies":
          this.dependencies(arg, p, json);
          break;
        case "excludes":
          if (typeof arg === "string") json.eveExcludes = [arg];
          else if (Array.isArray(arg) && arg.every((x) => typeof x === "string")) {
            json.eveExcludes = arg;
          } else this.bad(p, "must be a field name or a list of field names");
          break;
        case "data_relation":
          if (plainOnly()) this.relation(arg, p, w, node);
          break;
        case "description":
        case "title":
          // Annotations: ajv ignores them; the API description (src/openapi/) shows them.
          if (typeof arg === "string") json[rule] = arg;
          break;
        default:
          if (ANNOTATIONS.has(rule)) break;
          if (this.ofRule(rule, arg, w, node, json)) break;
          if (this.opts.rules && Object.hasOwn(this.opts.rules, rule)) {
            if (plainOnly()) node.custom.push([rule, arg]);
            break;
          }
          this.bad(p, `unknown rule '${rule}'`);
      }
    }
    if (isPlainObject(rules.allow_unknown)) {
      const u = this.field(rules.allow_unknown, {
        ...w,
        path: `${w.path}.allow_unknown`,
        plain: false,
      });
      node.dict ??= { fields: new Map(), unknown: true };
      node.dict.unknown = u.node;
      json.additionalProperties = u.json;
    }
    return { node, json };
  }

  private typeNames(t: unknown, p: string): string[] {
    const names = typeof t === "string" ? [t] : t;
    if (!Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== "string")) {
      this.bad(p, "must be a type name or a list of type names");
      return [];
    }
    const unknown = names.filter((n) => !this.tc.knows(n));
    for (const n of unknown) this.bad(p, `unknown type '${n}'`);
    return names.filter((n) => this.tc.knows(n));
  }

  private regex(arg: unknown, p: string, json: Json) {
    if (typeof arg !== "string") return this.bad(p, "must be a string");
    let source = arg;
    let flags = "";
    const inline = /^\(\?([imsx]+)\)/.exec(source);
    if (inline) {
      source = source.slice(inline[0].length);
      flags = inline[1].replace("x", "");
    }
    try {
      // Run by the linear-time engine (see keywords.ts): patterns it cannot run are refused here.
      compileLinear(`(?:${source})`, flags);
      json.eveRegex = { source, flags, shown: arg };
    } catch (e) {
      this.bad(p, `invalid regex: ${(e as Error).message}`);
    }
  }

  private schemaRule(arg: unknown, isList: boolean, w: Where, node: FieldNode, json: Json) {
    if (!isPlainObject(arg)) return this.bad(w.path, "must be an object");
    if (isList) {
      const m = this.field(arg, { ...w, inList: true });
      node.member = m.node;
      json.items = m.json;
    } else {
      const d = this.dict(arg, w);
      node.dict = d.node;
      Object.assign(json, d.json);
    }
  }

  private itemsRule(arg: unknown, w: Where, node: FieldNode, json: Json) {
    if (!Array.isArray(arg) || !arg.every(isPlainObject)) {
      return this.bad(w.path, "must be a list of rule sets");
    }
    const compiled = arg.map((r, i) => this.field(r, { ...w, path: `${w.path}[${i}]` }));
    node.items = compiled.map((c) => c.node);
    json.items = compiled.map((c) => c.json);
    json.eveItemsLength = arg.length;
  }

  private dependencies(arg: unknown, p: string, json: Json) {
    const deps: Array<{ path: string[]; root: boolean; name: string; values?: unknown[] }> = [];
    const add = (name: string, values?: unknown[]) => {
      const root = name.startsWith("^");
      const bare = root ? name.slice(1) : name;
      deps.push({ path: bare.split("."), root, name, values });
    };
    if (typeof arg === "string") add(arg);
    else if (Array.isArray(arg) && arg.every((x) => typeof x === "string")) {
      arg.forEach((x) => add(x));
    } else if (isPlainObject(arg)) {
      for (const [k, v] of Object.entries(arg)) add(k, Array.isArray(v) ? v : [v]);
    } else return this.bad(p, "must be a field name, a list of names or a name -> values map");
    json.eveDependencies = deps;
  }

  private relation(arg: unknown, p: string, w: Where, node: FieldNode) {
    if (!isPlainObject(arg)) return this.bad(p, "must be an object");
    const { resource, field = this.opts.idField, embeddable = false, version = false } = arg;
    for (const k of Object.keys(arg)) {
      if (!["resource", "field", "embeddable", "version"].includes(k)) {
        this.bad(`${p}.${k}`, "unknown data_relation option");
      }
    }
    if (typeof resource !== "string" || resource === "") {
      return this.bad(`${p}.resource`, "a resource name is required");
    }
    if (this.opts.resources && !this.opts.resources.includes(resource)) {
      this.bad(`${p}.resource`, `unknown resource '${resource}'`);
    }
    if (typeof field !== "string") return this.bad(`${p}.field`, "must be a string");
    if (typeof embeddable !== "boolean") return this.bad(`${p}.embeddable`, "must be a boolean");
    if (typeof version !== "boolean") return this.bad(`${p}.version`, "must be a boolean");
    node.relation = { resource, field, embeddable, version };
    this.relations[w.field] = node.relation;
  }

  /** anyof/oneof/allof/noneof and their `anyof_<rule>` shorthands; false if not one. */
  private ofRule(rule: string, arg: unknown, w: Where, node: FieldNode, json: Json): boolean {
    const m = /^(anyof|oneof|allof|noneof)(?:_(.+))?$/.exec(rule);
    if (!m || !OF_RULES.includes(m[1])) return false;
    const p = `${w.path}.${rule}`;
    if (!Array.isArray(arg) || arg.length === 0) {
      this.bad(p, "must be a non-empty list");
      return true;
    }
    const sets = m[2] ? arg.map((v) => ({ [m[2]]: v })) : arg;
    const branches: Json[] = [];
    sets.forEach((s, i) => {
      if (!isPlainObject(s)) return this.bad(`${p}[${i}]`, "must be rules (an object)");
      const b = this.rules(s, { ...w, path: `${p}[${i}]`, plain: false });
      node.coerceTypes.push(...b.node.types.filter((t) => !node.coerceTypes.includes(t)));
      branches.push(b.json);
    });
    const key = m[1] === "noneof" ? "not" : OF_JSON[m[1]];
    const value = m[1] === "noneof" ? { anyOf: branches } : branches;
    // Two *of rules of the same kind (e.g. anyof and anyof_type) are combined with allOf.
    if (key in json) json.allOf = [...(json.allOf as Json[] ?? []), { [key]: value }];
    else json[key] = value;
    return true;
  }
}
