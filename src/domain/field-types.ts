/**
 * The one table of field types: for every Eve type name (aliases included), how a value
 * sent as JSON or text becomes the stored value, and how a value is recognised. Validation
 * (documents) and the query checks (`where` values) both ask it.
 */
import { DBRef, Decimal128, ObjectId, parseObjectId } from "../doc/bson.ts";
import { GEO_TYPES, geoJsonProblem } from "./geojson.ts";
import { isPlainObject } from "../util/plain.ts";

/**
 * A custom field type, used as `type: "<name>"` (alone or in a type list).
 *
 * @example
 * ```ts
 * const types = { even: { check: (v) => Number.isInteger(v) && (v as number) % 2 === 0 } };
 * compileSchema({ n: { type: "even" } }, { ...options, types });
 * // { n: 3 } -> issues { n: "must be of even type" }
 * ```
 */
export interface CustomType {
  check(value: unknown): boolean;
}

/** What a coercion may need from the settings. */
export interface CoerceContext {
  /** Reads a date in DATE_FORMAT, or in `format` when given; null when the text does not fit. */
  parseDate(text: string, format?: string): Date | null;
  /** `query_objectid_as_string`: 24-hex strings stay strings, even for objectid fields. */
  objectIdAsString?: boolean;
  /**
   * The value is compared with stored ones (a filter), not stored: what a type holds as
   * stored (a number in a decimal field) stays as it is.
   */
  compared?: boolean;
  /**
   * The value came from a form field (text): as in Eve, text that spells a number or a
   * boolean becomes one for number and boolean fields.
   */
  form?: boolean;
}

/** One field type, with its aliases resolved. */
export interface FieldType {
  /** The name as the schema writes it (used in messages). */
  readonly name: string;
  /** The Eve type it is, aliases resolved (`date` -> `datetime`, `decimal` -> `decimal128`). */
  readonly base: string;
  /** Whether `v` is a value of this type as a client sends it (after coercion). */
  is(v: unknown): boolean;
  /**
   * Whether `v` is a value of this type as stored and compared: a file id for `media`; any
   * number for `decimal128` (MongoDB compares numbers and decimals as numbers).
   */
  stored(v: unknown): boolean;
  /** Turns a JSON or text value into the stored value; returned unchanged when it cannot. */
  coerce(v: unknown, ctx: CoerceContext): unknown;
}

const HEX24 = /^[0-9a-fA-F]{24}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|^[+-]?(Infinity|inf|NaN)$/i;
/** The calendar-day form a `date` field also reads. */
const DAY_FORMAT = "%Y-%m-%d";

/**
 * A JSON DBRef: `{"$ref": "<collection>", "$id": <id>, "$db"?: "<database>"}`, the id a
 * string, number or 24-hex ObjectId, nothing else in it.
 */
export function isDbRefShape(v: unknown): v is { $ref: string; $id: unknown; $db?: string } {
  if (!isPlainObject(v) || !Object.hasOwn(v, "$id")) return false;
  // As in Eve, `$col` names the collection as `$ref` does (one of them).
  const ref = Object.hasOwn(v, "$col") ? (Object.hasOwn(v, "$ref") ? undefined : v.$col) : v.$ref;
  if (typeof ref !== "string") return false;
  if (v.$db !== undefined && typeof v.$db !== "string") return false;
  const id = v.$id;
  return (typeof id === "string" || typeof id === "number") &&
    Object.keys(v).every((k) => k === "$ref" || k === "$col" || k === "$id" || k === "$db");
}

/** The file object the service passes for `media` fields (its bytes, or its stored id). */
function isUpload(v: unknown): boolean {
  return isPlainObject(v) && typeof v.filename === "string" &&
    typeof v.contentType === "string" &&
    (v.data instanceof Uint8Array || v.id instanceof ObjectId);
}

const keep = (v: unknown) => v;

function toDate(v: unknown, ctx: CoerceContext, alsoDay: boolean): unknown {
  if (typeof v !== "string") return v;
  return ctx.parseDate(v) ?? (alsoDay ? ctx.parseDate(v, DAY_FORMAT) : null) ?? v;
}

function toObjectId(v: unknown, ctx: CoerceContext): unknown {
  return typeof v === "string" && HEX24.test(v) && !ctx.objectIdAsString ? parseObjectId(v)! : v;
}

function toDecimal(v: unknown): unknown {
  const s = typeof v === "number" && Number.isFinite(v) ? String(v) : v;
  if (typeof s !== "string" || s.length > 64 || !DECIMAL.test(s)) return v;
  try {
    return Decimal128.fromString(s);
  } catch {
    return v; // not representable: the type check reports it
  }
}

/** Form text spelling a decimal number (`34`, `-1.5`, `2e3`) as that number. */
function formNumber(v: unknown, ctx: CoerceContext): unknown {
  if (!ctx.form || typeof v !== "string" || v.length > 64) return v;
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(v.trim())) return v;
  const n = Number(v);
  return Number.isFinite(n) ? n : v;
}

/** Form text `true`/`1` or `false`/`0` (any case) as a boolean, as Eve reads it. */
function formBoolean(v: unknown, ctx: CoerceContext): unknown {
  if (!ctx.form || typeof v !== "string") return v;
  const text = v.trim().toLowerCase();
  return text === "true" || text === "1" ? true : text === "false" || text === "0" ? false : v;
}

function toDbRef(v: unknown): unknown {
  if (!isDbRefShape(v)) return v;
  const ref = (v as { $col?: string }).$col ?? v.$ref;
  const id = typeof v.$id === "string" && HEX24.test(v.$id) ? parseObjectId(v.$id)! : v.$id;
  return new DBRef(ref, id as ObjectId, v.$db);
}

type Entry = Omit<FieldType, "name" | "stored"> & { stored?: (v: unknown) => boolean };

const isDate = (v: unknown) => v instanceof Date && !Number.isNaN(v.getTime());
const isDecimal = (v: unknown) => v instanceof Decimal128;
const isNumeric = (v: unknown) => isDecimal(v) || (typeof v === "number" && Number.isFinite(v));

/** The built-in types, by every name the schema may use. */
const BUILTIN: Record<string, Entry> = {
  string: { base: "string", is: (v) => typeof v === "string", coerce: keep },
  // A safe integer: beyond 2^53 a JSON number is no longer the integer that was sent.
  integer: { base: "integer", is: (v) => Number.isSafeInteger(v), coerce: formNumber },
  float: {
    base: "float",
    is: (v) => typeof v === "number" && Number.isFinite(v),
    coerce: formNumber,
  },
  number: {
    base: "number",
    is: (v) => typeof v === "number" && Number.isFinite(v),
    coerce: formNumber,
  },
  boolean: { base: "boolean", is: (v) => typeof v === "boolean", coerce: formBoolean },
  list: { base: "list", is: Array.isArray, coerce: keep },
  dict: { base: "dict", is: isPlainObject, coerce: keep },
  datetime: { base: "datetime", is: isDate, coerce: (v, ctx) => toDate(v, ctx, false) },
  // Eve's alias of datetime; it also reads a calendar day (`2013-04-02`).
  date: { base: "datetime", is: isDate, coerce: (v, ctx) => toDate(v, ctx, true) },
  objectid: { base: "objectid", is: (v) => v instanceof ObjectId, coerce: toObjectId },
  decimal128: { base: "decimal128", is: isDecimal, stored: isNumeric, coerce: toDecimal },
  // Eve's name for Decimal128.
  decimal: { base: "decimal128", is: isDecimal, stored: isNumeric, coerce: toDecimal },
  dbref: { base: "dbref", is: (v) => v instanceof DBRef, coerce: toDbRef },
  // Sent as an uploaded file, stored as the file's id.
  media: { base: "media", is: isUpload, stored: (v) => v instanceof ObjectId, coerce: keep },
  uuid: { base: "uuid", is: (v) => typeof v === "string" && UUID.test(v), coerce: keep },
};

/** The field types of one service: the built-in ones and the custom ones it registers. */
export class TypeTable {
  private readonly types = new Map<string, FieldType>();
  /** ALLOW_CUSTOM_FIELDS_IN_GEOJSON. */
  private readonly allowCustomGeo: boolean;

  constructor(
    options: { custom?: Record<string, CustomType>; allowCustomGeo?: boolean } = {},
  ) {
    const add = (name: string, entry: Entry) =>
      this.types.set(name, Object.freeze({ name, stored: entry.is, ...entry }));
    for (const [name, entry] of Object.entries(BUILTIN)) add(name, entry);
    this.allowCustomGeo = options.allowCustomGeo ?? false;
    for (const name of Object.keys(GEO_TYPES)) {
      add(name, {
        base: name,
        is: (v) => geoJsonProblem(v, name, this.allowCustomGeo) === null,
        coerce: keep,
      });
    }
    for (const [name, type] of Object.entries(options.custom ?? {})) {
      if (!this.types.has(name)) add(name, { base: name, is: (v) => type.check(v), coerce: keep });
    }
  }

  /** The type called `name`, or undefined when there is none. */
  get(name: string): FieldType | undefined {
    return this.types.get(name);
  }

  /** Why `v` is not of the GeoJSON type `name`, for a precise message; null otherwise. */
  geoProblem(v: unknown, type: FieldType): string | null {
    return type.base in GEO_TYPES ? geoJsonProblem(v, type.base, this.allowCustomGeo) : null;
  }
}

/**
 * The value `v` becomes for a field of `types`: unchanged when a type accepts it as it is,
 * otherwise converted by the first type that can. Unconvertible values come back unchanged
 * (the type check then reports them).
 */
export function coerceTo(v: unknown, types: readonly FieldType[], ctx: CoerceContext): unknown {
  const fits = (t: FieldType) => ctx.compared ? t.stored(v) : t.is(v);
  if (v === null || types.length === 0 || types.some(fits)) return v;
  for (const type of types) {
    const converted = type.coerce(v, ctx);
    if (converted !== v) return converted;
  }
  return v;
}
