/**
 * Every document field a checked filter can read, resolved statically: field names of the
 * query itself (`$and`/`$or`/`$nor`, `$not`, `$elemMatch` included) and, inside `$expr`, each
 * field path (`"$a.b"`), `$$ROOT`/`$$CURRENT` and their sub-paths, `$getField` with its
 * implicit `$$CURRENT` input, and the variables `$let`, `$map`, `$filter` and `$reduce` bind.
 *
 * The walk is an allowlist: an operator it does not know is refused, a variable must be bound
 * (or be `$$NOW`, `$$CLUSTER_TIME`, `$$REMOVE`), and anything that can see a whole document
 * (`$$ROOT`, `$$CURRENT`, `$getField` of a computed name, `$jsonSchema`, `$where`, `$text`) is
 * reported as such, so the read policy can refuse it where some field is not readable.
 * A variable only ever holds a value computed from references already reported, so what
 * it holds is as readable as they are. `$literal` content is inert.
 */
import { QueryError } from "./errors.ts";
import { isPlainObject } from "../util/plain.ts";
import { EXPRESSION_OPERATORS } from "./sandbox.ts";

/** What {@link visitReferences} reports. */
export interface ReferenceVisitor {
  /** A dotted field path read from the document's root. */
  field(path: string): void;
  /** Something reads the whole document; `what` names it (never a field). */
  whole(what: string): void;
}

/** System variables an expression may use: none of them holds a document. */
const SYSTEM_VARIABLES: ReadonlySet<string> = new Set(["NOW", "CLUSTER_TIME", "REMOVE"]);

/** Query-level operators that see the whole document: `$where` code, schemas, text indexes. */
const WHOLE_QUERY_OPERATORS: ReadonlySet<string> = new Set(["$where", "$jsonSchema", "$text"]);

/** A user variable name, as MongoDB accepts it: a lower-case or non-ASCII first letter. */
const VARIABLE_NAME = /^[a-z\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*$/;

/** Deepest nesting walked (the JSON reader's depth bound is far below it). */
const MAX_DEPTH = 256;

type Scope = ReadonlySet<string>;
const NO_VARIABLES: Scope = new Set();

/**
 * Reports every field `filter` (already checked by `checkFilter`) can read to `visitor`.
 * @throws QueryError (400, naming `param`) on an operator outside the allowlist, an unbound
 * or system variable, or a variable name MongoDB refuses.
 */
export function visitReferences(filter: unknown, param: string, visitor: ReferenceVisitor): void {
  new Walker(param, visitor).query(filter, "", 0);
}

class Walker {
  constructor(private readonly param: string, private readonly visitor: ReferenceVisitor) {}

  private fail(message: string): QueryError {
    return new QueryError(`${this.param}: ${message}`, this.param);
  }

  private deeper(depth: number): number {
    if (depth >= MAX_DEPTH) throw this.fail("too deeply nested");
    return depth + 1;
  }

  /** A query document whose field names lie below `prefix`. */
  query(q: unknown, prefix: string, depth: number): void {
    const d = this.deeper(depth);
    if (!isPlainObject(q)) return;
    for (const [key, value] of Object.entries(q)) {
      if (!key.startsWith("$")) {
        const path = prefix ? `${prefix}.${key}` : key;
        this.visitor.field(path);
        this.condition(value, path, d);
      } else if (key === "$and" || key === "$or" || key === "$nor") {
        if (Array.isArray(value)) { for (const sub of value) this.query(sub, prefix, d); }
      } else if (key === "$expr") {
        this.expression(value, NO_VARIABLES, d);
      } else if (WHOLE_QUERY_OPERATORS.has(key)) {
        this.visitor.whole(key);
      } else if (key !== "$comment") {
        throw this.fail(`operator ${key} is not valid at query level`);
      }
    }
  }

  /** The condition on one field: values are data; `$elemMatch` queries lie below the field. */
  private condition(v: unknown, path: string, depth: number): void {
    const d = this.deeper(depth);
    if (!isPlainObject(v)) return;
    for (const [op, arg] of Object.entries(v)) {
      if (op === "$not") this.condition(arg, path, d);
      else if (op === "$elemMatch" && isPlainObject(arg)) {
        const keys = Object.keys(arg);
        const operatorForm = keys.length > 0 &&
          keys.every((k) =>
            k.startsWith("$") && k !== "$and" && k !== "$or" && k !== "$nor" && k !== "$expr" &&
            !WHOLE_QUERY_OPERATORS.has(k) && k !== "$comment"
          );
        if (operatorForm) this.condition(arg, path, d);
        else this.query(arg, path, d);
      }
    }
  }

  /** An aggregation expression evaluated with the variables in `scope` bound. */
  expression(e: unknown, scope: Scope, depth: number): void {
    const d = this.deeper(depth);
    if (typeof e === "string") return this.reference(e, scope);
    if (Array.isArray(e)) {
      for (const x of e) this.expression(x, scope, d);
      return;
    }
    if (!isPlainObject(e)) return;
    for (const [key, value] of Object.entries(e)) {
      if (key.startsWith("$")) this.operator(key, value, scope, d);
      // An object literal: its keys name output fields, its values are expressions.
      else this.expression(value, scope, d);
    }
  }

  /** A string: a field path, a variable (with a sub-path) or a plain string. */
  private reference(s: string, scope: Scope): void {
    if (!s.startsWith("$")) return;
    if (!s.startsWith("$$")) {
      const path = s.slice(1);
      if (path === "" || path.split(".").some((p) => p === "")) {
        throw this.fail(`invalid field path ${JSON.stringify(s)}`);
      }
      this.visitor.field(path);
      return;
    }
    const dot = s.indexOf(".");
    const name = dot < 0 ? s.slice(2) : s.slice(2, dot);
    const rest = dot < 0 ? "" : s.slice(dot + 1);
    if (name === "ROOT" || name === "CURRENT") {
      if (rest === "") this.visitor.whole(`$$${name}`);
      else if (rest.split(".").some((p) => p === "")) {
        throw this.fail(`invalid field path ${JSON.stringify(s)}`);
      } else this.visitor.field(rest);
      return;
    }
    if (SYSTEM_VARIABLES.has(name) || scope.has(name)) return;
    throw this.fail(`unknown variable ${JSON.stringify(`$$${name}`)}`);
  }

  private operator(op: string, arg: unknown, scope: Scope, depth: number): void {
    if (!EXPRESSION_OPERATORS.has(op)) throw this.fail(`operator ${op} is not allowed in $expr`);
    switch (op) {
      case "$literal":
        return;
      case "$let":
        return this.let(arg, scope, depth);
      case "$map":
      case "$filter":
      case "$reduce":
        return this.iterator(op, arg, scope, depth);
      case "$getField":
        return this.getField(arg, scope, depth);
    }
    this.expression(arg, scope, depth);
  }

  private let(arg: unknown, scope: Scope, depth: number): void {
    if (!isPlainObject(arg) || !isPlainObject(arg.vars) || !Object.hasOwn(arg, "in")) {
      throw this.fail("$let needs {vars: {...}, in: ...}");
    }
    this.onlyKeys("$let", arg, ["vars", "in"]);
    const inner = new Set(scope);
    for (const [name, value] of Object.entries(arg.vars)) {
      this.expression(value, scope, depth);
      inner.add(this.variableName("$let", name));
    }
    this.expression(arg.in, inner, depth);
  }

  /** `$map`, `$filter` and `$reduce`: their bodies see the element (and the accumulator). */
  private iterator(op: string, arg: unknown, scope: Scope, depth: number): void {
    if (!isPlainObject(arg)) throw this.fail(`${op} needs an object argument`);
    const bodies = op === "$map" ? ["in"] : op === "$filter" ? ["cond"] : ["in"];
    const allowed = op === "$reduce"
      ? ["input", "initialValue", "in"]
      : op === "$map"
      ? ["input", "as", "in"]
      : ["input", "as", "cond", "limit"];
    this.onlyKeys(op, arg, allowed);
    const inner = new Set(scope);
    if (op === "$reduce") {
      inner.add("this").add("value");
    } else {
      const as = arg.as ?? "this";
      if (typeof as !== "string") throw this.fail(`${op}: 'as' must be a variable name`);
      inner.add(this.variableName(op, as));
    }
    for (const [key, value] of Object.entries(arg)) {
      if (key === "as") continue;
      this.expression(value, bodies.includes(key) ? inner : scope, depth);
    }
  }

  /**
   * `$getField`: a constant name read from `input`, or from `$$CURRENT` (the document) when
   * there is no input. A computed name without an input may read any field: a whole read.
   */
  private getField(arg: unknown, scope: Scope, depth: number): void {
    const spec = isPlainObject(arg) ? arg : { field: arg };
    this.onlyKeys("$getField", spec, ["field", "input"]);
    const name = constantString(spec.field);
    if (Object.hasOwn(spec, "input")) {
      this.expression(spec.input, scope, depth);
      // A computed name picks a field of a value already read.
      if (name === undefined) this.expression(spec.field, scope, depth);
      return;
    }
    if (name === undefined || name === "" || name.includes(".") || name.startsWith("$")) {
      // Not a plain top-level name: it could stand for any field.
      this.expression(spec.field, scope, depth);
      this.visitor.whole("$getField");
      return;
    }
    this.visitor.field(name);
  }

  private variableName(op: string, name: string): string {
    if (!VARIABLE_NAME.test(name)) {
      throw this.fail(`${op}: invalid variable name ${JSON.stringify(name)}`);
    }
    return name;
  }

  private onlyKeys(op: string, arg: Record<string, unknown>, allowed: readonly string[]): void {
    for (const key of Object.keys(arg)) {
      if (!allowed.includes(key)) throw this.fail(`${op}: unknown argument ${JSON.stringify(key)}`);
    }
  }
}

/** A string constant (`"x"` or `{"$literal": "x"}`), else undefined. */
function constantString(e: unknown): string | undefined {
  if (typeof e === "string") return e.startsWith("$") ? undefined : e;
  if (isPlainObject(e) && Object.keys(e).length === 1 && typeof e.$literal === "string") {
    return e.$literal;
  }
  return undefined;
}
