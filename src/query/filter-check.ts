/**
 * Post-processing of a parsed `where` filter: operator blacklist, known-operator check,
 * ALLOWED_FILTERS, VALIDATE_FILTERING and coercion of values to their field's type (dates,
 * ObjectIds ...), by the schema model and its one table of field types.
 */
import type { WhereOptions } from "./options.ts";
import { type CoerceContext, coerceTo } from "../domain/field-types.ts";
import { type FieldAt, fieldBelow, type SchemaField, type SchemaModel } from "../domain/schema.ts";
import type { Filter } from "../store/store.ts";
import { QueryError } from "./errors.ts";
import { isPlainObject } from "../util/plain.ts";
import {
  CODE_OPERATORS,
  LIST_OPERATORS,
  LOGICAL_OPERATORS,
  NEAR_BOUNDS,
  NOT_FIELD_OPERATORS,
  OPAQUE_OPERATORS,
  QUERY_LEVEL_OPERATORS,
  QUERY_OPERATORS,
  VALUE_OPERATORS,
} from "./operators.ts";
import {
  checkExpression,
  DEFAULT_EXPRESSION_LIMITS,
  type ExpressionLimits,
  REGEX_EXPRESSION_OPERATORS,
} from "./sandbox.ts";
import { compileLinear, RegexError } from "../doc/regex.ts";
import { visitReferences } from "./references.ts";
import { parseObjectId } from "../doc/bson.ts";

const HEX24 = /^[0-9a-fA-F]{24}$/;

/** Settings the checker applies; see `WhereOptions` for their meaning. */
export type FilterCheckOptions =
  & Pick<
    WhereOptions,
    | "dateFormat"
    | "parseDate"
    | "allowedFilters"
    | "validateFiltering"
    | "blacklist"
    | "whitelist"
    | "objectIdAsString"
    | "references"
  >
  & Partial<Pick<WhereOptions, "expressionLimits">>
  & {
    /** The resource's schema model (key and meta fields included). */
    model: SchemaModel;
    param: string;
  };

/** How the fields of one query level resolve: a dotted name -> its field. */
type Scope = (path: string) => FieldAt;

/** A query level: the path it sits at (for nested queries) and how its fields resolve. */
interface Level {
  prefix: string;
  scope: Scope;
}

/** The field a condition applies to: its rules and its dotted path (for messages). */
interface Target {
  rules: FieldAt;
  path: string;
}

/** Checks and rewrites a parsed filter; returns a new filter with coerced values. */
export function checkFilter(filter: unknown, opts: FilterCheckOptions): Filter {
  const limits = opts.expressionLimits ?? DEFAULT_EXPRESSION_LIMITS;
  scanOperators(filter, blacklistOf(opts.blacklist), { limits, param: opts.param });
  if (opts.references) visitReferences(filter, opts.param, opts.references);
  if (opts.whitelist) checkWhitelist(filter, knownOperators(opts.whitelist), opts.param);
  return new Checker(opts).query(filter, "", (path) => opts.model.fieldAt(path));
}

/** Sets made once per settings list (a resource's lists live as long as the service). */
const blacklists = new WeakMap<readonly string[], Set<string>>();
const whitelists = new WeakMap<readonly string[], ReadonlySet<string>>();

/** Eve's operators and `whitelist`'s. */
function knownOperators(whitelist: readonly string[]): ReadonlySet<string> {
  let set = whitelists.get(whitelist);
  if (!set) whitelists.set(whitelist, set = new Set([...EVE_OPERATORS, ...whitelist]));
  return set;
}

function blacklistOf(list: string[]): Set<string> {
  let set = blacklists.get(list);
  if (!set) blacklists.set(list, set = blacklistSet(list));
  return set;
}

function blacklistSet(list: string[]): Set<string> {
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

/**
 * Eve's query operators: with MONGO_QUERY_WHITELIST, every operator at any depth (inside
 * `$expr` too) must be one of these or whitelisted, as Eve checks a query. The service's own
 * checks (blacklist, known operators, the expression allowlist) apply besides.
 */
const EVE_OPERATORS: readonly string[] = [
  ...["$gt", "$gte", "$in", "$lt", "$lte", "$ne", "$nin", "$eq"],
  ...["$or", "$and", "$not", "$nor"],
  ...["$mod", "$regex", "$text", "$where"],
  ...["$options", "$search", "$language", "$caseSensitive"],
  ...["$diacriticSensitive", "$exists", "$type"],
  ...["$geoWithin", "$geoIntersects", "$near", "$nearSphere", "$centerSphere"],
  ...["$geometry", "$maxDistance", "$minDistance", "$box"],
  ...["$all", "$elemMatch", "$size"],
  ...["$bitsAllClear", "$bitsAllSet", "$bitsAnyClear", "$bitsAnySet"],
  ...["$center", "$expr"],
];

function checkWhitelist(v: unknown, known: ReadonlySet<string>, param: string): void {
  if (Array.isArray(v)) {
    for (const x of v) checkWhitelist(x, known, param);
    return;
  }
  if (!isPlainObject(v)) return;
  for (const key of Object.keys(v)) {
    if (key.startsWith("$") && !known.has(key)) {
      throw new QueryError(
        `${param}: Query contains unknown or unsupported operators: ${key} ` +
          "(allow it with mongo_query_whitelist)",
        param,
      );
    }
    checkWhitelist(v[key], known, param);
  }
}

class Checker {
  private readonly coerce: CoerceContext;

  constructor(private readonly options: FilterCheckOptions) {
    // Fields typed `objectid` (the id field among them) always read 24-hex strings as
    // ObjectIds, as in Eve; `query_objectid_as_string` concerns untyped fields only.
    this.coerce = { parseDate: options.parseDate, compared: true };
  }

  private fail(message: string): QueryError {
    return new QueryError(`${this.options.param}: ${message}`, this.options.param);
  }

  /** A query document whose field names resolve in `scope`. */
  query(q: unknown, prefix: string, scope: Scope): Filter {
    if (!isPlainObject(q)) throw this.fail("a query must be a JSON object");
    const out: Filter = {};
    for (const [key, value] of Object.entries(q)) {
      if (key.startsWith("$")) {
        out[key] = this.topOperator(key, value, { prefix, scope });
        continue;
      }
      if (key === "" || key.split(".").some((p) => p === "")) {
        throw this.fail(`invalid field name ${JSON.stringify(key)}`);
      }
      const path = prefix ? `${prefix}.${key}` : key;
      this.checkAllowed(path);
      const rules = scope(key);
      if (rules === undefined && this.options.validateFiltering) {
        throw this.fail(`filter on '${path}' is invalid: unknown field`);
      }
      out[key] = this.condition(value, rules, path);
    }
    return out;
  }

  private topOperator(op: string, value: unknown, { prefix, scope }: Level) {
    if (LOGICAL_OPERATORS.has(op)) {
      if (!Array.isArray(value) || value.length === 0) {
        throw this.fail(`${op} needs a non-empty list of queries`);
      }
      return value.map((sub) => this.query(sub, prefix, scope));
    }
    if (QUERY_LEVEL_OPERATORS.has(op)) return value;
    throw this.fail(`operator ${op} is not valid at query level`);
  }

  private checkAllowed(path: string): void {
    const allowed = this.options.allowedFilters;
    if (allowed.includes("*")) return;
    const parts = path.split(".");
    for (let n = 1; n <= parts.length; n++) {
      if (allowed.includes(parts.slice(0, n).join("."))) return;
    }
    throw this.fail(`filter on '${path}' not allowed`);
  }

  /** The value given for one field: an operator document or a value to match. */
  private condition(v: unknown, rules: FieldAt, path: string): unknown {
    if (!isPlainObject(v)) return this.value(v, rules, path);
    const keys = Object.keys(v);
    const ops = keys.filter((k) => k.startsWith("$"));
    if (ops.length === 0) return this.value(v, rules, path);
    if (ops.length !== keys.length) {
      throw this.fail(`'${path}' mixes operators and field names`);
    }
    const out: Record<string, unknown> = {};
    const target: Target = { rules, path };
    const near = Object.hasOwn(v, "$near") || Object.hasOwn(v, "$nearSphere");
    for (const op of ops) {
      if (NOT_FIELD_OPERATORS.has(op) || (NEAR_BOUNDS.has(op) && !near)) {
        throw this.fail(`${op} is not valid inside '${path}'`);
      }
      out[op] = this.operator(op, v[op], target);
    }
    if (Object.hasOwn(out, "$regex")) {
      this.checkPattern(out.$regex as string, (out.$options as string | undefined) ?? "", path);
    } else if (Object.hasOwn(out, "$options")) {
      throw this.fail(`$options on '${path}' needs $regex`);
    }
    return out;
  }

  private operator(op: string, arg: unknown, { rules, path }: Target): unknown {
    if (VALUE_OPERATORS.has(op)) return this.value(arg, rules, path);
    if (LIST_OPERATORS.has(op)) {
      if (!Array.isArray(arg)) throw this.fail(`${op} on '${path}' needs a list`);
      // As MongoDB: no operator among the members, but for `$all` of `$elemMatch` conditions.
      const conditions = arg.filter((x) => isPlainObject(x) && Object.keys(x).some(isOperator));
      if (conditions.length > 0) {
        const elemMatches = op === "$all" && conditions.length === arg.length &&
          conditions.every((x) => Object.keys(x as object).join() === "$elemMatch");
        if (!elemMatches) {
          throw this.fail(`${op} on '${path}' takes values, not operators`);
        }
        return arg.map((x) => ({ $elemMatch: this.elemMatch(x.$elemMatch, rules, path) }));
      }
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

  private elemMatch(arg: unknown, rules: FieldAt, path: string): unknown {
    if (!isPlainObject(arg)) throw this.fail(`$elemMatch on '${path}' needs an object`);
    const member = rules && rules !== "free" && rules.isList ? rules.member : undefined;
    const keys = Object.keys(arg);
    const operatorForm = keys.length > 0 &&
      keys.every((k) => k.startsWith("$") && !LOGICAL_OPERATORS.has(k) && !OPAQUE_OPERATORS.has(k));
    if (operatorForm) return this.condition(arg, member ?? "free", path);
    return this.query(arg, path, member ? (key) => fieldBelow(member, key) : () => "free");
  }

  /**
   * A value compared with the elements of a fixed-size list (`items`): coerced as the first
   * item rules whose type it then fits (an ObjectId for `objectid` items, as Eve casts it);
   * a string stays a string when any item is typed `string`, and a value no item fits is
   * left as it is.
   */
  private itemValue(v: unknown, items: readonly SchemaField[]): unknown {
    if (v === null || isPlainObject(v) || Array.isArray(v)) return v;
    if (typeof v === "string" && items.some((i) => i.types.some((t) => t.base === "string"))) {
      return v;
    }
    for (const item of items) {
      if (item.types.length === 0 || item.isList) continue;
      const coerced = coerceTo(v, item.types, this.coerce);
      if (item.types.some((t) => t.stored(coerced))) return coerced;
    }
    return v;
  }

  /** Coerces a value to the field's type (dates, ObjectIds ...) and checks it fits. */
  private value(v: unknown, rules: FieldAt, path: string): unknown {
    if (v === null) return v;
    if (!rules || rules === "free" || (rules.types.length === 0 && !rules.member)) {
      return this.untyped(v);
    }
    if (rules.isList) {
      const member = rules.member;
      const items = rules.items ?? [];
      if (Array.isArray(v)) {
        if (member) return v.map((x) => this.value(x, member, path));
        // A whole fixed-size list: each value read by its position's rules.
        return v.map((x, i) => items[i] ? this.itemValue(x, [items[i]]) : x);
      }
      // Equality with one value matches lists containing it.
      return member ? this.value(v, member, path) : this.itemValue(v, items);
    }
    const types = rules.types;
    const coerced = coerceTo(v, types, this.coerce);
    if (this.options.validateFiltering && types.length && !types.some((t) => t.stored(coerced))) {
      const hint = types.some((t) => t.base === "datetime")
        ? ` (DATE_FORMAT ${this.options.dateFormat})`
        : "";
      const names = types.map((t) => t.name).join(" or ");
      throw this.fail(`filter on '${path}' is invalid: not a valid ${names}${hint}`);
    }
    return coerced;
  }

  /**
   * A value for a field the schema does not type (undeclared, schemaless, `{}` rules), read
   * as Eve reads it: a date in DATE_FORMAT becomes a date and a 24-hex string an ObjectId
   * (unless `query_objectid_as_string`), in lists too. Fields typed `string` never get here,
   * so their values stay strings.
   */
  private untyped(v: unknown): unknown {
    if (Array.isArray(v)) return v.map((x) => this.untyped(x));
    if (typeof v !== "string") return v;
    const date = this.options.parseDate(v);
    if (date) return date;
    if (this.options.objectIdAsString || !HEX24.test(v)) return v;
    return parseObjectId(v) ?? v;
  }
}

/** Whether a key names an operator (`$in`, `$elemMatch`...). */
const isOperator = (key: string) => key.startsWith("$");
