/**
 * Turns a resource's schema model (domain/schema.ts) into (1) a JSON Schema for ajv, using
 * the custom keywords of keywords.ts, and (2) a tree of field nodes driving coercion,
 * defaults and the checks ajv cannot do (read-only, unique, data relations, custom rules).
 * The model says what the fields are; the rules as written are read here only for what ajv
 * checks and for the problems of malformed rules.
 */
import type { ResourceSchema } from "../domain/types.ts";
import {
  isFieldName,
  type SchemaDict,
  type SchemaField,
  type SchemaModel,
} from "../domain/schema.ts";
import type { TypeChecker } from "./typecheck.ts";
import { isPlainObject } from "../util/plain.ts";
import type { Coercer, CompileOptions, DictNode, FieldNode } from "./types.ts";
import { BUILTIN_COERCERS, coercerNamed } from "./coercers.ts";
import { closest } from "../settings/check.ts";
import { compileLinear } from "../doc/regex.ts";

export type { DictNode, FieldNode } from "./types.ts";

type Json = Record<string, unknown>;

/** Where a rule set sits: its schema path (for messages) and whether it is in a list. */
interface Where {
  path: string;
  inList: boolean;
  /** The rules of a dict's unknown names (`allow_unknown: {...}`). */
  unknownRules?: boolean;
}

/** A rule set being compiled: where it sits, and the node and JSON Schema it fills in. */
interface Compiling {
  where: Where;
  node: FieldNode;
  json: Json;
}

const OF_JSON: Record<string, string> = { anyof: "anyOf", oneof: "oneOf", allof: "allOf" };
const ANNOTATIONS = new Set(["meta", "versioned"]);

/**
 * Compiles a schema model's fields; collects every problem of the rules as written instead
 * of stopping at the first (the model leaves malformed rules out).
 */
export class SchemaCompiler {
  readonly problems: string[] = [];
  readonly uniqueFields: string[] = [];
  readonly scopedUniqueFields: string[] = [];
  /** Whether a field, at any depth, has a custom rule (which sees the whole document). */
  usesCustomRules = false;

  constructor(private readonly opts: CompileOptions, private readonly tc: TypeChecker) {}

  private bad(path: string, msg: string) {
    this.problems.push(`${path}: ${msg}`);
  }

  /** Compiles the resource schema; returns the root dict node and its JSON Schema. */
  compileRoot(schema: ResourceSchema, model: SchemaModel): { node: DictNode; json: Json } {
    const opts = this.opts;
    if (!isPlainObject(schema)) {
      this.bad(opts.path, "schema must be an object");
      return { node: { fields: new Map(), unknown: true, purge: false }, json: {} };
    }
    const withId = Object.hasOwn(schema, opts.idField)
      ? schema
      : { ...schema, [opts.idField]: { type: "objectid" } };
    return this.dict(withId, model.root, { path: opts.path, inList: false });
  }

  /** A dict level: `raw` as written (for its problems), `dict` as the model reads it. */
  private dict(raw: Record<string, unknown>, dict: SchemaDict, w: Where) {
    const node: DictNode = {
      fields: new Map(),
      unknown: dict.unknown === true,
      purge: dict.purge,
    };
    this.renames(dict, w);
    const properties: Json = {};
    const required: string[] = [];
    const requiredUnless: Array<{ field: string; unless: string[] }> = [];
    for (const [name, rules] of Object.entries(raw)) {
      const path = `${w.path}.${name}`;
      const field = dict.fields.get(name);
      if (name === "" || name.startsWith("$") || name.includes(".")) {
        this.bad(path, "field names may not be empty, start with '$' or contain '.'");
        continue;
      }
      if (!isPlainObject(rules) || !field) {
        this.bad(path, "field rules must be an object");
        continue;
      }
      const { node: f, json } = this.field(field, { ...w, path });
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
    if (dict.unknown === false) json.additionalProperties = false;
    return { node, json };
  }

  /** A field's rules, wrapped so that null is checked by `nullable` only. */
  private field(field: SchemaField, w: Where): { node: FieldNode; json: Json } {
    const { node, json } = this.rules(field, w);
    const then = node.nullable ? true : { eveNull: true };
    return { node, json: { if: { type: "null" }, then, else: json } };
  }

  /** Compiles one rule set into a node and the JSON Schema applied to non-null values. */
  private rules(field: SchemaField, where: Where): { node: FieldNode; json: Json } {
    // The unknown names' own rule set, not the rule sets nested in it.
    const unknownRules = where.unknownRules === true;
    const w: Where = unknownRules ? { ...where, unknownRules: false } : where;
    const rules = field.rules;
    const node: FieldNode = {
      path: field.path,
      types: field.types.map((t) => t.name),
      coerceTypes: [...field.types],
      nullable: field.nullable,
      readonly: field.readonly,
      required: field.required,
      unique: false,
      default: field.default && { value: field.default.value },
      relation: field.relation,
      custom: [],
    };
    const json: Json = {};
    const compiling: Compiling = { where: w, node, json };
    if (node.types.length) json.eveType = node.types;
    for (const [rule, arg] of Object.entries(rules)) {
      const p = `${w.path}.${rule}`;
      const bool = () => typeof arg === "boolean" ? arg : (this.bad(p, "must be a boolean"), false);
      const count = () => {
        if (Number.isInteger(arg) && (arg as number) >= 0) return arg as number;
        this.bad(p, "must be a non-negative integer");
        return 0;
      };
      const plainOnly = () =>
        field.plain || (this.bad(p, "not allowed inside rule branches"), false);
      switch (rule) {
        case "type":
          this.typeNames(arg, p);
          break;
        case "allow_unknown":
          if (typeof arg !== "boolean" && !isPlainObject(arg)) {
            this.bad(p, "must be a boolean or rules");
          }
          break;
        case "required":
          // The model says whether the field is required (its own rule, or require_all).
          bool() && plainOnly();
          break;
        case "coerce":
          // Also in the rules of a dict's unknown names, as in Cerberus.
          this.coerce(arg, p, node) && !unknownRules && plainOnly();
          break;
        case "rename_handler": {
          // A dict field's, or the rules of a dict's unknown names (Cerberus's two places).
          const fns = this.coercers(arg, p);
          if (!fns) break;
          if (unknownRules) node.renameHandler = fns;
          else if (!plainOnly()) break;
          else if (!field.inDict) this.bad(p, "only a dict's fields can be renamed");
          else if (Object.hasOwn(rules, "rename")) {
            this.bad(p, "'rename' and 'rename_handler' exclude each other");
          } else node.renameHandler = fns;
          break;
        }
        case "default_setter":
          if (this.defaultSetter(arg, p, node) && plainOnly() && Object.hasOwn(rules, "default")) {
            this.bad(p, "'default' and 'default_setter' exclude each other");
          }
          break;
        case "check_with":
          // Cerberus's named checks: a custom rule of extensions.rules, without argument.
          for (const name of this.checks(arg, p)) {
            if (plainOnly()) this.customRule(node, [name, undefined]);
          }
          break;
        case "purge_unknown":
        case "require_all":
          bool() && plainOnly();
          break;
        case "rename":
          if (!isFieldName(arg)) {
            this.bad(
              p,
              "must be a field name (not empty, no '.', not starting with '$', not reserved)",
            );
          } else if (plainOnly()) {
            if (field.rename === undefined) this.bad(p, "only a dict's fields can be renamed");
            else node.rename = field.rename;
          }
          break;
        case "nullable":
          bool();
          break;
        case "readonly":
          bool() && plainOnly();
          break;
        case "unique":
        case "unique_within_resource":
          // Checked by query (list members: no other document holds the member); `unique`
          // outside lists also gets a unique index, `unique_within_resource` (Eve: unique
          // among the resource's own documents, its datasource filter applied) does not.
          if (bool() && plainOnly()) {
            node.unique = true;
            if (!w.inList) {
              (rule === "unique" ? this.uniqueFields : this.scopedUniqueFields).push(field.path);
            }
          }
          break;
        case "unique_to_user":
          // Eve: unique among the requester's documents (AUTH_FIELD); checked by query only.
          if (bool() && plainOnly()) {
            node.uniqueToUser = true;
            if (!w.inList) this.scopedUniqueFields.push(field.path);
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
          else if (field.isList) json.eveAllowedMembers = arg;
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
          plainOnly();
          break;
        case "schema":
          this.schemaRule(arg, field, { where: { ...w, path: p }, node, json });
          break;
        case "items":
          if (!field.items) this.bad(p, "must be a list of rule sets");
          else {
            const compiled = field.items.map((item, i) =>
              this.field(item, { path: `${p}[${i}]`, inList: true })
            );
            node.items = compiled.map((c) => c.node);
            json.items = compiled.map((c) => c.json);
            json.eveItemsLength = compiled.length;
          }
          break;
        case "keysrules":
        case "keyschema":
          if (!isPlainObject(arg) || !field.keys) this.bad(p, "must be rules (an object)");
          else json.propertyNames = this.rules(field.keys, { ...w, path: p }).json;
          break;
        case "valuesrules":
        case "valueschema":
          if (!isPlainObject(arg) || !field.values) this.bad(p, "must be rules (an object)");
          else {
            const v = this.field(field.values, { ...w, path: p });
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
          if (plainOnly()) this.relation(arg, p);
          break;
        case "description":
        case "title":
          // Annotations: ajv ignores them; the API description (src/openapi/) shows them.
          if (typeof arg === "string") json[rule] = arg;
          break;
        default:
          if (ANNOTATIONS.has(rule)) break;
          if (this.ofRule(rule, field, compiling)) break;
          if (this.opts.rules && Object.hasOwn(this.opts.rules, rule)) {
            if (plainOnly()) this.customRule(node, [rule, arg]);
            break;
          }
          this.bad(p, `unknown rule '${rule}'`);
      }
    }
    const unknown = field.dict?.unknown;
    if (typeof unknown === "object") {
      const u = this.field(unknown, {
        ...w,
        path: `${w.path}.allow_unknown`,
        unknownRules: true,
      });
      node.dict ??= { fields: new Map(), unknown: true, purge: false };
      node.dict.unknown = u.node;
      json.additionalProperties = u.json;
    }
    return { node, json };
  }

  /** Reads a `coerce` rule into `node`; false when it is malformed (reported). */
  private coerce(arg: unknown, p: string, node: FieldNode): boolean {
    const fns = this.coercers(arg, p);
    if (fns) node.coerce = fns;
    return fns !== null;
  }

  /** The coercers a `coerce` or `rename_handler` rule names; null when malformed (reported). */
  private coercers(arg: unknown, p: string): Array<{ name: string; fn: Coercer }> | null {
    const names = this.nameList(arg, p, "a coercer's name");
    if (!names) return null;
    const known = [...Object.keys(BUILTIN_COERCERS), ...Object.keys(this.opts.coercers ?? {})];
    const fns: Array<{ name: string; fn: Coercer }> = [];
    for (const name of names) {
      const fn = coercerNamed(name, this.opts.coercers);
      if (fn) fns.push({ name, fn });
      else this.unregistered(p, { what: "coercer", name, known, registry: "coercers" });
    }
    return fns.length === names.length ? fns : null;
  }

  /** Reads a `default_setter` rule into `node`; false when it is malformed (reported). */
  private defaultSetter(arg: unknown, p: string, node: FieldNode): boolean {
    if (typeof arg !== "string") {
      this.bad(p, "must be a default setter's name");
      return false;
    }
    const setters = this.opts.defaultSetters ?? {};
    if (!Object.hasOwn(setters, arg)) {
      const known = Object.keys(setters);
      this.unregistered(p, {
        what: "default setter",
        name: arg,
        known,
        registry: "defaultSetters",
      });
      return false;
    }
    node.defaultSetter = { name: arg, fn: setters[arg] };
    return true;
  }

  /** Gives `node` the custom rule `rule` ([name, argument]). */
  private customRule(node: FieldNode, rule: [string, unknown]): void {
    node.custom.push(rule);
    this.usesCustomRules = true;
  }

  /** The rule names of a `check_with` rule (each a custom rule); the unknown ones reported. */
  private checks(arg: unknown, p: string): string[] {
    const names = this.nameList(arg, p, "a custom rule's name");
    if (!names) return [];
    const rules = this.opts.rules ?? {};
    const known = Object.keys(rules);
    const found = names.filter((n) => Object.hasOwn(rules, n));
    for (const name of names) {
      if (!found.includes(name)) {
        this.unregistered(p, { what: "check", name, known, registry: "rules" });
      }
    }
    return found;
  }

  /** A rule's name or non-empty list of names; null when it is neither (reported). */
  private nameList(arg: unknown, p: string, what: string): string[] | null {
    const names = typeof arg === "string" ? [arg] : arg;
    if (
      !Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== "string")
    ) {
      this.bad(p, `must be ${what} or a list of names`);
      return null;
    }
    return names as string[];
  }

  /** Reports a name no function of `extensions.<registry>` has, with the closest known one. */
  private unregistered(
    p: string,
    { what, name, known, registry }: {
      what: string;
      name: string;
      known: string[];
      registry: string;
    },
  ): void {
    const near = known.length ? ` (did you mean ${closest(name, known)}?)` : "";
    this.bad(p, `unknown ${what} '${name}'${near}; register it in extensions.${registry}`);
  }

  /**
   * Reports the renames of a dict level that cannot be done in one step: two fields renamed
   * to one name, or to a field renamed in turn.
   */
  private renames(dict: SchemaDict, w: Where): void {
    const by = new Map<string, string>();
    for (const [name, field] of dict.fields) {
      const target = field.rename;
      if (target === undefined || target === name) continue;
      const p = `${w.path}.${name}.rename`;
      const other = by.get(target);
      if (other !== undefined) this.bad(p, `'${other}' is renamed to '${target}' too`);
      else by.set(target, name);
      const next = dict.fields.get(target)?.rename;
      if (next !== undefined && next !== target) {
        this.bad(p, `'${target}' is renamed in turn (to '${next}')`);
      }
    }
  }

  /** Reports a `type` rule that names no type or an unknown one (the model leaves those out). */
  private typeNames(t: unknown, p: string): void {
    const names = typeof t === "string" ? [t] : t;
    if (!Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== "string")) {
      return this.bad(p, "must be a type name or a list of type names");
    }
    for (const n of names.filter((n) => !this.tc.knows(n))) this.bad(p, `unknown type '${n}'`);
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

  /** The `schema` rule (its own path in `where`): a list's member rules, or a dict's fields. */
  private schemaRule(arg: unknown, field: SchemaField, { where: w, node, json }: Compiling) {
    if (!isPlainObject(arg)) return this.bad(w.path, "must be an object");
    if (field.member) {
      const m = this.field(field.member, { ...w, inList: true });
      node.member = m.node;
      json.items = m.json;
    } else if (field.dict) {
      const d = this.dict(arg, field.dict, w);
      node.dict = d.node;
      Object.assign(json, d.json);
    }
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

  /** Reports what makes a `data_relation` malformed (the model then has none). */
  private relation(arg: unknown, p: string) {
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
  }

  /** anyof/oneof/allof/noneof and their `anyof_<rule>` shorthands; false if not one. */
  private ofRule(rule: string, field: SchemaField, { where: w, node, json }: Compiling): boolean {
    const branch = field.branches.find((b) => b.rule === rule);
    if (!branch && !/^(anyof|oneof|allof|noneof)(_.+)?$/.test(rule)) return false;
    const p = `${w.path}.${rule}`;
    if (!branch || branch.sets.length === 0) {
      this.bad(p, "must be a non-empty list");
      return true;
    }
    const branches: Json[] = [];
    branch.sets.forEach((set, i) => {
      if (!set) return this.bad(`${p}[${i}]`, "must be rules (an object)");
      const b = this.rules(set, { ...w, path: `${p}[${i}]` });
      node.coerceTypes.push(...set.types.filter((t) => !node.coerceTypes.includes(t)));
      branches.push(b.json);
    });
    const key = branch.kind === "noneof" ? "not" : OF_JSON[branch.kind];
    const value = branch.kind === "noneof" ? { anyOf: branches } : branches;
    // Two *of rules of the same kind (e.g. anyof and anyof_type) are combined with allOf.
    if (key in json) json.allOf = [...(json.allOf as Json[] ?? []), { [key]: value }];
    else json[key] = value;
    return true;
  }
}
