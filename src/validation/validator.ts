/**
 * `compileSchema`: builds the CompiledSchema of a resource (ajv validator + field tree) and
 * runs the create / replace / patch validation flow.
 */
import type { ValidateFunction } from "ajv";
import type { ResourceSchema } from "../domain/types.ts";
import type { SchemaModel } from "../domain/schema.ts";
import type { Doc } from "../store/store.ts";
import { DBRef, Decimal128, ObjectId } from "../doc/bson.ts";
import { type DictNode, SchemaCompiler } from "./compiler.ts";
import { checkDateFormat, formatDate, parseDate } from "./dates.ts";
import { addIssue, ajvIssues, filterIssues, hasIssue, mergeIssues } from "./issues.ts";
import { createAjv } from "./keywords.ts";
import {
  canon,
  deepMerge,
  expandDotted,
  getPath,
  keyIssues,
  missingDefaults,
  type NormalizeEnv,
  normDict,
  type PendingCheck,
  readonlyIssues,
  setPath,
  touchedPaths,
} from "./normalize.ts";
import { TypeChecker } from "./typecheck.ts";
import { renamedAndPurged } from "./names.ts";
import { mapLimited } from "../util/map_limited.ts";
import { holdsKey, isPlainObject } from "../util/plain.ts";
import { getOwn, setOwn } from "../domain/keys.ts";
import { type CoerceContext, TypeTable } from "../domain/field-types.ts";
import { buildSchemaModel } from "../domain/schema.ts";
import {
  type CompiledSchema,
  type CompileOptions,
  type Issues,
  SchemaError,
  type ValidationContext,
} from "./types.ts";

/** How many async checks (unique, relations, custom rules) run at the same time. */
const CHECK_CONCURRENCY = 8;
const MAX_SHOWN = 120;

/** Renders a value inside an issue message. */
export function showValue(v: unknown, dateFormat: string): string {
  if (typeof v === "string") return v.length > MAX_SHOWN ? `${v.slice(0, MAX_SHOWN)}...` : v;
  if (v instanceof Date) return formatDate(v, dateFormat);
  if (v instanceof ObjectId) return v.toHexString();
  if (v instanceof Decimal128) return v.toString();
  const s = JSON.stringify(v) ?? String(v);
  return s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}...` : s;
}

/**
 * Compiles an Eve/Cerberus resource schema once, at start-up.
 * @throws SchemaError listing every problem found (with its path) when the schema is invalid.
 */
export function compileSchema(schema: ResourceSchema, options: CompileOptions): CompiledSchema {
  const table = new TypeTable({
    custom: options.types,
    allowCustomGeo: options.allowCustomFieldsInGeojson,
  });
  const tc = new TypeChecker(table);
  const model = options.model ?? buildSchemaModel(schema, {
    types: table,
    idField: options.idField,
    allowUnknown: options.allowUnknown,
  });
  const compiler = new SchemaCompiler(options, tc);
  const { node: root, json } = compiler.compileRoot(schema, model);
  const problems = [...compiler.problems];
  const fmtProblem = checkDateFormat(options.dateFormat);
  if (fmtProblem) problems.push(`DATE_FORMAT: ${fmtProblem}`);
  let described: unknown = {};
  try {
    described = deepFreeze(JSON.parse(JSON.stringify(schema)));
  } catch (e) {
    problems.push(`${options.path}: schema is not JSON-safe (${(e as Error).message})`);
  }
  const show = (v: unknown) => showValue(v, options.dateFormat);
  let validateFn: ValidateFunction | undefined;
  const ajv = createAjv(tc, show);
  if (problems.length === 0) {
    try {
      validateFn = ajv.compile(json);
    } catch (e) {
      problems.push(`${options.path}: ${(e as Error).message}`);
    }
  }
  if (problems.length || !validateFn) throw new SchemaError(problems);
  const coerce: CoerceContext = {
    parseDate: (text, format) => parseDate(text, format ?? options.dateFormat),
  };
  // A PATCH of a schema whose rules read their own field alone validates the fields it
  // touches, and no others: the document's own `required` would name the others.
  const { required: _required, ...touchedJson } = json;
  const compileTouched = () => ajv.compile(touchedJson);
  return new Compiled(root, { whole: validateFn, compileTouched }, {
    compiler,
    model,
    options,
    coerce,
    forms: { described, json, show },
  });
}

function deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null) {
    Object.values(v).forEach(deepFreeze);
    Object.freeze(v);
  }
  return v;
}

class Compiled implements CompiledSchema {
  readonly uniqueFields: string[];
  readonly scopedUniqueFields: string[];
  readonly relations: CompiledSchema["relations"];
  private readonly meta: Set<string>;
  /**
   * Whether every rule of the schema reads its own field's value alone: no `dependencies`,
   * `excludes` (nor a required field with one) and no custom rule (which sees the whole
   * document). A PATCH then validates only the top-level fields it touches (see
   * {@link Compiled.validate}).
   */
  private readonly fieldLocal: boolean;
  /** The ajv validator of whole documents. */
  private readonly ajvValidate: ValidateFunction;
  /** The ajv validator of a PATCH's touched fields, compiled on the first such PATCH. */
  private ajvTouched: ValidateFunction | undefined;
  private readonly compileTouched: () => ValidateFunction;
  private readonly opts: CompileOptions;
  private readonly coerce: CoerceContext;
  private readonly forms: {
    described: unknown;
    json: Record<string, unknown>;
    show: (v: unknown) => string;
  };

  constructor(
    private readonly root: DictNode,
    ajv: { whole: ValidateFunction; compileTouched: () => ValidateFunction },
    parts: {
      compiler: SchemaCompiler;
      model: SchemaModel;
      options: CompileOptions;
      coerce: CoerceContext;
      forms: { described: unknown; json: Record<string, unknown>; show: (v: unknown) => string };
    },
  ) {
    this.uniqueFields = [...parts.compiler.uniqueFields];
    this.scopedUniqueFields = [...parts.compiler.scopedUniqueFields];
    this.relations = parts.model.relations;
    this.opts = parts.options;
    this.coerce = parts.coerce;
    this.forms = parts.forms;
    this.meta = new Set(this.opts.metaFields.filter((f) => f !== this.opts.idField));
    // The compiled JSON Schema is ours, bounded by the schema's own depth: searched to the end.
    this.fieldLocal = !holdsKey(parts.forms.json, CROSS_FIELD, Infinity) &&
      !parts.compiler.usesCustomRules;
    this.ajvValidate = ajv.whole;
    this.compileTouched = ajv.compileTouched;
  }

  describe(): unknown {
    return this.forms.described;
  }

  model(): { json: Readonly<Record<string, unknown>>; root: DictNode } {
    return { json: this.forms.json, root: this.root };
  }

  defaults(doc: Doc): Doc {
    return missingDefaults(doc, this.root, { env: this.env(false) });
  }

  renamed(sent: Doc): Doc {
    return renamedAndPurged(sent, this.root, { dotted: true });
  }

  private env(applyDefaults: boolean, original?: Doc, form?: boolean): NormalizeEnv {
    const coerce = form ? { ...this.coerce, form } : this.coerce;
    return { coerce, applyDefaults, original, checks: [] };
  }

  async validate(sent: Doc, ctx: ValidationContext): Promise<{ doc: Doc; issues: Issues | null }> {
    const issues: Issues = {};
    if (!isPlainObject(sent)) {
      addIssue(issues, ["_document"], "document must be an object");
      return { doc: sent, issues };
    }
    const patch = ctx.mode === "patch";
    const dotted = patch || ctx.normalizeDotted === true;
    // Hostile names stop here: no later step walks or copies the document.
    if (keyIssues(sent, [], { allowDots: dotted, issues })) return { doc: sent, issues };
    // Renamed and purged first: every later step sees the document Cerberus would.
    const input = renamedAndPurged(sent, this.root, { dotted, issues });
    const expanded = dotted ? expandDotted(input, issues) : input;
    const original = ctx.mode === "create" ? undefined : ctx.original;
    this.metaIssues(expanded, original, issues);
    const env = this.env(!patch, ctx.mode === "replace" ? original : undefined, ctx.form);
    env.issues = issues;
    readonlyIssues(expanded, this.root, { env, issues, original, path: [] });

    // A PATCH is validated as the document it makes: its changes merged into the stored
    // document. Only the issues of the fields it touches are kept (below), so when no rule
    // reads another field, the fields it does not touch are left out of the walk (a PATCH of
    // one field of the shop's customers: half the garbage its validation made).
    const touchedOnly = patch && this.fieldLocal;
    const stored = original ?? {};
    const doc = patch
      ? this.merge(input, touchedOnly ? touchedFields(stored, input) : stored, {
        mergeNested: ctx.mergeNested ?? true,
      })
      : this.stripMeta(expanded);
    const normalized = normDict(doc, this.root, { env, path: [] });
    const validateFn = touchedOnly ? this.ajvTouched ??= this.compileTouched() : this.ajvValidate;
    const structural = validateFn(normalized)
      ? null
      : ajvIssues(validateFn.errors, this.forms.show);
    if (structural) mergeIssues(issues, structural);

    let keep = (_: string[]) => true;
    if (patch) {
      const touched = touchedPaths(input, ctx.mergeNested ?? true);
      keep = (p) => p[0] === "_document" || touched.some((t) => isPrefix(t, p) || isPrefix(p, t));
    }
    const checks = env.checks.filter((c) => keep(c.path) && !hasIssue(issues, c.path));
    const run: CheckRun = { doc: normalized, ctx, excludeId: original?.[this.opts.idField] };
    const found = await runLimited(checks, (c) => this.asyncCheck(c, run));
    for (const [i, msg] of found) addIssue(issues, checks[i].path, msg);

    const result = patch ? pickUpdates(input, normalized) : normalized;
    return { doc: result, issues: filterIssues(issues, keep) };
  }

  /** Meta fields are written by the service only; the id may be sent but not changed. */
  private metaIssues(sent: Doc, original: Doc | undefined, issues: Issues) {
    for (const k of Object.keys(sent)) {
      if (this.meta.has(k)) {
        const unknown = this.opts.unknownMetaFields?.includes(k);
        addIssue(issues, [k], unknown ? "unknown field" : "field is read-only");
      }
    }
    const id = this.opts.idField;
    if (original && id in sent && id in original && canon(sent[id]) !== canon(original[id])) {
      addIssue(issues, [id], "field is read-only");
    }
  }

  private stripMeta(doc: Doc): Doc {
    const keys = Object.keys(doc);
    if (!keys.some((k) => this.meta.has(k))) return doc;
    const out: Doc = {};
    for (const k of keys) if (!this.meta.has(k)) setOwn(out, k, doc[k]);
    return out;
  }

  /**
   * The stored document with the updates applied (dotted keys set one nested field), without
   * its meta fields: what {@link stripMeta} of the merged document gives, built as one copy
   * of the top level (updates under a meta field are left out with it).
   */
  private merge(updates: Doc, original: Doc, { mergeNested }: { mergeNested: boolean }): Doc {
    const out: Doc = {};
    for (const k of Object.keys(original)) if (!this.meta.has(k)) setOwn(out, k, original[k]);
    for (const key of Object.keys(updates)) {
      const value = updates[key];
      const path = key.split(".");
      if (path.some((s) => s === "" || s.startsWith("$")) || this.meta.has(path[0])) continue;
      const cur = getPath(out, path);
      const merged = mergeNested && isPlainObject(value) && isPlainObject(cur)
        ? deepMerge(cur, value)
        : value;
      // The top level is this copy's own: set in place; levels below are copied on the way.
      const [head] = path;
      const prev = getOwn(out, head);
      setOwn(
        out,
        head,
        path.length === 1
          ? merged
          : setPath(isPlainObject(prev) ? prev : {}, path.slice(1), merged),
      );
    }
    return out;
  }

  /** Runs one value's unique / data_relation / custom checks; their problems, or null. */
  private async asyncCheck(
    c: PendingCheck,
    { doc, ctx, excludeId }: CheckRun,
  ): Promise<string | null> {
    const { node, value, path } = c;
    const problems: string[] = [];
    // The field's path without list positions: a list member is unique when no other
    // document's list holds it.
    if (node.unique && await ctx.isDuplicate(node.path, value, excludeId)) {
      problems.push(`value '${this.forms.show(value)}' is not unique`);
    } else if (
      node.uniqueToUser && await ctx.isDuplicate(node.path, value, excludeId, { owned: true })
    ) {
      problems.push(`value '${this.forms.show(value)}' is not unique`);
    }
    const rel = node.relation;
    if (rel) {
      const refs = Array.isArray(value) && !rel.version ? value : [value];
      const versionField = this.opts.versionField ?? "_version";
      for (const ref of refs) {
        if (
          rel.version && isPlainObject(ref) &&
          (ref[rel.field] === undefined || ref[versionField] === undefined)
        ) {
          // Eve's words for a versioned reference missing one of its two fields.
          problems.push(
            `versioned data_relation must be a dict with fields '${rel.field}' and '${versionField}'`,
          );
          continue;
        }
        if (ref === null || await ctx.relationExists(rel, ref)) continue;
        // A DBRef is named by its id, as in Eve.
        const id = rel.version && isPlainObject(ref)
          ? ref[rel.field]
          : ref instanceof DBRef
          ? ref.oid
          : ref;
        const at = rel.version && isPlainObject(ref)
          ? ` at version '${this.forms.show(ref[versionField])}'.`
          : "";
        problems.push(
          `value '${
            this.forms.show(id)
          }' must exist in resource '${rel.resource}', field '${rel.field}'${at}`,
        );
      }
    }
    for (const [name, arg] of node.custom) {
      const msg = await this.opts.rules![name].check(value, arg, { field: path.join("."), doc });
      if (msg) problems.push(msg);
    }
    return problems.length ? problems.join("; ") : null;
  }
}

/** What the async checks of one validation share. */
interface CheckRun {
  /** The normalized document (custom rules see it). */
  doc: Doc;
  ctx: ValidationContext;
  /** The stored document's id, left out of the uniqueness query. */
  excludeId: unknown;
}

function isPrefix(prefix: string[], path: string[]): boolean {
  return prefix.length <= path.length && prefix.every((s, i) => s === path[i]);
}

/** The Ajv keywords of rules that read other fields than their own (keywords.ts). */
const CROSS_FIELD = new Set(["eveDependencies", "eveExcludes", "eveRequiredUnless"]);

/**
 * The top-level fields of `stored` that `updates` names (a dotted name by its first part),
 * in the stored document's order.
 */
function touchedFields(stored: Doc, updates: Doc): Doc {
  const heads = new Set<string>();
  for (const key of Object.keys(updates)) {
    const dot = key.indexOf(".");
    heads.add(dot < 0 ? key : key.slice(0, dot));
  }
  const out: Doc = {};
  for (const key of Object.keys(stored)) {
    if (heads.has(key)) setOwn(out, key, getOwn(stored, key));
  }
  return out;
}

/** The normalized values of exactly the keys the client sent. */
function pickUpdates(updates: Doc, normalized: Doc): Doc {
  const out: Doc = {};
  for (const key of Object.keys(updates)) {
    const v = getPath(normalized, key.split("."));
    out[key] = v === undefined ? updates[key] : v;
  }
  return out;
}

/** Runs `fn` over `items` with bounded concurrency; returns [index, result] for non-null ones. */
async function runLimited<T>(
  items: T[],
  fn: (item: T) => Promise<string | null>,
): Promise<Array<[number, string]>> {
  const results = await mapLimited(items, CHECK_CONCURRENCY, fn);
  const out: Array<[number, string]> = [];
  for (let i = 0; i < results.length; i++) {
    const r = results[i];
    if (r) out.push([i, r]);
  }
  return out;
}
