/**
 * Schema validation engine: compiles Eve/Cerberus resource schemas once at start-up (ajv
 * plus a few custom checks) and validates documents for create, replace and patch.
 *
 * @module
 */
export { compileSchema, showValue } from "./validator.ts";
export { findBatchDuplicates } from "./batch.ts";
export { checkDateFormat, formatDate, parseDate, RFC1123 } from "./dates.ts";
export { GEO_TYPES, geoJsonProblem } from "../domain/geojson.ts";
export {
  type Coercer,
  type CompiledSchema,
  type CompileOptions,
  type CustomRule,
  type CustomType,
  type DefaultSetter,
  type Issues,
  SchemaError,
  type ValidationContext,
} from "./types.ts";
