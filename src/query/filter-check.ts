/**
 * Post-processing of a parsed `where` filter: operator blacklist, known-operator check,
 * ALLOWED_FILTERS, VALIDATE_FILTERING and schema-driven coercion of dates and ObjectIds.
 */
import type { WhereOptions } from "./where.ts";
import type { ResourceSchema } from "../domain/types.ts";
import type { Filter } from "../store/store.ts";
import { ObjectId } from "../store/bson.ts";
import { QueryError } from "./errors.ts";
import { isPlainObject } from "./json.ts";
import {
  CODE_OPERATORS,
  LIST_OPERATORS,
  LOGICAL_OPERATORS,
  OPAQUE_OPERATORS,
  QUERY_OPERATORS,
  VALUE_OPERATORS,
} from "./operators.ts";
import {
  checkExpression,
  DEFAULT_EXPRESSION_LIMITS,
  type ExpressionLimits,
  REGEX_EXPRESSION_OPERATORS,
} from "./sandbox.ts";
import { compileLinear, RegexError } from "../store/regex.ts";
import { listMember, type ResolvedField, resolveField } from "./schema-path.ts";

/** Settings the checker applies; see `WhereOptions` for their meaning. */
export type FilterCheckOptions =
  & Pick<
    WhereOptions,
    | "dateFormat"
    | "parseDate"
    | "allowedFilters"
    | "validateFiltering"
    | "blacklist"
    | "objectIdAsString"
  >
  & Partial<Pick<WhereOptions, "expressionLimits">>
  & {
    /** Top-level schema, already including the key/meta fields. */
    schema: ResourceSchema;
    param: string;
  };

const HEX24 = /^[0-9a-fA-F]{24}$/;

/** Checks and rewrites a parsed filter; returns a new filter with coerced values. */
export function checkFilter(filter: unknown, opts: FilterCheckOptions): Filter {
  const limits = opts.expressionLimits ?? DEFAULT_EXPRESSION_LIMITS;
  scanOperators(filter, blacklistOf(opts.blacklist), { limits, param: opts.param });
  return new Checker(opts).query(filter, "", opts.schema);
}

function blacklistOf(list: string[]): Set<string> {
  const set = new Set(list);
  if (set.has("$where")) { for (const op of CODE_OPERATORS) set.add(op); }
  if (set.has("$regex")) { for (const op of REGEX_EXPRESSION_OPERATORS) set.add(op); }
  return set;
}

/**
 * Walks every key at any depth: blacklisted operators are refused everywhere; only known
 * query operators are accepted, and `$expr` arguments go through the expression sandbox.
 */
function scanOperators(
  v: unknown,
  black: Set<string>,
  opts: { limits: ExpressionLimits; param: string },
): void {
  const { param } = opts;
  if (Array.isArray(v)) {
    for (const x of v) scanOperators(x, black, opts);
    return;
  }
  if (!isPlainObject(v)) return;
  for (const key of Object.keys(v)) {
    if (key === "__proto__") throw new QueryError(`${param}: "__proto__" is not allowed`, param);
    if (key.startsWith("$")) {
      if (black.has(key)) {
        throw new QueryError(`${param}: operator ${key} is not allowed`, param);
      }
      if (!QUERY_OPERATORS.has(key)) {
        throw new QueryError(`${param}: unknown operator ${key}`, param);
      }
      if (key === "$expr") {
        checkExpression(v[key], black, opts);
        continue;
      }
    }
    scanOperators(v[key], black, opts);
  }
}

class Checker {
  constructor(private readonly o: FilterCheckOptions) {}

  private fail(message: string): QueryError {
    return new QueryError(`${this.o.param}: ${message}`, this.o.param);
  }

  /** A query document; `schema` null means fields are free (no schema to check against). */
  query(q: unknown, prefix: string, schema: ResourceSchema | null): Filter {
    if (!isPlainObject(q)) throw this.fail("a query must be a JSON object");
    const out: Filter = {};
    for (const [key, value] of Object.entries(q)) {
      if (key.startsWith("$")) {
        out[key] = this.topOperator(key, value, prefix, schema);
        continue;
      }
      if (key === "" || key.split(".").some((p) => p === "")) {
        throw this.fail(`invalid field name ${JSON.stringify(key)}`);
      }
      const path = prefix ? `${prefix}.${key}` : key;
      this.checkAllowed(path);
      const rules: ResolvedField = schema ? resolveField(schema, key) : "free";
      if (rules === null && this.o.validateFiltering) {
        throw this.fail(`filter on '${path}' is invalid: unknown field`);
      }
      out[key] = this.condition(value, rules, path);
    }
    return out;
  }

  private topOperator(op: string, value: unknown, prefix: string, schema: ResourceSchema | null) {
    if (LOGICAL_OPERATORS.has(op)) {
      if (!Array.isArray(value) || value.length === 0) {
        throw this.fail(`${op} needs a non-empty list of queries`);
      }
      return value.map((sub) => this.query(sub, prefix, schema));
    }
    if (OPAQUE_OPERATORS.has(op)) return value;
    throw this.fail(`operator ${op} is not valid at query level`);
  }

  private checkAllowed(path: string): void {
    const allowed = this.o.allowedFilters;
    if (allowed.includes("*")) return;
    const parts = path.split(".");
    for (let n = 1; n <= parts.length; n++) {
      if (allowed.includes(parts.slice(0, n).join("."))) return;
    }
    throw this.fail(`filter on '${path}' is not allowed`);
  }

  /** The value given for one field: an operator document or a value to match. */
  private condition(v: unknown, rules: ResolvedField, path: string): unknown {
    if (!isPlainObject(v)) return this.value(v, rules, path);
    const keys = Object.keys(v);
    const ops = keys.filter((k) => k.startsWith("$"));
    if (ops.length === 0) return this.value(v, rules, path);
    if (ops.length !== keys.length) {
      throw this.fail(`'${path}' mixes operators and field names`);
    }
    const out: Record<string, unknown> = {};
    for (const op of ops) out[op] = this.operator(op, v[op], rules, path);
    if (Object.hasOwn(out, "$regex")) {
      this.checkPattern(out.$regex as string, (out.$options as string | undefined) ?? "", path);
    } else if (Object.hasOwn(out, "$options")) {
      throw this.fail(`$options on '${path}' needs $regex`);
    }
    return out;
  }

  private operator(op: string, arg: unknown, rules: ResolvedField, path: string): unknown {
    if (VALUE_OPERATORS.has(op)) return this.value(arg, rules, path);
    if (LIST_OPERATORS.has(op)) {
      if (!Array.isArray(arg)) throw this.fail(`${op} on '${path}' needs a list`);
      return arg.map((x) => this.value(x, rules, path));
    }
    switch (op) {
      case "$not":
        if (!isPlainObject(arg) || !Object.keys(arg).every((k) => k.startsWith("$"))) {
          throw this.fail(`$not on '${path}' needs an operator document`);
        }
        return this.condition(arg, rules, path);
      case "$elemMatch":
        return this.elemMatch(arg, rules, path);
      case "$size":
        if (!Number.isInteger(arg) || (arg as number) < 0) {
          throw this.fail(`$size on '${path}' needs a non-negative integer`);
        }
        return arg;
      case "$regex":
      case "$options":
        if (typeof arg !== "string") throw this.fail(`${op} on '${path}' needs a string`);
        return arg;
    }
    if (LOGICAL_OPERATORS.has(op)) throw this.fail(`${op} is not valid inside '${path}'`);
    return arg;
  }

  /** `$regex` patterns must run on the linear-time engine (no back-references, look-around). */
  private checkPattern(pattern: string, options: string, path: string): void {
    try {
      compileLinear(pattern, options);
    } catch (error) {
      if (error instanceof RegexError) throw this.fail(`$regex on '${path}': ${error.message}`);
      throw error;
    }
  }

  private elemMatch(arg: unknown, rules: ResolvedField, path: string): unknown {
    if (!isPlainObject(arg)) throw this.fail(`$elemMatch on '${path}' needs an object`);
    const member = rules && rules !== "free" ? listMember(rules) : undefined;
    const memberRules: ResolvedField = member ?? "free";
    const keys = Object.keys(arg);
    const operatorForm = keys.length > 0 &&
      keys.every((k) => k.startsWith("$") && !LOGICAL_OPERATORS.has(k) && !OPAQUE_OPERATORS.has(k));
    if (operatorForm) return this.condition(arg, memberRules, path);
    const sub = member && isPlainObject(member.schema) ? member.schema as ResourceSchema : null;
    return this.query(arg, path, sub);
  }

  /** Coerces a value to the field's type (dates, ObjectIds) and checks it fits. */
  private value(v: unknown, rules: ResolvedField, path: string): unknown {
    if (!rules || rules === "free" || v === null) return v;
    if (rules.type === "list") {
      const member = listMember(rules);
      if (Array.isArray(v)) return member ? v.map((x) => this.value(x, member, path)) : v;
      // Equality with one value matches lists containing it.
      return member ? this.value(v, member, path) : v;
    }
    const types = Array.isArray(rules.type) ? rules.type as unknown[] : [rules.type];
    const coerced = this.coerce(v, types);
    if (this.o.validateFiltering && !types.some((t) => fits(t, coerced))) {
      const hint = types.some(isDateType) ? ` (DATE_FORMAT ${this.o.dateFormat})` : "";
      throw this.fail(`value of '${path}' is not a valid ${types.join(" or ")}${hint}`);
    }
    return coerced;
  }

  private coerce(v: unknown, types: unknown[]): unknown {
    if (typeof v !== "string") return v;
    if (types.some(isDateType)) {
      const d = this.o.parseDate(v);
      if (d) return d;
    }
    if (types.includes("objectid") && HEX24.test(v) && !this.o.objectIdAsString) {
      return new ObjectId(v);
    }
    return v;
  }
}

/** `date` is Eve's alias of `datetime`. */
function isDateType(type: unknown): boolean {
  return type === "datetime" || type === "date";
}

function fits(type: unknown, v: unknown): boolean {
  switch (type) {
    case "string":
      return typeof v === "string";
    case "integer":
      return Number.isInteger(v);
    case "float":
    case "number":
      return typeof v === "number";
    case "boolean":
      return typeof v === "boolean";
    case "datetime":
    case "date":
      return v instanceof Date;
    case "objectid":
      return v instanceof ObjectId;
    case "dict":
      return isPlainObject(v);
    case "decimal128":
      return typeof v === "number" || (typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v));
    default:
      return true; // media, geo types, custom types: no check
  }
}
