/**
 * Field type predicates and the string-to-BSON coercions done before validation.
 */
import { DBRef, Decimal128, ObjectId } from "../store/bson.ts";
import { parseDate } from "./dates.ts";
import { GEO_TYPES, geoJsonProblem } from "./geojson.ts";
import type { CustomType } from "./types.ts";

/** Built-in type names (GeoJSON ones included). */
export const BUILTIN_TYPES = new Set([
  "string",
  "integer",
  "float",
  "number",
  "boolean",
  "list",
  "dict",
  "datetime",
  "date",
  "objectid",
  "decimal128",
  // Eve's name for Decimal128.
  "decimal",
  "dbref",
  "media",
  "uuid",
  ...Object.keys(GEO_TYPES),
]);

const HEX24 = /^[0-9a-fA-F]{24}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|^[+-]?(Infinity|inf|NaN)$/i;

/** A plain JSON-like object (not an array, Date, ObjectId, byte array ...). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * A JSON DBRef: `{"$ref": "<collection>", "$id": <id>, "$db"?: "<database>"}`, the id a
 * string, number or 24-hex ObjectId, nothing else in it.
 */
export function isDbRefShape(v: unknown): v is { $ref: string; $id: unknown; $db?: string } {
  if (!isPlainObject(v) || typeof v.$ref !== "string" || !Object.hasOwn(v, "$id")) return false;
  if (v.$db !== undefined && typeof v.$db !== "string") return false;
  const id = v.$id;
  return (typeof id === "string" || typeof id === "number") &&
    Object.keys(v).every((k) => k === "$ref" || k === "$id" || k === "$db");
}

/** The file object the service passes for `media` fields (its bytes, or its stored id). */
function isMedia(v: unknown): boolean {
  return isPlainObject(v) && typeof v.filename === "string" &&
    typeof v.contentType === "string" &&
    (v.data instanceof Uint8Array || v.id instanceof ObjectId);
}

/** Checks values against type names; built once per compiled schema. */
export class TypeChecker {
  constructor(
    private readonly custom: Record<string, CustomType>,
    private readonly allowCustomGeo: boolean,
  ) {}

  /** Whether `name` is a known type. */
  knows(name: string): boolean {
    return BUILTIN_TYPES.has(name) || Object.hasOwn(this.custom, name);
  }

  /** Whether `v` is of type `name`. */
  is(v: unknown, name: string): boolean {
    switch (name) {
      case "string":
        return typeof v === "string";
      case "integer":
        // A safe integer: beyond 2^53 a JSON number is no longer the integer that was sent.
        return typeof v === "number" && Number.isSafeInteger(v);
      case "float":
      case "number":
        return typeof v === "number" && Number.isFinite(v);
      case "boolean":
        return typeof v === "boolean";
      case "list":
        return Array.isArray(v);
      case "dict":
        return isPlainObject(v);
      case "datetime":
      case "date":
        return v instanceof Date && !Number.isNaN(v.getTime());
      case "objectid":
        return v instanceof ObjectId;
      case "decimal128":
      case "decimal":
        return v instanceof Decimal128;
      case "dbref":
        return v instanceof DBRef;
      case "media":
        return isMedia(v);
      case "uuid":
        return typeof v === "string" && UUID.test(v);
    }
    if (name in GEO_TYPES) return geoJsonProblem(v, name, this.allowCustomGeo) === null;
    return Object.hasOwn(this.custom, name) && this.custom[name].check(v) === true;
  }

  /** Whether `v` is of any of `names`. */
  isAny(v: unknown, names: string[]): boolean {
    return names.some((n) => this.is(v, n));
  }

  /** Why `v` is not of the single GeoJSON type `name`, for a precise message. */
  geoProblem(v: unknown, name: string): string | null {
    return name in GEO_TYPES ? geoJsonProblem(v, name, this.allowCustomGeo) : null;
  }
}

/**
 * Converts a JSON value to the BSON/Date value one of `types` expects, when no type of the
 * list accepts the value as it is. Unconvertible values are returned unchanged (the type
 * check then reports them).
 */
export function coerce(v: unknown, types: string[], tc: TypeChecker, dateFormat: string): unknown {
  if (v === null || types.length === 0 || tc.isAny(v, types)) return v;
  for (const t of types) {
    if ((t === "datetime" || t === "date") && typeof v === "string") {
      const d = parseDate(v, dateFormat) ?? (t === "date" ? parseDate(v, "%Y-%m-%d") : null);
      if (d) return d;
    } else if (t === "objectid" && typeof v === "string" && HEX24.test(v)) {
      return new ObjectId(v);
    } else if (t === "dbref" && isDbRefShape(v)) {
      const id = typeof v.$id === "string" && HEX24.test(v.$id) ? new ObjectId(v.$id) : v.$id;
      return new DBRef(v.$ref, id as ObjectId, v.$db as string | undefined);
    } else if (t === "decimal128" || t === "decimal") {
      const s = typeof v === "number" && Number.isFinite(v) ? String(v) : v;
      if (typeof s === "string" && s.length <= 64 && DECIMAL.test(s)) {
        try {
          return Decimal128.fromString(s);
        } catch {
          // not representable: leave it to the type check
        }
      }
    }
  }
  return v;
}
