/** Shared helpers for the validation tests. */
import type { DataRelation } from "../../src/domain/types.ts";
import type { Doc } from "../../src/store/store.ts";
import {
  type CompiledSchema,
  type CompileOptions,
  compileSchema,
  type Issues,
  type ValidationContext,
} from "../../src/validation/mod.ts";

export const OPTIONS: CompileOptions = {
  path: "DOMAIN.test.schema",
  allowUnknown: false,
  dateFormat: "%a, %d %b %Y %H:%M:%S GMT",
  allowCustomFieldsInGeojson: false,
  metaFields: ["_id", "_created", "_updated", "_etag", "_deleted", "_version"],
  idField: "_id",
};

/** Compiles with the default test options, overridden by `extra`. */
export function compile(schema: Record<string, Doc>, extra: Partial<CompileOptions> = {}) {
  return compileSchema(schema, { ...OPTIONS, ...extra });
}

/** A context whose duplicates and existing references are given as sets of "field=value". */
export function ctx(
  mode: ValidationContext["mode"] = "create",
  opts: { original?: Doc; dups?: string[]; exists?: string[]; mergeNested?: boolean } = {},
): ValidationContext & { calls: string[] } {
  const calls: string[] = [];
  return {
    mode,
    original: opts.original,
    mergeNested: opts.mergeNested,
    calls,
    isDuplicate(field: string, value: unknown, excludeId?: unknown) {
      calls.push(`dup ${field}=${String(value)} excl=${String(excludeId)}`);
      return Promise.resolve((opts.dups ?? []).includes(`${field}=${String(value)}`));
    },
    relationExists(rel: DataRelation, value: unknown) {
      const v = typeof value === "object" && value !== null && !("toHexString" in value)
        ? JSON.stringify(value)
        : String(value);
      calls.push(`rel ${rel.resource}.${rel.field}=${v}`);
      return Promise.resolve((opts.exists ?? []).includes(`${rel.resource}=${v}`));
    },
  };
}

/** Validates a document in create mode and returns only the issues. */
export async function issuesOf(
  schema: CompiledSchema,
  doc: Doc,
  c: ValidationContext = ctx(),
): Promise<Issues | null> {
  return (await schema.validate(doc, c)).issues;
}
