/**
 * Public types of the validation engine.
 */
import type { DataRelation } from "../domain/types.ts";
import type { CustomType, FieldType } from "../domain/field-types.ts";
import type { SchemaModel } from "../domain/schema.ts";
import type { Doc } from "../store/store.ts";

/** Validation issues: field name -> message, nested fields (and list indexes) nested. */
export type Issues = { [field: string]: string | Issues };

/** Thrown by `compileSchema` when a schema cannot be understood; lists every problem. */
export class SchemaError extends Error {
  constructor(
    /** One line per problem, each starting with the dotted path of the offending rule. */
    readonly problems: string[],
  ) {
    super(`invalid schema:\n  ${problems.join("\n  ")}`);
    this.name = "SchemaError";
  }
}

/**
 * A custom validation rule, used in a schema under its registered name.
 *
 * `check` receives the field value, the rule's argument from the schema and the dotted field
 * path plus the whole (normalized) document; it returns an error message, or null when the
 * value is fine. It may be async (e.g. to query the database). It runs only for values that
 * are present and not null.
 *
 * @example
 * ```ts
 * const rules = {
 *   multiple_of: {
 *     check: (value, arg) =>
 *       typeof value === "number" && value % Number(arg) !== 0 ? `must be a multiple of ${arg}` : null,
 *   },
 * };
 * compileSchema({ qty: { type: "integer", multiple_of: 5 } }, { ...options, rules });
 * ```
 */
export interface CustomRule {
  check(
    value: unknown,
    ruleArg: unknown,
    ctx: { field: string; doc: Doc },
  ): string | null | Promise<string | null>;
}

export type { CustomType } from "../domain/field-types.ts";

/**
 * A named `coerce` function (validation/coercers.ts): the value to validate and store, or a
 * throw whose message becomes the field's issue. Synchronous.
 */
export type Coercer = (value: unknown) => unknown;

/**
 * A named `default_setter` function: the value of a field the document lacks, computed from
 * the dict level it belongs to (the document for a top-level field), or a throw whose message
 * becomes the field's issue. Synchronous; undefined leaves the field unset.
 */
export type DefaultSetter = (doc: Doc) => unknown;

export interface CompileOptions {
  /** Location used in SchemaError messages, e.g. `"DOMAIN.people.schema"`. */
  path: string;
  /** Resource-level allow_unknown; nested dicts may set their own `allow_unknown`. */
  allowUnknown: boolean;
  /** strftime-style DATE_FORMAT used to read datetime strings. */
  dateFormat: string;
  /** ALLOW_CUSTOM_FIELDS_IN_GEOJSON. */
  allowCustomFieldsInGeojson: boolean;
  /** Top-level fields the service manages (`_created`, `_etag` ...); clients may not send them. */
  metaFields: string[];
  /**
   * Service-managed fields that, as in Eve, a client sending them is told are unknown rather
   * than read-only (the version fields: they are no part of the schema).
   */
  unknownMetaFields?: string[];
  /** ID_FIELD. When the schema does not declare it, it is an optional `objectid` field. */
  idField: string;
  /** VERSION field name, used by `data_relation` with `version: true`; default `_version`. */
  versionField?: string;
  /** Names of all resources; when given, a `data_relation` to another name is a schema error. */
  resources?: string[];
  /** Extra rules, by rule name. */
  rules?: Record<string, CustomRule>;
  /** Extra types, by type name. */
  types?: Record<string, CustomType>;
  /** `coerce` functions by name, besides the built-in `int` and `float`. */
  coercers?: Record<string, Coercer>;
  /** `default_setter` functions by name. */
  defaultSetters?: Record<string, DefaultSetter>;
  /**
   * The resource's schema model, built at start-up with the same types; built from the
   * schema when absent.
   */
  model?: SchemaModel;
}

export interface ValidationContext {
  mode: "create" | "replace" | "patch";
  /** Stored document for replace/patch. */
  original?: Doc;
  /**
   * Patch only: whether nested dicts in the updates merge into the stored ones (default
   * true, MERGE_NESTED_DOCUMENTS) or replace them.
   */
  mergeNested?: boolean;
  /**
   * Create/replace: dotted names (`{"a.b": 1}`) become nested fields (Eve's
   * NORMALIZE_DOTTED_FIELDS / `normalize_dotted_fields`); otherwise they are invalid names.
   */
  normalizeDotted?: boolean;
  /**
   * The document came from a form (urlencoded or multipart fields, all text): number and
   * boolean fields read the text as Eve does.
   */
  form?: boolean;
  /** true if another live (non soft-deleted) document has field == value (excluding the given id). */
  isDuplicate(
    field: string,
    value: unknown,
    excludeId?: unknown,
    options?: { owned?: boolean },
  ): Promise<boolean>;
  /** true if the referenced document (or version) exists and is not soft-deleted. */
  relationExists(relation: DataRelation, value: unknown): Promise<boolean>;
}

export interface CompiledSchema {
  /**
   * Coerces (datetime strings in DATE_FORMAT -> Date, objectid hex -> ObjectId, decimal128 ->
   * Decimal128, uuid strings kept), applies defaults per mode, checks every rule.
   * create/replace: full document. patch: the updates object (keys may be dotted "a.b" or
   * nested); returns the normalized updates with the same keys. `original` is used for
   * readonly, dependencies and rules that look at the merged document.
   */
  validate(doc: Doc, ctx: ValidationContext): Promise<{ doc: Doc; issues: Issues | null }>;
  /** Fields with `unique: true` (dotted paths), so the service can create unique indexes. */
  uniqueFields: string[];
  /**
   * Fields with `unique_within_resource` or `unique_to_user`: checked by query only, never
   * indexed.
   */
  scopedUniqueFields: string[];
  /** Dotted path -> data_relation (the schema model's). */
  relations: Readonly<Record<string, DataRelation>>;
  /**
   * Defaults of fields missing from `doc` (for normalize_on_patch): top-level fields by name,
   * fields of nested dicts present in `doc` by dotted path; read-only fields excluded.
   * Values are coerced.
   */
  defaults(doc: Doc): Doc;
  /**
   * A PATCH body as sent (dotted keys allowed) with its fields renamed and unknown names of
   * purging dicts dropped, as validation reads it (see validation/names.ts).
   */
  renamed(sent: Doc): Doc;
  /** The schema as shown by the schema endpoint (JSON-safe, frozen). */
  describe(): unknown;
  /**
   * The compiled forms, to read only: the root JSON Schema given to ajv (its `eve*` keywords
   * are this engine's own) and the field tree beside it. The API description (src/openapi/)
   * translates them instead of reading the raw schema a second way.
   */
  model(): { json: Readonly<Record<string, unknown>>; root: DictNode };
}

/** Rules of one field, resolved. */
export interface FieldNode {
  /** Dotted path, list members share their list's path. */
  path: string;
  /** Type names as written. */
  types: string[];
  /** Types to coerce to: the field's own plus the types named in *of branches. */
  coerceTypes: FieldType[];
  nullable: boolean;
  readonly: boolean;
  required: boolean;
  /** `default_setter`: computes the value of a missing field (after the plain defaults). */
  defaultSetter?: { name: string; fn: DefaultSetter };
  /** `coerce`: the functions the value goes through first, in turn. */
  coerce?: Array<{ name: string; fn: Coercer }>;
  /** `rename`: the name the field's value is moved to (see validation/names.ts). */
  rename?: string;
  /**
   * `rename_handler`: coercers that make the name the value is moved to from the name sent
   * (a dict field's own, or the rules of a dict's unknown names).
   */
  renameHandler?: Array<{ name: string; fn: Coercer }>;
  unique: boolean;
  /** `unique_to_user`: unique among the documents of the requester (AUTH_FIELD). */
  uniqueToUser?: boolean;
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
  /** `purge_unknown` (with unknown names refused): they are dropped before validation. */
  purge: boolean;
}
